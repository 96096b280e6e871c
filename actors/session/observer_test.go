package session_test

import (
	"context"
	json "encoding/json/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/harness"
	"github.com/mcp-actors/mcp-actors/messages"
)

// outcomeObserver passes on the reports of tools/call requests.
type outcomeObserver struct{ calls chan mcpactors.RequestReport }

func (o outcomeObserver) RequestHandled(r mcpactors.RequestReport) {
	if r.Method == messages.MethodCallTool {
		o.calls <- r
	}
}
func (outcomeObserver) PendingCalls(int)   {}
func (outcomeObserver) EventsReplayed(int) {}

// TestRequestOutcomes checks what the Observer is told of a request: ok
// for one answered, with or without frames before its answer, error for a
// tool result with isError (sent as a result all the same), and cancelled
// only for one the client cancelled; each with the tool's name.
func TestRequestOutcomes(t *testing.T) {
	obs := outcomeObserver{calls: make(chan mcpactors.RequestReport, 4)}
	started := make(chan struct{}, 1)
	srv := mcpactors.NewServer(messages.Implementation{Name: "outcomes", Version: "1"}, &mcpactors.Options{Observer: obs})
	require.NoError(t, srv.AddTool(&messages.Tool{Name: "run"}, func(ctx context.Context, s *mcpactors.Session, req *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
		var args struct {
			Mode string `json:"mode"`
		}
		_ = json.Unmarshal(req.Arguments, &args)
		switch args.Mode {
		case "progress":
			_ = s.Progress(ctx, 1, 2, "half")
		case "wait":
			started <- struct{}{}
			<-ctx.Done()
			return nil, ctx.Err()
		case "fail":
			return &messages.CallToolResult{IsError: true, Content: messages.ContentList{&messages.TextContent{Text: "failed"}}}, nil
		}
		return text("done"), nil
	}))
	c := harness.New(t, srv).Connect()
	outcome := func() mcpactors.Outcome {
		select {
		case r := <-obs.calls:
			assert.Equal(t, "run", r.Tool)
			if r.Outcome != mcpactors.OutcomeCancelled {
				assert.Positive(t, r.Duration)
			}
			return r.Outcome
		case <-time.After(10 * time.Second):
			t.Fatal("no outcome reported")
			return ""
		}
	}

	assert.Equal(t, "done", callRun(t, c, map[string]string{"mode": "plain"}))
	assert.Equal(t, mcpactors.OutcomeOK, outcome(), "answered at once")

	assert.Equal(t, "done", callRun(t, c, map[string]string{"mode": "progress"}))
	assert.Equal(t, mcpactors.OutcomeOK, outcome(), "answered after a progress notification")

	assert.Equal(t, "failed", callRun(t, c, map[string]string{"mode": "fail"}))
	assert.Equal(t, mcpactors.OutcomeError, outcome(), "a tool result with isError")

	id := messages.StringID("wait")
	require.NoError(t, c.SendRequest(id, messages.MethodCallTool, map[string]any{"name": "run", "arguments": map[string]string{"mode": "wait"}}))
	<-started
	c.Cancel(id, "test")
	assert.Equal(t, mcpactors.OutcomeCancelled, outcome(), "cancelled by the client")
}
