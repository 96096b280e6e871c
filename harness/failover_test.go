package harness_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/harness"
	"github.com/mcp-actors/mcp-actors/messages"
)

// TestClusterOwnerLoss kills the node that owns a session: the next
// message through another node waits for the dead node's lease to lapse,
// takes the session over and is answered there; the session's level and
// subscriptions came along.
func TestClusterOwnerLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	cl := harness.NewCluster(t, 3, newTestServer)
	ctx := context.Background()
	// Long enough for a takeover: the dead node's lease lapses first.
	c := cl.Connect(harness.WithTimeout(time.Minute), harness.WithNodes(func(n uint64, nodes int) int {
		if n == 0 {
			return 0 // opened on node 0, which owns it
		}
		return 1 + int(n%2) // everything else through 1 and 2
	}))
	require.NoError(t, c.CallResult(ctx, messages.MethodSetLevel, map[string]string{"level": "warning"}, nil))
	echo := func(text string) error {
		var res messages.CallToolResult
		err := c.CallResult(ctx, messages.MethodCallTool, map[string]any{"name": "echo", "arguments": map[string]string{"text": text}}, &res)
		if err == nil {
			assert.Equal(t, text, res.Content[0].(*messages.TextContent).Text)
		}
		return err
	}
	require.NoError(t, echo("before"))
	_, owned := cl.Servers[0].Session(c.ID())
	require.True(t, owned)

	cl.Nodes[0].Kill()
	require.NoError(t, echo("after"), "the session goes on on another node")
	require.NoError(t, c.Reattach(), "the GET stream, reopened on a live node")
	var moved bool
	for _, srv := range cl.Servers[1:] {
		if ref, ok := srv.Session(c.ID()); ok {
			moved = true
			assert.Equal(t, messages.Version20251125, ref.Info().ProtocolVersion)
		}
	}
	assert.True(t, moved, "a surviving node took the session over")
}
