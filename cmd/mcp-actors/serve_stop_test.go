package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mcpPost posts one JSON-RPC message to url, in session sid when not "",
// and returns the status, the session ID header and the body.
func mcpPost(t *testing.T, url, sid, body string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), string(b)
}

// closesConnection pings session sid through url and reports whether the
// answer closes the connection ("Connection: close").
func closesConnection(t *testing.T, url, sid string) bool {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":"ka","method":"ping"}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	return resp.Close
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"cli-test","version":"1"}}}`

// waitStatus polls url until it answers want, and returns the body.
func waitStatus(t *testing.T, url string, want int, what string) string {
	t.Helper()
	var body string
	require.Eventually(t, func() bool {
		var status int
		status, body = adminDo(t, http.MethodGet, url, "")
		return status == want
	}, exitTimeout, 10*time.Millisecond, what)
	return body
}

// TestLameDuck: after SIGTERM a node with --lame-duck answers /readyz 503
// ("stopping") while it goes on serving: an open session's calls and a new
// initialize are answered, and it has not exited; a second SIGTERM ends
// the lame duck at once and the node exits 0. Without the lame duck the
// first SIGTERM drains at once, and a drained node refuses initialize
// (the root package's TestServerCloseEndsSessions).
func TestLameDuck(t *testing.T) {
	sp := startServe(t, nil, "--lame-duck=10m")
	base := strings.TrimSuffix(sp.url, "/mcp")
	waitStatus(t, base+"/readyz", http.StatusOK, "the node becomes ready")
	status, sid, body := mcpPost(t, sp.url, "", initializeBody)
	require.Equal(t, http.StatusOK, status, body)
	require.NotEmpty(t, sid)
	status, _, _ = mcpPost(t, sp.url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	require.Equal(t, http.StatusAccepted, status)

	assert.False(t, closesConnection(t, sp.url, sid), "connections are kept alive before the lame duck")
	require.NoError(t, sp.cmd.Process.Signal(syscall.SIGTERM))
	body = waitStatus(t, base+"/readyz", http.StatusServiceUnavailable, "a lame duck is not ready")
	assert.Contains(t, body, "stopping")

	status, _, body = mcpPost(t, sp.url, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	assert.Equal(t, http.StatusOK, status, "an open session is served: %s", body)
	assert.Contains(t, body, `"tools"`)
	assert.True(t, closesConnection(t, sp.url, sid), "a lame duck answers \"Connection: close\": a kept connection's client reconnects, to a ready node")
	status, sid2, body := mcpPost(t, sp.url, "", initializeBody)
	assert.Equal(t, http.StatusOK, status, "a new session is opened: %s", body)
	assert.NotEmpty(t, sid2)
	status, _ = adminDo(t, http.MethodGet, base+"/healthz", "")
	assert.Equal(t, http.StatusOK, status, "alive")
	select {
	case err := <-sp.done:
		sp.done <- err
		t.Fatalf("exited during the lame duck: %v\n%s", err, sp.stderr)
	default:
	}

	require.NoError(t, sp.cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, 0, sp.wait(), "stderr:\n%s", sp.stderr)
	assert.Contains(t, sp.stderr.String(), "a second signal ends the lame duck")
	assert.Regexp(t, regexp.MustCompile(`(?s)stopping: still answering.*shutting down: draining sessions.*stopped`), sp.stderr.String(), "lame duck, drain, stop: in that order")
}

// TestAdminListen: with --admin-listen, /metrics, /admin/ and /debug/ are
// served there and not on --listen; the probes on both.
func TestAdminListen(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "admin-token")
	require.NoError(t, os.WriteFile(tokenFile, []byte(adminToken+"\n"), 0o600))
	admin := freeAddr(t)
	sp := startServe(t, nil, "--admin-listen", admin, "--admin-token-file", tokenFile, "--debug")
	base := strings.TrimSuffix(sp.url, "/mcp")
	adminBase := "http://" + admin
	waitStatus(t, base+"/readyz", http.StatusOK, "the node becomes ready")
	waitStatus(t, adminBase+"/readyz", http.StatusOK, "the admin port answers the probes too")
	for _, p := range []string{"/healthz", "/startupz"} {
		for _, b := range []string{base, adminBase} {
			status, body := adminDo(t, http.MethodGet, b+p, "")
			assert.Equal(t, http.StatusOK, status, "%s%s: %s", b, p, body)
		}
	}

	status, body := adminDo(t, http.MethodGet, adminBase+"/metrics", "")
	assert.Equal(t, http.StatusOK, status)
	assert.Contains(t, body, "mcp_sessions")
	status, body = adminDo(t, http.MethodGet, adminBase+"/admin/cluster", "Bearer "+adminToken)
	assert.Equal(t, http.StatusOK, status, body)
	status, _ = adminDo(t, http.MethodGet, adminBase+"/admin/cluster", "")
	assert.Equal(t, http.StatusUnauthorized, status, "the admin path still wants its token")
	status, _ = adminDo(t, http.MethodGet, adminBase+"/debug/mem", "")
	assert.Equal(t, http.StatusOK, status)

	for _, p := range []string{"/metrics", "/admin/cluster", "/debug/mem"} {
		status, _ := adminDo(t, http.MethodGet, base+p, "Bearer "+adminToken)
		assert.Equal(t, http.StatusNotFound, status, "%s is not on the client port", p)
	}
	assert.Contains(t, sp.stderr.String(), "admin_listen="+admin)
}

// TestServeTLSReload: a certificate renewed in place (its files rewritten,
// as cert-manager does) is served from the next handshake on, without a
// restart, and mcp_tls_certificate_expiry_timestamp_seconds follows it.
func TestServeTLSReload(t *testing.T) {
	dir := t.TempDir()
	cert, key, _ := selfSigned(t, dir)
	s := startServe(t, nil, "--tls-cert", cert, "--tls-key", key)
	base := strings.TrimSuffix(s.url, "/mcp")
	served := func() *x509.Certificate {
		conn, err := tls.Dial("tcp", strings.TrimPrefix(base, "https://"), &tls.Config{InsecureSkipVerify: true}) // the test reads what is served
		require.NoError(t, err)
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0]
	}
	first := served()
	require.True(t, first.Equal(served()), "the same certificate, handshake after handshake")

	// Renewed: another key, another expiry (selfSigned again into dir).
	_, _, pool2 := selfSigned(t, dir)
	for _, f := range []string{cert, key} { // a later modification time, whatever the file system's resolution
		later := time.Now().Add(2 * time.Second)
		require.NoError(t, os.Chtimes(f, later, later))
	}
	var now *x509.Certificate
	require.Eventually(t, func() bool {
		now = served()
		return !now.Equal(first)
	}, exitTimeout, 50*time.Millisecond, "the renewed certificate is served")
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool2}}
	defer tr.CloseIdleConnections()
	resp := initialize(t, &http.Client{Transport: tr, Timeout: exitTimeout}, s.url)
	assert.Equal(t, http.StatusOK, resp.StatusCode, "a client that trusts only the new certificate")

	mresp, err := (&http.Client{Transport: tr, Timeout: exitTimeout}).Get(base + "/metrics")
	require.NoError(t, err)
	defer mresp.Body.Close()
	b, err := io.ReadAll(mresp.Body)
	require.NoError(t, err)
	assert.Regexp(t, fmt.Sprintf(`mcp_tls_certificate_expiry_timestamp_seconds %s\b`, regexp.QuoteMeta(strconv.FormatFloat(float64(now.NotAfter.Unix()), 'g', -1, 64))), string(b))
}
