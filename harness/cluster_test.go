package harness_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/actors/router"
	"github.com/mcp-actors/mcp-actors/harness"
	"github.com/mcp-actors/mcp-actors/internal/access"
	"github.com/mcp-actors/mcp-actors/messages"
)

// TestCluster drives sessions of a three-node in-process cluster: every
// message of a client goes through the next node, so the session's owner
// gets its requests, notifications and the answers to its own requests
// from all three, and its frames reach whichever node the request went
// through.
func TestCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	cl := harness.NewCluster(t, 3, newTestServer)
	ctx := context.Background()
	c := cl.Connect(
		harness.WithSampling(func(p *messages.CreateMessageParams) (*messages.CreateMessageResult, error) {
			return &messages.CreateMessageResult{Role: messages.RoleAssistant, Model: "m",
				Content: messages.ContentList{&messages.TextContent{Text: "sampled"}}}, nil
		}),
		harness.WithElicitation(func(*messages.ElicitParams) (*messages.ElicitResult, error) {
			return &messages.ElicitResult{Action: messages.ElicitAccept, Content: []byte(`{"name":"Ada"}`)}, nil
		}),
	)
	owner := -1
	for i, srv := range cl.Servers {
		if _, ok := access.Session(srv, c.ID()); ok {
			assert.Equal(t, -1, owner, "one owner")
			owner = i
		}
	}
	require.NotEqual(t, -1, owner, "the session lives on one node")

	for i := range 6 { // through every node, twice
		var res messages.CallToolResult
		require.NoError(t, c.CallResult(ctx, messages.MethodCallTool, map[string]any{"name": "echo", "arguments": map[string]string{"text": "hi"}}, &res))
		assert.Equal(t, "hi", res.Content[0].(*messages.TextContent).Text, "call %d", i)
	}
	for _, tool := range []string{"ask_llm", "ask_user"} {
		var res messages.CallToolResult
		args := map[string]any{"name": tool, "arguments": map[string]string{"prompt": "p"}}
		require.NoError(t, c.CallResult(ctx, messages.MethodCallTool, args, &res), tool)
		assert.False(t, res.IsError, "%s: %v", tool, res.Content)
	}

	t.Run("every message through one other node", func(t *testing.T) {
		via := (owner + 1) % 3
		c := cl.Connect(harness.WithNodes(func(n uint64, nodes int) int {
			if n == 0 {
				return owner // opened on the owner
			}
			return via
		}))
		var res messages.CallToolResult
		require.NoError(t, c.CallResult(ctx, messages.MethodCallTool, map[string]any{"name": "echo", "arguments": map[string]string{"text": "via"}}, &res))
		assert.Equal(t, "via", res.Content[0].(*messages.TextContent).Text)
	})
}

// TestClusterPrincipal: a session is bound to the principal that opened
// it on every node. Each message another principal sends through a node
// that does not own the session reaches the owner and is refused there
// exactly as a message for a session that does not exist is: the same
// error, the same stream signal. The session goes on for its principal.
func TestClusterPrincipal(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	cl := harness.NewCluster(t, 3, newTestServer)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := cl.Connect(harness.WithPrincipal("alice"))
	owner := -1
	for i, srv := range cl.Servers {
		if _, ok := access.Session(srv, c.ID()); ok {
			owner = i
		}
	}
	require.NotEqual(t, -1, owner)
	// A session of the same node that never existed: what mallory gets
	// must not tell the two apart.
	missing := c.ID()[:strings.IndexByte(c.ID(), '.')+1] + "nosuchsession"

	// outcome delivers m to id through rt and says what the sender saw,
	// as a transport tells its client: "not found" (404) for the
	// delivery's ErrSessionNotFound and for a stream told SignalNotFound.
	outcome := func(rt router.Router, id string, m func(sid messages.StreamID) messages.ActorMessage) string {
		q := router.NewQueue(ctx, 4, nil)
		sid := rt.Streams().Register(id, q)
		defer rt.Streams().Unregister(sid)
		if err := rt.Deliver(ctx, id, m(sid)); err != nil {
			if errors.Is(err, router.ErrSessionNotFound) {
				return "not found"
			}
			return err.Error()
		}
		batch, ok := q.Wait(ctx)
		if !ok {
			return "no answer"
		}
		if batch[0].Signal == messages.SignalNotFound {
			return "not found"
		}
		return fmt.Sprintf("signal %d", batch[0].Signal)
	}
	ping := &messages.Message{ID: messages.IntID(7), Method: messages.MethodPing}
	cases := map[string]func(sid messages.StreamID) messages.ActorMessage{
		"request": func(sid messages.StreamID) messages.ActorMessage {
			return &messages.HandleRequest{Principal: "mallory", Msg: ping, Stream: sid}
		},
		"notification": func(messages.StreamID) messages.ActorMessage {
			return &messages.HandleNotification{Principal: "mallory", Msg: &messages.Message{Method: "notifications/cancelled", Params: []byte(`{"requestId":1}`)}}
		},
		"answer": func(messages.StreamID) messages.ActorMessage {
			return &messages.DeliverResponse{Principal: "mallory", Msg: &messages.Message{ID: messages.IntID(1), Result: []byte(`{}`)}}
		},
		"GET stream": func(sid messages.StreamID) messages.ActorMessage {
			return &messages.AttachStream{Principal: "mallory", Stream: sid}
		},
		"DELETE": func(messages.StreamID) messages.ActorMessage {
			return &messages.DeleteSession{Principal: "mallory"}
		},
	}
	for i := range 3 {
		if i == owner {
			continue
		}
		rt := access.Router(cl.Servers[i])
		for name, m := range cases {
			got, want := outcome(rt, c.ID(), m), outcome(rt, missing, m)
			assert.Equal(t, want, got, "node %d, %s: another principal's session must read as an unknown one", i, name)
			assert.Equal(t, "not found", got, "node %d, %s", i, name)
		}
	}
	var res messages.CallToolResult
	require.NoError(t, c.CallResult(ctx, messages.MethodCallTool, map[string]any{"name": "echo", "arguments": map[string]string{"text": "still mine"}}, &res))
	assert.Equal(t, "still mine", res.Content[0].(*messages.TextContent).Text)
}
