package session_test

import (
	"context"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/actors/session"
	"github.com/mcp-actors/mcp-actors/harness"
	"github.com/mcp-actors/mcp-actors/messages"
)

// blocker is a tool that reports when it starts and when its context ends,
// and otherwise waits for release.
type blocker struct {
	started   chan messages.ID
	cancelled chan messages.ID
	release   chan struct{}
}

func newBlocker() *blocker {
	return &blocker{started: make(chan messages.ID, 16), cancelled: make(chan messages.ID, 16), release: make(chan struct{})}
}

func (b *blocker) run(ctx context.Context, s *mcpactors.Session, req *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
	var args struct {
		Block bool `json:"block"`
	}
	_ = json.Unmarshal(req.Arguments, &args)
	if !args.Block {
		return text("quick"), nil
	}
	b.started <- s.RequestID()
	select {
	case <-ctx.Done():
		b.cancelled <- s.RequestID()
		return nil, ctx.Err()
	case <-b.release:
		return text("released"), nil
	}
}

func TestClientCancelsARequest(t *testing.T) {
	ctx := context.Background()
	b := newBlocker()
	c := harness.New(t, newServer(t, b.run)).Connect()

	id := messages.StringID("slow-1")
	require.NoError(t, c.SendRequest(id, messages.MethodCallTool, map[string]any{"name": "run", "arguments": map[string]bool{"block": true}}))
	require.Equal(t, id, <-b.started)
	c.Cancel(id, "user pressed stop")
	require.Equal(t, id, <-b.cancelled, "the handler's context is cancelled")

	// The session goes on, and no response is ever sent for the cancelled
	// request: the ping's answer comes after anything the handler's end
	// could have produced.
	assert.Equal(t, "quick", callRun(t, c, nil))
	_, err := c.Call(ctx, messages.MethodPing, nil)
	require.NoError(t, err)
	for _, r := range c.Received() {
		assert.NotEqual(t, id, r.Msg.ID, "no response for a cancelled request")
	}
}

func TestSlowHandlerBlocksNothing(t *testing.T) {
	ctx := context.Background()
	b := newBlocker()
	type answer struct {
		Name string `json:"name"`
	}
	srv := newServer(t, b.run)
	require.NoError(t, srv.AddTool(&messages.Tool{Name: "ask", Description: "elicits"},
		func(ctx context.Context, s *mcpactors.Session, req *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			var a answer
			action, err := s.Elicit(ctx, "name?", &a)
			if err != nil {
				return nil, err
			}
			return text(string(action) + ":" + a.Name), nil
		}))
	c := harness.New(t, srv).Connect(harness.WithElicitation(func(*messages.ElicitParams) (*messages.ElicitResult, error) {
		return &messages.ElicitResult{Action: messages.ElicitAccept, Content: jsontext.Value(`{"name":"ada"}`)}, nil
	}))

	slow := messages.StringID("slow")
	require.NoError(t, c.SendRequest(slow, messages.MethodCallTool, map[string]any{"name": "run", "arguments": map[string]bool{"block": true}}))
	<-b.started
	// While the slow handler holds on, other requests, a server-to-client
	// round trip and a cancel of the same session all go through.
	assert.Equal(t, "quick", callRun(t, c, nil))
	var res messages.CallToolResult
	require.NoError(t, c.CallResult(ctx, messages.MethodCallTool, map[string]any{"name": "ask"}, &res))
	assert.Equal(t, "accept:ada", res.Content[0].(*messages.TextContent).Text)
	_, err := c.Call(ctx, messages.MethodPing, nil)
	require.NoError(t, err)
	c.Cancel(slow, "")
	<-b.cancelled
}

func TestCancelledHandlerCancelsItsOutboundCall(t *testing.T) {
	ctx := context.Background()
	type answer struct {
		Name string `json:"name"`
	}
	outcome := make(chan error, 1)
	srv := newServer(t, func(ctx context.Context, s *mcpactors.Session, req *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
		var a answer
		_, err := s.Elicit(ctx, "name?", &a)
		outcome <- err
		return nil, err
	})
	c := harness.New(t, srv).Connect(harness.WithCapabilities(messages.ClientCapabilities{
		Elicitation: &messages.ElicitationCapabilities{Form: &messages.Empty{}},
	}))
	id := messages.IntID(42)
	require.NoError(t, c.SendRequest(id, messages.MethodCallTool, map[string]any{"name": "run"}))
	req, err := c.WaitRequest(ctx, messages.MethodElicit, 0)
	require.NoError(t, err)
	assert.Equal(t, `"42"`, `"`+req.Stream+`"`, "the elicitation travels on the tool call's stream")

	c.Cancel(id, "stop")
	require.ErrorIs(t, <-outcome, context.Canceled)
	n, err := c.WaitNotification(ctx, messages.MethodCancelled, 0)
	require.NoError(t, err)
	var p messages.CancelledParams
	require.NoError(t, json.Unmarshal(n.Msg.Params, &p))
	assert.Equal(t, req.Msg.ID, p.RequestID, "the server cancels its own pending elicitation")

	// A late answer to the cancelled elicitation is ignored.
	require.NoError(t, c.Respond(req.Msg.ID, &messages.ElicitResult{Action: messages.ElicitDecline}))
	_, err = c.Call(ctx, messages.MethodPing, nil)
	require.NoError(t, err)
}

func TestClientCancelsAnOutboundCall(t *testing.T) {
	ctx := context.Background()
	outcome := make(chan error, 1)
	srv := newServer(t, func(ctx context.Context, s *mcpactors.Session, req *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
		_, err := s.CreateMessage(ctx, &messages.CreateMessageParams{MaxTokens: 5})
		outcome <- err
		return text("after"), nil
	})
	c := harness.New(t, srv).Connect(harness.WithCapabilities(messages.ClientCapabilities{Sampling: &messages.SamplingCapabilities{}}))
	// The spec scopes a client's notifications/cancelled to the client's own
	// requests, so a client request with the same ID would win; use another.
	require.NoError(t, c.SendRequest(messages.StringID("call"), messages.MethodCallTool, map[string]any{"name": "run"}))
	req, err := c.WaitRequest(ctx, messages.MethodCreateMessage, 0)
	require.NoError(t, err)
	c.Cancel(req.Msg.ID, "user declined")
	err = <-outcome
	require.ErrorIs(t, err, session.ErrRemoteCancelled)
	assert.Contains(t, err.Error(), "user declined")
}

func TestCloseFailsPendingCallsAndCancelsHandlers(t *testing.T) {
	ctx := context.Background()
	b := newBlocker()
	outcome := make(chan error, 1)
	srv := newServer(t, b.run)
	require.NoError(t, srv.AddTool(&messages.Tool{Name: "roots", Description: "lists roots"},
		func(ctx context.Context, s *mcpactors.Session, req *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			_, err := s.ListRoots(ctx)
			outcome <- err
			return nil, err
		}))
	c := harness.New(t, srv).Connect(harness.WithCapabilities(messages.ClientCapabilities{Roots: &messages.RootsCapabilities{}}))
	require.NoError(t, c.SendRequest(messages.IntID(10), messages.MethodCallTool, map[string]any{"name": "run", "arguments": map[string]bool{"block": true}}))
	require.NoError(t, c.SendRequest(messages.IntID(11), messages.MethodCallTool, map[string]any{"name": "roots"}))
	<-b.started
	_, err := c.WaitRequest(ctx, messages.MethodListRoots, 0)
	require.NoError(t, err)

	c.Close()
	require.ErrorIs(t, <-outcome, session.ErrSessionClosed)
	<-b.cancelled
}
