package concurrency_test

import (
	"context"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/actors/session"
	"github.com/mcp-actors/mcp-actors/harness"
	"github.com/mcp-actors/mcp-actors/internal/access"
	"github.com/mcp-actors/mcp-actors/messages"
)

const (
	sessions        = 1000 // sessions per test
	callsPerSession = 4    // concurrent calls per session
	workers         = 64   // sessions driven at once
)

// newServer has three tools: "sample" asks the client to sample its prompt
// back; "block" waits for its context and reports the cancellation; "wait"
// elicits and reports how the elicitation ended.
func newServer(t *testing.T, cancelled chan<- struct{}, ended chan<- error) *mcpactors.Server {
	t.Helper()
	srv := mcpactors.NewServer(messages.Implementation{Name: "stress", Version: "1"}, nil)
	type prompt struct {
		Prompt string `json:"prompt"`
	}
	require.NoError(t, mcpactors.AddTypedTool(srv, &messages.Tool{Name: "sample", Description: "samples"},
		func(ctx context.Context, s *mcpactors.Session, in prompt) (*messages.CallToolResult, any, error) {
			res, err := s.CreateMessage(ctx, &messages.CreateMessageParams{
				MaxTokens: 10,
				Messages:  []*messages.SamplingMessage{{Role: messages.RoleUser, Content: messages.ContentList{&messages.TextContent{Text: in.Prompt}}}},
			})
			if err != nil {
				return nil, nil, err
			}
			return &messages.CallToolResult{Content: res.Content}, nil, nil
		}))
	require.NoError(t, srv.AddTool(&messages.Tool{Name: "block", Description: "blocks"},
		func(ctx context.Context, s *mcpactors.Session, req *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			<-ctx.Done()
			cancelled <- struct{}{}
			return nil, ctx.Err()
		}))
	require.NoError(t, srv.AddTool(&messages.Tool{Name: "wait", Description: "elicits"},
		func(ctx context.Context, s *mcpactors.Session, req *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			var v struct {
				X string `json:"x"`
			}
			_, err := s.Elicit(ctx, "x?", &v)
			ended <- err
			return nil, err
		}))
	return srv
}

// forEachSession runs fn for n sessions, workers at a time.
func forEachSession(t *testing.T, h *harness.Harness, n int, opts []harness.Option, fn func(i int, c *harness.Client) error) {
	t.Helper()
	var g errgroup.Group
	g.SetLimit(workers)
	for i := range n {
		g.Go(func() error {
			c := h.Connect(opts...)
			defer c.Close()
			return fn(i, c)
		})
	}
	require.NoError(t, g.Wait())
}

var samplingCaps = harness.WithCapabilities(messages.ClientCapabilities{
	Sampling:    &messages.SamplingCapabilities{},
	Elicitation: &messages.ElicitationCapabilities{Form: &messages.Empty{}},
})

func TestOutOfOrderAnswers(t *testing.T) {
	ctx := context.Background()
	h := harness.New(t, newServer(t, nil, nil))
	forEachSession(t, h, sessions, []harness.Option{samplingCaps}, func(i int, c *harness.Client) error {
		for k := range callsPerSession {
			id := callID(k)
			if err := c.SendRequest(id, messages.MethodCallTool, map[string]any{
				"name": "sample", "arguments": map[string]string{"prompt": fmt.Sprintf("s%d-c%d", i, k)},
			}); err != nil {
				return err
			}
		}
		// Collect every sampling request first, then answer them newest
		// first: each must still reach the call that made it.
		var reqs []*harness.Received
		from := 0
		for range callsPerSession {
			r, err := c.WaitRequest(ctx, messages.MethodCreateMessage, from)
			if err != nil {
				return fmt.Errorf("session %d: %w", i, err)
			}
			reqs = append(reqs, r)
			from = r.Seq + 1
		}
		for j := len(reqs) - 1; j >= 0; j-- {
			var p messages.CreateMessageParams
			if err := json.Unmarshal(reqs[j].Msg.Params, &p); err != nil {
				return err
			}
			echo := p.Messages[0].Content[0].(*messages.TextContent).Text
			if err := c.Respond(reqs[j].Msg.ID, &messages.CreateMessageResult{
				Role: messages.RoleAssistant, Model: "m", Content: messages.ContentList{&messages.TextContent{Text: echo}},
			}); err != nil {
				return err
			}
		}
		for k := range callsPerSession {
			r, err := c.WaitResponse(ctx, callID(k), 0)
			if err != nil {
				return fmt.Errorf("session %d call %d: %w", i, k, err)
			}
			want := fmt.Sprintf(`"text":"s%d-c%d"`, i, k)
			if r.Msg.Error != nil || !jsontext.Value(r.Msg.Result).IsValid() || !strings.Contains(string(r.Msg.Result), want) {
				return fmt.Errorf("session %d call %d: got %s, want %s", i, k, r.Raw, want)
			}
		}
		return nil
	})
}

// TestCancellationStorm cancels every call of 1,000 sessions while the
// calls run: each session must go on serving and never answer a cancelled
// call, however late its handler ends. Closing a session with a grace
// period makes it drain (it ends only once every running handler has
// reported back), so once it has ended, its whole transcript is in and is
// checked.
func TestCancellationStorm(t *testing.T) {
	ctx := context.Background()
	cancelled := make(chan struct{}, sessions*callsPerSession)
	h := harness.New(t, newServer(t, cancelled, nil))
	forEachSession(t, h, sessions, nil, func(i int, c *harness.Client) error {
		for k := range callsPerSession {
			if err := c.SendRequest(callID(k), messages.MethodCallTool, map[string]any{"name": "block"}); err != nil {
				return err
			}
		}
		for k := range callsPerSession {
			c.Cancel(callID(k), "storm")
		}
		// The session still serves.
		if _, err := c.Call(ctx, messages.MethodPing, nil); err != nil {
			return fmt.Errorf("session %d: ping after the cancellations: %w", i, err)
		}
		// A grace longer than any wait here: the session ends when its last
		// handler has reported back (at once if none is left), so once it
		// has ended every cancelled call's outcome has gone through it.
		drain := &messages.CloseSession{Reason: "storm over", Grace: time.Hour}
		if err := access.Router(h.Server).Deliver(ctx, c.ID(), drain); err != nil {
			return fmt.Errorf("session %d: %w", i, err)
		}
		select {
		case <-c.Done():
		case <-time.After(drainTimeout):
			return fmt.Errorf("session %d: still running %s after the cancellations: a cancelled handler did not end", i, drainTimeout)
		}
		c.Close() // everything the session sent is in the transcript
		for _, r := range c.Received() {
			if r.Msg != nil && r.Msg.ID.IsString() {
				return fmt.Errorf("session %d: a cancelled call was answered: %s", i, r.Raw)
			}
		}
		return nil
	})
	for range sessions * callsPerSession {
		<-cancelled // every handler saw its context end (each sent before it returned)
	}
}

// drainTimeout bounds the wait for a session whose handlers were all
// cancelled to finish draining.
const drainTimeout = 30 * time.Second

func TestCloseWhilePending(t *testing.T) {
	ctx := context.Background()
	ended := make(chan error, sessions*callsPerSession)
	h := harness.New(t, newServer(t, nil, ended))
	forEachSession(t, h, sessions, []harness.Option{samplingCaps}, func(i int, c *harness.Client) error {
		for k := range callsPerSession {
			if err := c.SendRequest(callID(k), messages.MethodCallTool, map[string]any{"name": "wait"}); err != nil {
				return err
			}
		}
		from := 0
		for range callsPerSession {
			r, err := c.WaitRequest(ctx, messages.MethodElicit, from)
			if err != nil {
				return err
			}
			from = r.Seq + 1
		}
		c.Close() // with every elicitation pending
		return nil
	})
	var mu sync.Mutex
	kinds := map[string]int{}
	for range sessions * callsPerSession {
		err := <-ended
		mu.Lock()
		switch {
		case errors.Is(err, session.ErrSessionClosed):
			kinds["closed"]++
		case errors.Is(err, context.Canceled):
			kinds["cancelled"]++ // the handler's context ended first
		default:
			kinds[fmt.Sprint(err)]++
		}
		mu.Unlock()
	}
	assert.Equal(t, sessions*callsPerSession, kinds["closed"]+kinds["cancelled"], "every pending call failed with the session: %v", kinds)
	assert.Zero(t, h.Server.OpenSessions())
}

// callID names the k-th call of a session (strings: the harness's own
// requests use numbers).
func callID(k int) messages.ID { return messages.StringID(fmt.Sprintf("call-%d", k)) }
