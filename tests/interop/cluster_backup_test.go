package interop_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestClusterBackupRestore follows docs/operations.md, "Backup and
// restore", against three `mcp-actors serve` processes: stop every node
// (SIGTERM), copy each --data-dir, wipe them, copy the backups back, start
// every node again.
//
// What the client sees: its session goes on after the restore, on every
// node, with what was acknowledged before the backup: its counter
// (per-session data) goes on from the last value it was told, and the
// catalog change it made is still in force. The control: the same wipe
// without the restore loses the session (every node answers 404 for it),
// so the test tells a restore from a cluster that kept its state elsewhere.
func TestClusterBackupRestore(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster three times")
	}
	args, dirs := threeNodeArgs(t)
	c := startFaultCluster(t, args)

	a := c.connect("alice", 0)
	var last int
	for range 3 {
		last = a.count("before the backup")
	}
	on := a.toggle("before the backup")
	a.acrossAll("before the backup")

	// Back up: stop every node, copy each data directory.
	c.stopAll()
	backup := t.TempDir()
	for i, d := range dirs {
		require.NoError(t, os.CopyFS(filepath.Join(backup, strconv.Itoa(i)), os.DirFS(d)), "backing up n%d", i+1)
	}

	// The control: wiped, the cluster has forgotten the session.
	wipe(t, dirs)
	c.startAll()
	b := c.connect("bob", 1) // one session, so that the cluster is known to serve
	b.acrossAll("on wiped nodes")
	for _, n := range c.nodes { // raw requests: the SDK client ends a session it is told is gone
		status, body, err := rawCall(t, n, a.cs.ID(), faultCall)
		require.NoError(t, err)
		require.Equal(t, http.StatusNotFound, status, "alice's session on wiped nodes: %s", body)
	}
	b.close()
	c.stopAll()

	// Restore: wipe, copy the backups back, start every node.
	wipe(t, dirs)
	for i, d := range dirs {
		require.NoError(t, os.CopyFS(d, os.DirFS(filepath.Join(backup, strconv.Itoa(i)))), "restoring n%d", i+1)
	}
	c.startAll()
	// The SDK client gave the session up while every node was down (its
	// GET stream could not reconnect): the session's own ID, raw, on each
	// node in turn, is what a client resuming it would send.
	id := a.cs.ID()
	for i, n := range c.nodes {
		last++
		require.Equal(t, strconv.Itoa(last), rawTool(t, n, id, "test_counter", "{}"),
			"n%d: the counter goes on from the last acknowledged value", i+1)
	}
	list := rawRequest(t, c.nodes[2], id, `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`)
	require.Equal(t, on, strings.Contains(list, `"test_dynamic"`), "the catalog change acknowledged before the backup: %s", list)
}

// wipe removes everything in each directory.
func wipe(t *testing.T, dirs []string) {
	t.Helper()
	for _, d := range dirs {
		entries, err := os.ReadDir(d)
		require.NoError(t, err)
		for _, e := range entries {
			require.NoError(t, os.RemoveAll(filepath.Join(d, e.Name())))
		}
	}
}

// startAll starts every node again with its arguments, all at once, and
// waits until each is ready (a node alone never is).
func (c *faultCluster) startAll() {
	c.t.Helper()
	for i := range c.nodes {
		c.nodes[i] = startServer(c.t, c.args[i]...)
	}
	c.waitAllReady()
}

// count calls test_counter once and returns the value it reports.
func (fc *faultClient) count(what string) int {
	fc.t.Helper()
	got, err := fc.call("test_counter", nil)
	require.NoError(fc.t, err, "%s: %s: test_counter", fc.name, what)
	n, err := strconv.Atoi(got)
	require.NoError(fc.t, err, "%s: %s: test_counter said %q", fc.name, what, got)
	return n
}

// rawRequest posts one JSON-RPC request of session id to node n and
// returns its answer's body; it requires a 200.
func rawRequest(t *testing.T, n *httpServer, id, body string) string {
	t.Helper()
	status, out, err := postJSON(t.Context(), n, id, body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status, "%s", out)
	return out
}

// rawTool calls tool name with args (a JSON object) in session id on node
// n and returns the text of its single result.
func rawTool(t *testing.T, n *httpServer, id, name, args string) string {
	t.Helper()
	text, err := toolText(rawRequest(t, n, id, `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"`+name+`","arguments":`+args+`}}`))
	require.NoError(t, err)
	return text
}
