package main

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const adminToken = "0123456789abcdef0123456789abcdef"

// adminGet sends an admin request with the given Authorization header
// ("" for none) and returns the status and body.
func adminDo(t *testing.T, method, url, auth string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, nil)
	require.NoError(t, err)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String()
}

// runAdmin runs `mcp-actors admin args...` with env and returns its exit
// code, stdout and stderr.
func runAdmin(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	return runBinEnv(t, env, append([]string{"admin"}, args...)...)
}

// TestAdminPathClosedWithoutToken: a node given no admin token has no
// admin path.
func TestAdminPathClosedWithoutToken(t *testing.T) {
	sp := startServe(t, nil)
	base := strings.TrimSuffix(sp.url, "/mcp")
	status, _ := adminDo(t, http.MethodGet, base+"/admin/cluster", "Bearer "+adminToken)
	assert.Equal(t, http.StatusNotFound, status)
}

// TestAdminPath: with a token, the admin path refuses a caller without it
// or with another, and `mcp-actors admin` shows the node's view, drains
// it, and refuses to remove a store without --yes.
func TestAdminPath(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "admin-token")
	require.NoError(t, os.WriteFile(tokenFile, []byte(adminToken+"\n"), 0o600))
	sp := startServe(t, nil, "--admin-token-file", tokenFile)
	base := strings.TrimSuffix(sp.url, "/mcp")

	for _, auth := range []string{"", "Bearer ", "Bearer wrong-token-of-some-length", "Basic " + adminToken, adminToken} {
		status, body := adminDo(t, http.MethodGet, base+"/admin/cluster", auth)
		assert.Equal(t, http.StatusUnauthorized, status, "Authorization %q: %s", auth, body)
		status, _ = adminDo(t, http.MethodPost, base+"/admin/drain", auth)
		assert.Equal(t, http.StatusUnauthorized, status, "Authorization %q", auth)
	}
	assert.NotContains(t, sp.stderr.String(), adminToken, "the token is never logged")

	// The stores are made once the node is ready.
	require.Eventually(t, func() bool {
		status, _ := adminDo(t, http.MethodGet, base+"/readyz", "")
		return status == http.StatusOK
	}, exitTimeout, 10*time.Millisecond, "the node becomes ready")
	status, body := adminDo(t, http.MethodGet, base+"/admin/cluster", "Bearer "+adminToken)
	require.Equal(t, http.StatusOK, status, body)
	assert.Contains(t, body, `"storage":[`)

	code, out, errOut := runAdmin(t, []string{"MCP_ACTORS_ADMIN_TOKEN_FILE=" + tokenFile}, "--url", base, "status")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "NODE")
	assert.Contains(t, out, "sessions")

	code, _, errOut = runAdmin(t, nil, "--url", base, "status")
	assert.Equal(t, exitConfig, code, "no token")
	assert.Contains(t, errOut, "no admin token")
	code, _, errOut = runAdmin(t, []string{"MCP_ACTORS_ADMIN_TOKEN=another-token-of-some-length"}, "--url", base, "status")
	assert.Equal(t, exitRuntime, code, "a wrong token")
	assert.Contains(t, errOut, "401")

	code, _, errOut = runAdmin(t, []string{"MCP_ACTORS_ADMIN_TOKEN=" + adminToken}, "--url", base, "remove-store", "events")
	assert.Equal(t, exitConfig, code)
	assert.Contains(t, errOut, "--yes")
	code, _, _ = runAdmin(t, []string{"MCP_ACTORS_ADMIN_TOKEN=" + adminToken}, "--url", base, "remove-store", "everything", "--yes")
	assert.Equal(t, exitConfig, code, "not a store")

	code, out, errOut = runAdmin(t, []string{"MCP_ACTORS_ADMIN_TOKEN=" + adminToken}, "--url", base, "drain")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, `"draining":true`)
	require.Eventually(t, func() bool {
		status, _ := adminDo(t, http.MethodGet, base+"/readyz", "")
		return status == http.StatusServiceUnavailable
	}, exitTimeout, 10*time.Millisecond, "a drained node is not ready")
}

// TestServeRefusesShortAdminToken: an admin token under 16 characters is
// refused at start.
func TestServeRefusesShortAdminToken(t *testing.T) {
	file := filepath.Join(t.TempDir(), "short")
	require.NoError(t, os.WriteFile(file, []byte("short\n"), 0o600))
	code, _, stderr := runBin(t, "serve", "--listen", "127.0.0.1:0", "--admin-token-file", file)
	assert.Equal(t, exitConfig, code)
	assert.Contains(t, stderr, "admin token")
}
