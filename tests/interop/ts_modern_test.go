package interop_test

import (
	"bufio"
	"bytes"
	"context"
	json "encoding/json/v2"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

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
// installed there; without them the test skips, unless CI is set (as
// nodeJS does for conformance/).
func modernNodeJS(t *testing.T) (node, root string) {
	t.Helper()
	root, err := filepath.Abs(repoRoot)
	require.NoError(t, err)
	modules := filepath.Join(root, "conformance", "modern", "node_modules")
	node = filepath.Join(modules, ".bin", "node")
	for _, path := range []string{node, filepath.Join(modules, "@modelcontextprotocol", "client", "package.json")} {
		if _, err := os.Stat(path); err != nil {
			msg := "the test needs conformance/modern/node_modules (" + err.Error() + "); install it with: cd conformance/modern && npm ci"
			if os.Getenv("CI") != "" {
				t.Fatal(msg + " (CI is set, so this fails instead of skipping)")
			}
			t.Skip(msg)
		}
	}
	return node, root
}

// runModernTSClient runs ts/modern_client.mjs against url, one subtest per
// check it reports, and checks that it reported every one of
// tsModernChecks and exited 0.
func runModernTSClient(t *testing.T, url string) {
	t.Helper()
	node, root := modernNodeJS(t)
	ctx, cancel := context.WithTimeout(t.Context(), tsTimeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, node, filepath.Join(root, "tests", "interop", "ts", "modern_client.mjs"), url)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	runErr := cmd.Run()
	defer func() {
		if t.Failed() {
			t.Logf("client stderr (transcript):\n%s", stderr.String())
		}
	}()

	reported := map[string]bool{}
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var c tsCheck
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil || c.Check == "" || c.OK == nil {
			assert.Fail(t, "not a check line", "%q", sc.Text())
			continue
		}
		reported[c.Check] = true
		t.Run(c.Check, func(t *testing.T) {
			if !*c.OK {
				t.Errorf("failed: %s", c.Detail)
				return
			}
			if string(c.Detail) != "null" {
				t.Logf("%s", c.Detail)
			}
			if c.Check == "connect" {
				// Stateless: the revision is 2026-07-28 and there is no session.
				var d struct {
					ProtocolVersion string  `json:"protocolVersion"`
					SessionID       *string `json:"sessionId"`
				}
				require.NoError(t, json.Unmarshal(c.Detail, &d), "connect detail")
				assert.Equal(t, modernProtocolVersion, d.ProtocolVersion, "negotiated protocol version")
				assert.Nil(t, d.SessionID, "session ID")
			}
		})
	}
	require.NoError(t, sc.Err())
	for _, name := range tsModernChecks {
		assert.True(t, reported[name], "the client reported no check %q", name)
	}
	var exitErr *exec.ExitError
	switch {
	case runErr == nil:
	case errors.As(runErr, &exitErr):
		assert.Fail(t, "the client failed", "%v (ctx: %v)", runErr, ctx.Err())
	default:
		require.NoError(t, runErr, "running the client")
	}
}
