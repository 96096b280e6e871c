package harness_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/harness"
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
		if _, ok := srv.Session(c.ID()); ok {
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
