package interop_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json/jsontext"
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

const (
	// tsTimeout bounds one run of the TypeScript client.
	tsTimeout = 2 * time.Minute
	// repoRoot is the module root, relative to this package's directory
	// (where go test runs it).
	repoRoot = "../.."
)

// tsChecks are the checks ts/client.mjs reports, in order.
var tsChecks = []string{
	"connect", "tools_list", "echo", "sampling", "elicitation_accept", "roots",
	"progress", "logging", "list_changed", "resources_read", "resources_subscribe",
	"prompts_get", "abort", "reconnection", "close",
}

// tsCheck is one line of ts/client.mjs's output.
type tsCheck struct {
	Check  string         `json:"check"`
	OK     *bool          `json:"ok"`
	Detail jsontext.Value `json:"detail"`
}

// TestTypeScriptClient runs ts/client.mjs, the official TypeScript SDK
// client, with the Node pinned in conformance/, against a fresh `mcp-actors
// serve`; one subtest per check it reports. Without conformance/
// node_modules it skips, unless CI is set.
func TestTypeScriptClient(t *testing.T) {
	srv := startServer(t)
	runTSClient(t, srv, srv.url)
}

// nodeJS returns the Node binary of conformance/ and the repository root,
// after checking that the package the test needs is installed; without it
// the test skips, unless CI is set.
func nodeJS(t *testing.T, pkg ...string) (node, root string) {
	t.Helper()
	return nodeJSIn(t, "conformance", pkg...)
}

// nodeJSIn is nodeJS for the Node installed in dir (relative to the
// repository root: conformance, or conformance/modern).
func nodeJSIn(t *testing.T, dir string, pkg ...string) (node, root string) {
	t.Helper()
	root, err := filepath.Abs(repoRoot)
	require.NoError(t, err)
	modules := filepath.Join(root, filepath.FromSlash(dir), "node_modules")
	node = filepath.Join(modules, ".bin", "node")
	need := filepath.Join(append([]string{modules}, pkg...)...)
	for _, path := range []string{node, need} {
		if _, err := os.Stat(path); err != nil {
			msg := "the test needs " + dir + "/node_modules (" + err.Error() + "); install it with: cd " + dir + " && npm ci"
			if os.Getenv("CI") != "" {
				t.Fatal(msg + " (CI is set, so this fails instead of skipping)")
			}
			t.Skip(msg)
		}
	}
	return node, root
}

// runTSClient runs ts/client.mjs against url, one subtest per check it
// reports; srv is asked afterwards whether it still serves.
func runTSClient(t *testing.T, srv *httpServer, url string) {
	t.Helper()
	runTSClientWith(t, func() *httpServer { return srv }, url, nil)
}

// runTSClientWith is runTSClient with more of the client's environment,
// more checks it must report, and the server to ask at the end chosen then.
func runTSClientWith(t *testing.T, srv func() *httpServer, url string, env []string, more ...string) {
	t.Helper()
	node, root := nodeJS(t, "@modelcontextprotocol", "sdk", "package.json")
	details := runChecks(t, node, filepath.Join(root, "tests", "interop", "ts", "client.mjs"), url, env,
		tsTimeout+time.Duration(len(more))*time.Minute, append(tsChecks, more...))
	var sessionID string
	if d, ok := details["connect"]; ok {
		var c struct {
			SessionID string `json:"sessionId"`
		}
		assert.NoError(t, json.Unmarshal(d, &c), "connect detail")
		sessionID = c.SessionID
	}

	// The client ended its session with DELETE; the server serves on.
	if assert.NotEmpty(t, sessionID, "the client reported no session ID") {
		srv().assertServing(t, sessionID)
	}
}

// runChecks runs a client script that prints one check per line
// (ts/checks.mjs) with node against url, one subtest per check, and
// returns the details of those that passed, by name. It fails unless
// every one of want was reported and the script exited 0 within timeout.
func runChecks(t *testing.T, node, script, url string, env []string, timeout time.Duration, want []string) map[string]jsontext.Value {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, node, script, url)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	runErr := cmd.Run()
	defer func() {
		if t.Failed() {
			t.Logf("client stderr (transcript):\n%s", stderr.String())
		}
	}()

	details := map[string]jsontext.Value{}
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
		})
		if *c.OK {
			details[c.Check] = c.Detail
		}
	}
	require.NoError(t, sc.Err())
	for _, name := range want {
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
	return details
}
