package reftools_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/harness"
	"github.com/mcp-actors/mcp-actors/messages"
	"github.com/mcp-actors/mcp-actors/reftools"
)

// The wire of protocol 2026-07-28, request by request: what each answers,
// with which HTTP status.

// wireCall is one raw POST of the modern era.
type wireCall struct {
	method, name, version, token string
	params                       string // the params object, _meta added unless noMeta
	noMeta                       bool
	caps                         string // clientCapabilities (default {})
	extraMeta                    string // more _meta members, each followed by a comma
	header                       map[string]string
}

// wireAnswer is what came back.
type wireAnswer struct {
	status int
	header http.Header
	msg    struct {
		ID     jsontext.Value            `json:"id"`
		Result map[string]jsontext.Value `json:"result"`
		Error  *struct {
			Code    int64          `json:"code"`
			Message string         `json:"message"`
			Data    jsontext.Value `json:"data"`
		} `json:"error"`
	}
	raw string
}

func (c wireCall) body(id int) string {
	version := c.version
	if version == "" {
		version = messages.Version20260728
	}
	caps := c.caps
	if caps == "" {
		caps = "{}"
	}
	params := strings.TrimSpace(c.params)
	if params == "" {
		params = "{}"
	}
	if !c.noMeta {
		meta := `"_meta":{` + c.extraMeta + `"io.modelcontextprotocol/protocolVersion":"` + version + `","io.modelcontextprotocol/clientCapabilities":` + caps + `}`
		if params == "{}" {
			params = "{" + meta + "}"
		} else {
			params = "{" + meta + "," + params[1:]
		}
	}
	return `{"jsonrpc":"2.0","id":` + jsonInt(id) + `,"method":"` + c.method + `","params":` + params + `}`
}

func jsonInt(i int) string { b, _ := json.Marshal(i); return string(b) }

// send POSTs c to url with the headers a client of 2026-07-28 sends, each
// overridable (an empty value in c.header removes it), and reads the
// answer.
func send(t *testing.T, url string, id int, c wireCall) *wireAnswer {
	t.Helper()
	resp := openPost(t, t.Context(), url, id, c)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	a := &wireAnswer{status: resp.StatusCode, header: resp.Header, raw: string(b)}
	if len(bytes.TrimSpace(b)) > 0 && resp.Header.Get("Content-Type") == "application/json" {
		require.NoError(t, json.Unmarshal(b, &a.msg), "answer %s", b)
	}
	return a
}

// openPost POSTs c to url as send does, under ctx, and returns the
// response with its body unread (a stream to read as it comes).
func openPost(t *testing.T, ctx context.Context, url string, id int, c wireCall) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(c.body(id)))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	v := c.version
	if v == "" {
		v = messages.Version20260728
	}
	req.Header.Set("MCP-Protocol-Version", v)
	req.Header.Set("Mcp-Method", c.method)
	if c.name != "" {
		req.Header.Set("Mcp-Name", c.name)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for k, v := range c.header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	return resp
}

// code is the answer's JSON-RPC error code (0 for a result).
func (a *wireAnswer) code() int64 {
	if a.msg.Error == nil {
		return 0
	}
	return a.msg.Error.Code
}

func (a *wireAnswer) str(field string) string {
	var s string
	_ = json.Unmarshal(a.msg.Result[field], &s)
	return s
}

// tokens authenticates "Bearer alice" as alice and "Bearer bob" as bob.
var tokens = mcpactors.BearerTokens(func(_ context.Context, token string) (string, error) {
	if token == "alice" || token == "bob" {
		return token, nil
	}
	return "", errors.New("unknown token")
})

// wireServer serves the reference set on loopback, with the state keys
// given (none: a key of the process's own) and, with auth, bearer tokens.
func wireServer(t *testing.T, auth bool, keys ...[]byte) string {
	t.Helper()
	return wireServerWith(t, nil, nil, auth, keys...)
}

// wireServerWith is wireServer with options, and more tools added by add.
func wireServerWith(t *testing.T, o *mcpactors.Options, add func(*mcpactors.Server), auth bool, keys ...[]byte) string {
	t.Helper()
	url, _ := wireServerOf(t, o, add, auth, keys...)
	return url
}

// wireServerOf is wireServerWith that also returns the server.
func wireServerOf(t *testing.T, o *mcpactors.Options, add func(*mcpactors.Server), auth bool, keys ...[]byte) (string, *mcpactors.Server) {
	t.Helper()
	srv := mcpactors.NewServer(messages.Implementation{Name: "reftools-wire", Version: "1.0.0"}, o)
	require.NoError(t, reftools.Register(srv))
	if add != nil {
		add(srv)
	}
	if len(keys) > 0 {
		var prev []byte
		if len(keys) > 1 {
			prev = keys[1]
		}
		require.NoError(t, srv.SetRequestStateKeys(keys[0], prev))
	}
	opts := &mcpactors.HTTPOptions{}
	if auth {
		opts.Authenticator = tokens
	}
	h, err := srv.HTTPHandler(opts)
	require.NoError(t, err)
	hs := httptest.NewServer(h)
	t.Cleanup(func() {
		hs.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Close(ctx)
	})
	return hs.URL + "/mcp", srv
}

func TestModernWire(t *testing.T) {
	url := wireServer(t, false)
	b64 := func(s string) string { return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?=" }
	echo := `{"name":"test_echo","arguments":{"text":"hi"}}`
	for _, tc := range []struct {
		name   string
		call   wireCall
		status int
		code   int64
	}{
		{"discover", wireCall{method: "server/discover"}, 200, 0},
		{"tools/call", wireCall{method: "tools/call", name: "test_echo", params: echo}, 200, 0},
		{"Mcp-Name in its base64 form", wireCall{method: "tools/call", name: b64("test_echo"), params: echo}, 200, 0},
		{"no _meta", wireCall{method: "tools/call", name: "test_echo", params: echo, noMeta: true}, 400, messages.CodeInvalidParams},
		{"no clientCapabilities", wireCall{method: "tools/call", name: "test_echo", noMeta: true,
			params: `{"name":"test_echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`}, 400, messages.CodeInvalidParams},
		{"no MCP-Protocol-Version", wireCall{method: "tools/call", name: "test_echo", params: echo, header: map[string]string{"MCP-Protocol-Version": ""}}, 400, messages.CodeHeaderMismatch},
		{"MCP-Protocol-Version not the body's", wireCall{method: "tools/call", name: "test_echo", params: echo, header: map[string]string{"MCP-Protocol-Version": "2026-08-01"}}, 400, messages.CodeHeaderMismatch},
		{"an unsupported version", wireCall{method: "tools/call", name: "test_echo", params: echo, version: "2099-01-01"}, 400, messages.CodeUnsupportedProtocolVersion},
		{"no Mcp-Method", wireCall{method: "tools/call", name: "test_echo", params: echo, header: map[string]string{"Mcp-Method": ""}}, 400, messages.CodeHeaderMismatch},
		{"Mcp-Method not the body's", wireCall{method: "tools/call", name: "test_echo", params: echo, header: map[string]string{"Mcp-Method": "tools/list"}}, 400, messages.CodeHeaderMismatch},
		{"no Mcp-Name", wireCall{method: "tools/call", params: echo}, 400, messages.CodeHeaderMismatch},
		{"Mcp-Name not the body's", wireCall{method: "tools/call", name: "test_simple_text", params: echo}, 400, messages.CodeHeaderMismatch},
		{"Mcp-Name malformed base64", wireCall{method: "tools/call", name: "=?base64?***?=", params: echo}, 400, messages.CodeHeaderMismatch},
		{"Mcp-Name of resources/read", wireCall{method: "resources/read", name: "test://static-text", params: `{"uri":"test://static-text"}`}, 200, 0},
		{"an unknown resource", wireCall{method: "resources/read", name: "test://none", params: `{"uri":"test://none"}`}, 200, messages.CodeInvalidParams},
		{"an unknown tool", wireCall{method: "tools/call", name: "nope", params: `{"name":"nope"}`}, 200, messages.CodeInvalidParams},
		{"ping is gone", wireCall{method: "ping"}, 404, messages.CodeMethodNotFound},
		{"logging/setLevel is gone", wireCall{method: "logging/setLevel", params: `{"level":"debug"}`}, 404, messages.CodeMethodNotFound},
		{"resources/subscribe is gone", wireCall{method: "resources/subscribe", params: `{"uri":"test://watched-resource"}`}, 404, messages.CodeMethodNotFound},
		{"an unknown method", wireCall{method: "no/such"}, 404, messages.CodeMethodNotFound},
		{"elicitation without the capability", wireCall{method: "tools/call", name: "test_elicitation", params: `{"name":"test_elicitation","arguments":{"message":"m"}}`}, 400, messages.CodeMissingClientCapability},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := send(t, url, 7, tc.call)
			assert.Equal(t, tc.status, a.status, "status: %s", a.raw)
			assert.Equal(t, tc.code, a.code(), "code: %s", a.raw)
			assert.Empty(t, a.header.Get("Mcp-Session-Id"), "no session is minted")
			if tc.code == 0 {
				assert.Equal(t, "complete", a.str("resultType"))
				assert.Contains(t, string(a.msg.Result["_meta"]), `"io.modelcontextprotocol/serverInfo":{"name":"reftools-wire","version":"1.0.0"}`)
			}
			switch tc.code {
			case messages.CodeUnsupportedProtocolVersion:
				assert.JSONEq(t, `{"supported":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"],"requested":"2099-01-01"}`, string(a.msg.Error.Data))
			case messages.CodeMissingClientCapability:
				assert.JSONEq(t, `{"requiredCapabilities":{"elicitation":{"form":{}}}}`, string(a.msg.Error.Data))
			}
		})
	}
}

func TestModernCacheHints(t *testing.T) {
	url := wireServer(t, false)
	for _, c := range []struct {
		call  wireCall
		scope string
	}{
		{wireCall{method: "server/discover"}, "public"},
		{wireCall{method: "tools/list"}, "public"},
		{wireCall{method: "prompts/list"}, "public"},
		{wireCall{method: "resources/list"}, "public"},
		{wireCall{method: "resources/templates/list"}, "public"},
		{wireCall{method: "resources/read", name: "test://static-text", params: `{"uri":"test://static-text"}`}, "private"},
	} {
		a := send(t, url, 1, c.call)
		require.Equal(t, 200, a.status, a.raw)
		assert.Equal(t, c.scope, a.str("cacheScope"), c.call.method)
		assert.Contains(t, a.msg.Result, "ttlMs", c.call.method)
	}
	a := send(t, url, 1, wireCall{method: "tools/call", name: "test_echo", params: `{"name":"test_echo","arguments":{"text":"x"}}`})
	assert.NotContains(t, a.msg.Result, "ttlMs", "a tool's result is not cacheable")
}

func TestModernBatchRefused(t *testing.T) {
	url := wireServer(t, false)
	body := "[" + wireCall{method: "tools/list"}.body(1) + "]"
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", messages.Version20260728)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
}

// TestModernGetDeleteNotAllowed: the modern revision has POST alone; a GET
// or DELETE that names it gets 405 with Allow: POST (streamable-http.mdx,
// "Earlier Streamable HTTP Revisions"), one of an earlier revision — or
// naming a session — what it always got.
func TestModernGetDeleteNotAllowed(t *testing.T) {
	url := wireServer(t, false)
	for _, tc := range []struct {
		method, version string
		status          int
	}{
		{http.MethodGet, messages.Version20260728, http.StatusMethodNotAllowed},
		{http.MethodDelete, messages.Version20260728, http.StatusMethodNotAllowed},
		{http.MethodGet, messages.Version20251125, http.StatusBadRequest}, // no Mcp-Session-Id
		{http.MethodDelete, messages.Version20251125, http.StatusBadRequest},
		{http.MethodGet, messages.Version20260728 + " with a session", http.StatusBadRequest}, // a session's: not its version
	} {
		req, _ := http.NewRequestWithContext(t.Context(), tc.method, url, nil)
		req.Header.Set("Accept", "text/event-stream")
		version, session, _ := strings.Cut(tc.version, " with a ")
		req.Header.Set("MCP-Protocol-Version", version)
		if session != "" {
			req.Header.Set("Mcp-Session-Id", "bm90LWEtc2Vzc2lvbi1pZA")
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, tc.status, resp.StatusCode, "%s %s: %s", tc.method, tc.version, body)
		if tc.status == http.StatusMethodNotAllowed {
			assert.Equal(t, http.MethodPost, resp.Header.Get("Allow"))
			assert.Contains(t, string(body), `"code":-32600`)
		}
	}
}

// elicitCall is test_elicitation's call from a client that can elicit.
func elicitCall(message, token string) wireCall {
	return wireCall{method: "tools/call", name: "test_elicitation", token: token, caps: `{"elicitation":{}}`,
		params: `{"name":"test_elicitation","arguments":{"message":"` + message + `"}}`}
}

// retryOf is c again with the requestState and the answers given.
func retryOf(c wireCall, state string, answers string) wireCall {
	p := strings.TrimSuffix(c.params, "}")
	c.params = p + `,"requestState":"` + state + `","inputResponses":` + answers + `}`
	return c
}

const elicitAnswer = `{"elicitation-1":{"action":"accept","content":{"username":"u","email":"e"}}}`

func TestModernRequestStateRefused(t *testing.T) {
	url := wireServer(t, true)
	first := send(t, url, 1, elicitCall("m", "alice"))
	require.Equal(t, "input_required", first.str("resultType"), first.raw)
	state := first.str("requestState")
	require.NotEmpty(t, state)
	tampered := []byte(state)
	tampered[len(tampered)/2] ^= 1
	if tampered[len(tampered)/2] == '-' || tampered[len(tampered)/2] == '_' {
		tampered[len(tampered)/2] = 'A'
	}
	for name, c := range map[string]wireCall{
		"tampered":          retryOf(elicitCall("m", "alice"), string(tampered), elicitAnswer),
		"truncated":         retryOf(elicitCall("m", "alice"), state[:len(state)-10], elicitAnswer),
		"another principal": retryOf(elicitCall("m", "bob"), state, elicitAnswer),
		"other arguments":   retryOf(elicitCall("other", "alice"), state, elicitAnswer),
		"another tool": retryOf(wireCall{method: "tools/call", name: "test_elicitation_sep1034_defaults", token: "alice", caps: `{"elicitation":{}}`,
			params: `{"name":"test_elicitation_sep1034_defaults","arguments":{}}`}, state, elicitAnswer),
		"another method": retryOf(wireCall{method: "resources/read", name: "test://static-text", token: "alice",
			params: `{"uri":"test://static-text"}`}, state, elicitAnswer),
	} {
		a := send(t, url, 2, c)
		assert.EqualValues(t, messages.CodeInvalidParams, a.code(), "%s: %s", name, a.raw)
		if a.msg.Error != nil {
			assert.NotContains(t, a.msg.Error.Message, "alice", name)
			assert.Empty(t, a.msg.Error.Data, name)
		}
	}
	// The right retry completes; the same round again is refused.
	done := send(t, url, 3, retryOf(elicitCall("m", "alice"), state, elicitAnswer))
	require.Equal(t, "complete", done.str("resultType"), done.raw)
	again := send(t, url, 4, retryOf(elicitCall("m", "alice"), state, elicitAnswer))
	assert.EqualValues(t, messages.CodeInvalidParams, again.code(), "an answered round: %s", again.raw)
}

// TestModernRetryArgumentsReencoded: a retry whose arguments are the
// first request's encoded otherwise (spacing, key order) is the same
// request: its state is matched in canonical form (RFC 8785).
func TestModernRetryArgumentsReencoded(t *testing.T) {
	url := wireServer(t, true)
	first := send(t, url, 1, elicitCall("m", "alice"))
	state := first.str("requestState")
	require.NotEmpty(t, state, first.raw)
	again := elicitCall("m", "alice")
	again.params = strings.Replace(again.params, `{"message":"m"}`, `{ "message" : "m" }`, 1)
	require.NotEqual(t, elicitCall("m", "alice").params, again.params)
	done := send(t, url, 2, retryOf(again, state, elicitAnswer))
	assert.Equal(t, "complete", done.str("resultType"), done.raw)
}

func TestModernStateKeyRotation(t *testing.T) {
	k1, k2, k3 := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32), bytes.Repeat([]byte{3}, 32)
	first := send(t, wireServer(t, false, k1), 1, elicitCall("m", ""))
	state := first.str("requestState")
	require.NotEmpty(t, state, first.raw)
	// A node given a new key opens what the previous one sealed: without
	// the continuation (another process), it runs the handler again and
	// answers the call from the retry.
	rotated := send(t, wireServer(t, false, k2, k1), 2, retryOf(elicitCall("m", ""), state, elicitAnswer))
	assert.Equal(t, "complete", rotated.str("resultType"), rotated.raw)
	assert.Contains(t, rotated.raw, `content={\"username\":\"u\",\"email\":\"e\"}`)
	retired := send(t, wireServer(t, false, k3, k2), 3, retryOf(elicitCall("m", ""), state, elicitAnswer))
	assert.EqualValues(t, messages.CodeInvalidParams, retired.code(), "a retired key: %s", retired.raw)
}

// TestModernScenarios plays the golden transcripts of protocol 2026-07-28
// (testdata/modern) over HTTP: go test -run ModernScenarios -update
// rewrites them.
func TestModernScenarios(t *testing.T) {
	harness.RunModernScenarios(t, "testdata/modern/*.txtar", func(tb testing.TB) *mcpactors.Server {
		srv := mcpactors.NewServer(messages.Implementation{Name: "reftools-modern", Version: "0.0.0"}, nil)
		require.NoError(tb, reftools.Register(srv))
		return srv
	})
}

// TestModernRequestStateExpired: a requestState past its lifetime is
// refused, as any other that cannot be used.
func TestModernRequestStateExpired(t *testing.T) {
	url, srv := wireServerOf(t, &mcpactors.Options{RequestStateTTL: 20 * time.Millisecond}, nil, false)
	first := send(t, url, 1, elicitCall("m", ""))
	state := first.str("requestState")
	require.NotEmpty(t, state, first.raw)
	// The continuation ends when its state lapses (the same lifetime, from
	// the same moment): once it is gone, the state has lapsed.
	require.Eventually(t, func() bool { return srv.Parked() == 0 }, 5*time.Second, time.Millisecond)
	a := send(t, url, 2, retryOf(elicitCall("m", ""), state, elicitAnswer))
	assert.EqualValues(t, messages.CodeInvalidParams, a.code(), a.raw)
	if a.msg.Error != nil {
		assert.Contains(t, a.msg.Error.Message, "not valid")
	}
}
