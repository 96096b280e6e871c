package mcpactors_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/cluster"
)

// TestClusterSessionDirectoryFull: a cluster whose session directory is
// bounded to 16 KiB (about 45 sessions' records) opens sessions until 80%
// of the bound, then answers initialize with 503 saying the directory is
// full — at once, not after waiting out a write — while the sessions it
// holds go on answering and changing their State (the rest of the bound
// is theirs: a replicated stream at its bound refuses every write); the
// directory's size and bound are reported; once sessions end and free
// room, new sessions are opened again.
func TestClusterSessionDirectoryFull(t *testing.T) {
	const bound = 16 << 10
	c := startHTTPClusterOn(t, 3, cluster.Options{ClusterName: "full", SessionBytes: bound}, sizeCatalog, nil, nil)
	initialize := []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"full-test","version":"1"}}}`)
	try := func() (int, string, string) {
		ctx, cancel := context.WithTimeout(t.Context(), httpWait)
		defer cancel()
		resp := send(t, ctx, c.urls[0], "", initialize)
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), string(b)
	}
	var opened []string
	var refusal string
	start := time.Now()
	for range 200 {
		status, sid, body := try()
		if status == http.StatusServiceUnavailable {
			refusal = body
			break
		}
		if status == http.StatusOK && sid != "" {
			opened = append(opened, sid)
		}
	}
	t.Logf("%d sessions opened before the directory was full, in %s", len(opened), time.Since(start).Round(time.Millisecond))
	require.NotEmpty(t, refusal, "a session was refused")
	assert.Contains(t, refusal, "the session directory is at its bound (--sessions-bytes)")
	require.Greater(t, len(opened), 10)
	status, _, body := try()
	assert.Equal(t, http.StatusServiceUnavailable, status, "refused again, at once: %s", body)

	// The sessions held go on, their State changing (a value in their
	// data: a write of their record).
	ctx, cancel := context.WithTimeout(t.Context(), httpWait)
	defer cancel()
	resp := send(t, ctx, c.urls[1], opened[0], toolCall(1, "echo", `{"text":"still here"}`, ""))
	b, _ := io.ReadAll(resp.Body)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(b), "still here")
	for i, sid := range opened[:5] {
		resp := send(t, ctx, c.urls[i%3], sid, toolCall(2, "put", `{"size":200}`, ""))
		b, _ := io.ReadAll(resp.Body)
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.NotContains(t, string(b), "isError\":true", "session %d stores its data: %s", i, b)
	}

	sizes := map[string]cluster.StoreSize{}
	for _, s := range c.nodes[2].StoreSizes(ctx) {
		sizes[s.Store] = s
	}
	require.Contains(t, sizes, "sessions")
	assert.EqualValues(t, bound, sizes["sessions"].MaxBytes)
	assert.LessOrEqual(t, sizes["sessions"].Bytes, uint64(bound))
	assert.Greater(t, sizes["sessions"].Bytes, uint64(bound/2))
	assert.Less(t, sizes["sessions"].Bytes, uint64(bound-1024), "room is left for the sessions there")

	// Sessions end: their records go, and new sessions are opened again
	// (the node looks at each lease renewal).
	for _, sid := range opened[:len(opened)/2] {
		req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.urls[0], nil)
		require.NoError(t, err)
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		require.Equal(t, http.StatusNoContent, resp.StatusCode)
	}
	require.Eventually(t, func() bool {
		status, _, _ := try()
		return status == http.StatusOK
	}, 30*time.Second, 200*time.Millisecond, "a session is opened once the directory has room again")
}
