package harness_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/harness"
	"github.com/mcp-actors/mcp-actors/internal/access"
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
	_, owned := access.Session(cl.Servers[0], c.ID())
	require.True(t, owned)

	cl.Nodes[0].Kill()
	require.NoError(t, echo("after"), "the session goes on on another node")
	require.NoError(t, c.Reattach(), "the GET stream, reopened on a live node")
	var moved bool
	for _, srv := range cl.Servers[1:] {
		if ref, ok := access.Session(srv, c.ID()); ok {
			moved = true
			assert.Equal(t, messages.Version20251125, ref.Info().ProtocolVersion)
		}
	}
	assert.True(t, moved, "a surviving node took the session over")
}

// TestClusterCatalogCatchUp: a catalog change made while a session has no
// node — its owner is dead, nobody has taken it over yet — reaches no one
// when it is broadcast. The node that takes the session over tells it
// what changed since its last State: tools/list_changed, and
// resources/updated for the resource it subscribes to.
func TestClusterCatalogCatchUp(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	const uri = "test://watched"
	cl := harness.NewCluster(t, 3, func(tb testing.TB) *mcpactors.Server {
		srv := newTestServer(tb)
		require.NoError(tb, srv.AddResource(&messages.Resource{URI: uri, Name: "watched"},
			func(context.Context, *mcpactors.Session, *mcpactors.ReadResourceRequest) (*messages.ReadResourceResult, error) {
				return &messages.ReadResourceResult{Contents: []*messages.ResourceContents{{URI: uri, Text: "v"}}}, nil
			}))
		return srv
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := cl.Connect(harness.WithTimeout(time.Minute), harness.WithNodes(func(n uint64, nodes int) int {
		if n == 0 {
			return 0 // opened on node 0, which owns it
		}
		return 1 + int(n%2)
	}))
	require.NoError(t, c.CallResult(ctx, messages.MethodSubscribe, map[string]string{"uri": uri}, nil))
	_, owned := access.Session(cl.Servers[0], c.ID())
	require.True(t, owned)

	cl.Nodes[0].Kill()
	// While the session has no node: a tool goes, the resource changes.
	require.NoError(t, cl.Servers[1].SetToolEnabled(ctx, "report", false))
	cl.Servers[1].NotifyResourceUpdated(uri)
	require.Eventually(t, func() bool { // every surviving node knows
		for _, srv := range cl.Servers[1:] {
			if srv.HasTool("report") || srv.ResourceVersion(uri) == 0 {
				return false
			}
		}
		return true
	}, 20*time.Second, 20*time.Millisecond)
	from := len(c.Received())

	_, err := c.Call(ctx, messages.MethodPing, nil)
	require.NoError(t, err, "the session is taken over")
	require.NoError(t, c.Reattach(), "the GET stream, reopened on a live node")
	_, err = c.WaitNotification(ctx, messages.MethodToolsListChanged, from)
	require.NoError(t, err, "the tool list changed while the session had no node")
	n, err := c.WaitNotification(ctx, messages.MethodResourceUpdated, from)
	require.NoError(t, err, "its resource changed while it had no node")
	assert.JSONEq(t, `{"uri":"`+uri+`"}`, string(n.Msg.Params))

	var tools messages.ListToolsResult
	require.NoError(t, c.CallResult(ctx, messages.MethodListTools, nil, &tools))
	for _, tool := range tools.Tools {
		assert.NotEqual(t, "report", tool.Name)
	}
}
