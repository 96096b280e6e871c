package session_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/actors/session"
	"github.com/mcp-actors/mcp-actors/harness"
	"github.com/mcp-actors/mcp-actors/messages"
)

// outcomeObserver passes on the outcomes of tools/call requests.
type outcomeObserver struct{ calls chan session.Outcome }

func (o outcomeObserver) RequestHandled(method string, out session.Outcome, _ time.Duration) {
	if method == messages.MethodCallTool {
		o.calls <- out
	}
}
func (outcomeObserver) PendingCalls(int)   {}
func (outcomeObserver) EventsReplayed(int) {}

// TestRequestOutcomes checks what the Observer is told of a request: ok
// for one answered, with or without frames before its answer, and
// cancelled only for one the client cancelled.
func TestRequestOutcomes(t *testing.T) {
	obs := outcomeObserver{calls: make(chan session.Outcome, 4)}
	started := make(chan struct{}, 1)
	srv := mcpactors.NewServer(messages.Implementation{Name: "outcomes", Version: "1"}, &mcpactors.Options{Observer: obs})
	require.NoError(t, srv.AddTool(&messages.Tool{Name: "run"}, func(ctx context.Context, s *mcpactors.Session, req *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
		var args struct{ Mode string }
		_ = json.Unmarshal(req.Arguments, &args)
		switch args.Mode {
		case "progress":
			_ = s.Progress(ctx, 1, 2, "half")
		case "wait":
			started <- struct{}{}
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return text("done"), nil
	}))
	c := harness.New(t, srv).Connect()
	outcome := func() session.Outcome {
		select {
		case o := <-obs.calls:
			return o
		case <-time.After(10 * time.Second):
			t.Fatal("no outcome reported")
			return ""
		}
	}

	assert.Equal(t, "done", callRun(t, c, map[string]string{"mode": "plain"}))
	assert.Equal(t, session.OutcomeOK, outcome(), "answered at once")

	assert.Equal(t, "done", callRun(t, c, map[string]string{"mode": "progress"}))
	assert.Equal(t, session.OutcomeOK, outcome(), "answered after a progress notification")

	id := messages.StringID("wait")
	require.NoError(t, c.SendRequest(id, messages.MethodCallTool, map[string]any{"name": "run", "arguments": map[string]string{"mode": "wait"}}))
	<-started
	c.Cancel(id, "test")
	assert.Equal(t, session.OutcomeCancelled, outcome(), "cancelled by the client")
}
