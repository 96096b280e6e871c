package interop_test

import (
	json "encoding/json/v2"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// modernProtocolVersion is the revision ts/modern_client.mjs pins.
const modernProtocolVersion = "2026-07-28"

// tsModernChecks are the checks ts/modern_client.mjs reports, in order.
var tsModernChecks = []string{
	"connect", "tools_list", "echo", "elicitation", "sampling", "roots",
	"multi_round", "multiple_inputs", "concurrent", "progress", "prompt_input",
	"listen", "close",
}

// TestModernTypeScriptClient runs ts/modern_client.mjs, the official
// TypeScript client 2.x at protocol revision 2026-07-28, with the Node
// pinned in conformance/modern, against a fresh `mcp-actors serve`; one
// subtest per check it reports. Without conformance/modern/node_modules it
// skips, unless CI is set.
func TestModernTypeScriptClient(t *testing.T) {
	modernNodeJS(t)
	srv := startServer(t)
	runModernTSClient(t, srv.url)
}

// TestClusterModernTypeScriptClient runs the same checks through a
// round-robin proxy over three nodes: every request, every retry of an
// input_required round and the subscriptions/listen stream go to the next
// node.
func TestClusterModernTypeScriptClient(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	modernNodeJS(t)
	nodes := startCluster(t)
	runModernTSClient(t, startProxy(t, nodes))
}

// modernNodeJS returns the Node binary of conformance/modern and the
// repository root, after checking that the TypeScript client 2.x is
// installed there; without them the test skips, unless CI is set.
func modernNodeJS(t *testing.T) (node, root string) {
	t.Helper()
	return nodeJSIn(t, "conformance/modern", "@modelcontextprotocol", "client", "package.json")
}

// runModernTSClient runs ts/modern_client.mjs against url, one subtest per
// check it reports, and checks that it reported every one of
// tsModernChecks, stateless at 2026-07-28, and exited 0.
func runModernTSClient(t *testing.T, url string) {
	t.Helper()
	node, root := modernNodeJS(t)
	details := runChecks(t, node, filepath.Join(root, "tests", "interop", "ts", "modern_client.mjs"), url, nil, tsTimeout, tsModernChecks)
	if d, ok := details["connect"]; ok {
		// Stateless: the revision is 2026-07-28 and there is no session.
		var c struct {
			ProtocolVersion string  `json:"protocolVersion"`
			SessionID       *string `json:"sessionId"`
		}
		require.NoError(t, json.Unmarshal(d, &c), "connect detail")
		assert.Equal(t, modernProtocolVersion, c.ProtocolVersion, "negotiated protocol version")
		assert.Nil(t, c.SessionID, "session ID")
	}
}
