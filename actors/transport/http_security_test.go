package transport_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/actors/transport"
	"github.com/mcp-actors/mcp-actors/messages"
)

// TestHTTPHostAndOrigin checks the DNS-rebinding defence (transports.mdx,
// "Security Warning" 1: servers MUST validate Origin and answer 403 to an
// invalid one; security_best_practices.mdx, "Local MCP Server Compromise"):
// on a loopback listener only loopback Host and Origin values pass, unless
// AllowedHosts/AllowedOrigins say otherwise.
func TestHTTPHostAndOrigin(t *testing.T) {
	loopback := newHTTPFixture(t, nil)
	listed := newHTTPFixture(t, &httpSetup{HTTP: transport.HTTPOptions{
		AllowedHosts:   []string{"mcp.example.com"},
		AllowedOrigins: []string{"https://app.example"},
	}})
	lp, lsp := loopback.port, listed.port

	tests := []struct {
		name   string
		f      *httpFixture
		host   string // "" the listener's address
		origin string // "" none
		ok     bool
	}{
		{name: "loopback: no Origin", f: loopback, ok: true},
		{name: "loopback: Host 127.0.0.1:port", f: loopback, host: "127.0.0.1:" + lp, ok: true},
		{name: "loopback: Host localhost:port", f: loopback, host: "localhost:" + lp, ok: true},
		{name: "loopback: Host [::1]:port", f: loopback, host: "[::1]:" + lp, ok: true},
		{name: "loopback: Host localhost", f: loopback, host: "localhost", ok: true},
		{name: "loopback: foreign Host", f: loopback, host: "evil.example", ok: false},
		{name: "loopback: foreign Host with the port", f: loopback, host: "evil.example:" + lp, ok: false},
		{name: "loopback: rebinding-style Host", f: loopback, host: "127.0.0.1.evil.example:" + lp, ok: false},
		{name: "loopback: Origin http://localhost:port", f: loopback, origin: "http://localhost:" + lp, ok: true},
		{name: "loopback: Origin http://127.0.0.1:port", f: loopback, origin: "http://127.0.0.1:" + lp, ok: true},
		{name: "loopback: Origin http://[::1]:port", f: loopback, origin: "http://[::1]:" + lp, ok: true},
		{name: "loopback: foreign Origin", f: loopback, origin: "http://evil.example", ok: false},
		{name: "loopback: foreign Origin, loopback Host", f: loopback, host: "localhost:" + lp, origin: "https://evil.example:" + lp, ok: false},
		{name: "loopback: Origin null", f: loopback, origin: "null", ok: false},
		{name: "allow-list: listed Host", f: listed, host: "mcp.example.com", ok: true},
		{name: "allow-list: listed Host with a port", f: listed, host: "mcp.example.com:" + lsp, ok: true},
		{name: "allow-list: Host case-insensitive", f: listed, host: "MCP.Example.COM", ok: true},
		{name: "allow-list: unlisted Host", f: listed, host: "other.example.com", ok: false},
		{name: "allow-list: loopback Host no longer implied", f: listed, host: "localhost:" + lsp, ok: false},
		{name: "allow-list: listed Origin", f: listed, host: "mcp.example.com", origin: "https://app.example", ok: true},
		{name: "allow-list: listed Origin with a trailing slash", f: listed, host: "mcp.example.com", origin: "https://app.example/", ok: true},
		{name: "allow-list: unlisted Origin", f: listed, host: "mcp.example.com", origin: "https://evil.example", ok: false},
		{name: "allow-list: other scheme", f: listed, host: "mcp.example.com", origin: "http://app.example", ok: false},
		{name: "allow-list: loopback Origin no longer implied", f: listed, host: "mcp.example.com", origin: "http://localhost:" + lsp, ok: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.f.client(t)
			c.host = tt.host
			if tt.origin != "" {
				c.header.Set("Origin", tt.origin)
			}
			body, _ := c.request(messages.MethodInitialize, initParams(messages.LatestVersion, messages.ClientCapabilities{}))
			for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
				var b []byte
				if method == http.MethodPost {
					b = body
				}
				r := c.do(method, b, nil)
				if !tt.ok {
					assert.Equal(t, http.StatusForbidden, r.status, "%s: body %s", method, r.body)
					assert.Equal(t, mtJSON, r.contentType())
					assert.Empty(t, r.header.Get(transport.HeaderSessionID))
					continue
				}
				// Past the check: initialize succeeds, and GET/DELETE
				// without a session get 400.
				want := http.StatusBadRequest
				if method == http.MethodPost {
					want = http.StatusOK
				}
				assert.Equal(t, want, r.status, "%s: body %s", method, r.body)
			}
		})
	}
}

// TestHTTPAuthentication checks the Authenticator: a request without valid
// credentials gets 401 with WWW-Authenticate (RFC 6750 §3), whose body
// says nothing of the authenticator's internals; and a session is bound to
// the principal that created it, so another principal's requests for it
// get exactly what an unknown session gets, 404
// (security_best_practices.mdx, "Session Hijacking": bind session IDs to
// user-specific information).
func TestHTTPAuthentication(t *testing.T) {
	f := newHTTPFixture(t, &httpSetup{HTTP: transport.HTTPOptions{
		Authenticator: bearerAuth{"token-alice": "alice", "token-bob": "bob"},
	}})
	alice := f.client(t)
	alice.header.Set("Authorization", "Bearer token-alice")
	sid := alice.initialize(messages.LatestVersion, messages.ClientCapabilities{})

	t.Run("no or bad credentials: 401", func(t *testing.T) {
		for name, auth := range map[string]string{
			"none":          "",
			"unknown token": "Bearer token-mallory",
			"not bearer":    "Basic YWxpY2U6c2VjcmV0",
			"empty bearer":  "Bearer ",
		} {
			c := f.client(t)
			if auth != "" {
				c.header.Set("Authorization", auth)
			}
			c.sid = sid
			ping, _ := c.request(messages.MethodPing, nil)
			for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
				var b []byte
				if method == http.MethodPost {
					b = ping
				}
				r := c.do(method, b, nil)
				assert.Equal(t, http.StatusUnauthorized, r.status, "%s %s", name, method)
				assert.Contains(t, r.header.Get("WWW-Authenticate"), "Bearer", "%s %s", name, method)
				assert.NotContains(t, string(r.body), "store.go", "%s %s: the authenticator's error leaks", name, method)
				assert.NotContains(t, string(r.body), "token-", "%s %s: the token is echoed", name, method)
			}
		}
	})

	t.Run("another principal's session: 404, as if unknown", func(t *testing.T) {
		bob := f.client(t)
		bob.header.Set("Authorization", "Bearer token-bob")
		ping, _ := bob.request(messages.MethodPing, nil)
		bob.sid = "bm90LWEtc2Vzc2lvbi1pZA"
		unknown := bob.post(ping, nil)
		require.Equal(t, http.StatusNotFound, unknown.status)

		bob.sid = sid
		for _, tc := range []struct {
			method string
			body   []byte
			hdr    http.Header
		}{
			{http.MethodPost, ping, nil},
			{http.MethodPost, []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), nil},
			{http.MethodPost, []byte(`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`), http.Header{transport.HeaderProtocolVersion: {""}}},
			{http.MethodGet, nil, nil},
			{http.MethodGet, nil, http.Header{headerLast: {"0-1"}}},
			{http.MethodDelete, nil, nil},
		} {
			r := bob.do(tc.method, tc.body, tc.hdr)
			assert.Equal(t, http.StatusNotFound, r.status, "%s %s", tc.method, tc.body)
			assert.Equal(t, string(unknown.body), string(r.body), "%s %s: the same body as an unknown session", tc.method, tc.body)
		}
		assert.Nil(t, alice.call(messages.MethodPing, nil).Error, "alice's session is untouched")
	})
}

// TestHTTPErrorsLeakNothing checks that failures inside the server reach
// the client as a generic JSON-RPC error, without stack traces or internal
// error text (DESIGN.md: "never a leaked stack trace"; every body the
// test client reads with an error status is checked the same way). A
// panicking handler harms nothing else: its session serves the next call,
// a call running on another session completes, and new sessions open.
func TestHTTPErrorsLeakNothing(t *testing.T) {
	f := newHTTPFixture(t, nil)
	c := f.client(t)
	c.initialize(messages.LatestVersion, messages.ClientCapabilities{})
	other := f.client(t)
	other.initialize(messages.LatestVersion, messages.ClientCapabilities{})
	gateBody, gateID := other.request(messages.MethodCallTool, toolParams("gate", nil, nil))
	gate := other.openAsync(http.MethodPost, gateBody, nil)
	recv(t, f.gateStarted, "gate to run")

	body, id := c.request(messages.MethodCallTool, toolParams("boom", nil, nil))
	r := c.post(body, nil)
	m := r.response(t, id)
	require.NotNil(t, m.Error, "a panicking tool is an internal error")
	assert.EqualValues(t, messages.CodeInternalError, m.Error.Code)
	assert.Equal(t, messages.ErrInternal.Message, m.Error.Message, "the generic message, nothing of the panic")
	assert.Empty(t, m.Error.Data)
	assertNoLeak(t, string(r.body))
	assert.NotContains(t, string(r.body), "secret")
	assert.Nil(t, c.call(messages.MethodPing, nil).Error, "the session survives the panic")
	assert.Equal(t, "after the panic", textOf(t, c.callTool("test_echo", map[string]any{"text": "after the panic"})),
		"the session's next call runs its handler")
	f.gate <- struct{}{}
	assert.Equal(t, "opened", resultText(t, gate.read().response(t, gateID)), "a call running on another session completes")
	echoSession(t, f, "a session opened after the panic")

	// Bodies of every refusal, scanned whatever their status.
	for _, tc := range []struct {
		method string
		body   string
		hdr    http.Header
	}{
		{http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":{"nested":[1,2,{}]}}}`, nil},
		{http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"test://no/such/resource"}}`, nil},
		{http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"no_such_prompt"}}`, nil},
		{http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":5}}`, nil},
		{http.MethodPost, "\x00\xff\xfe", nil},
		{http.MethodPost, `{"jsonrpc":"2.0","id":{"an":"object"},"method":"ping"}`, nil},
		{http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, http.Header{transport.HeaderProtocolVersion: {"\u00e9t\u00e9"}}},
	} {
		r := c.do(tc.method, []byte(tc.body), tc.hdr)
		assertNoLeak(t, string(r.body))
		if r.msg != nil && r.msg.Error != nil {
			assertNoLeak(t, r.msg.Error.Message)
		}
	}
}
