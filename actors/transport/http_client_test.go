package transport_test

import (
	"bytes"
	"context"
	json "encoding/json/v2"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/actors/transport"
	"github.com/mcp-actors/mcp-actors/messages"
)

// httpClient speaks Streamable HTTP to a fixture with its own connection
// pool. It remembers the session ID and the protocol version header to send.
type httpClient struct {
	t       *testing.T
	f       *httpFixture
	hc      *http.Client
	sid     string      // Mcp-Session-Id to send; "" none
	version string      // MCP-Protocol-Version to send; "" none
	header  http.Header // sent on every request (Authorization, Origin…)
	host    string      // Host header; "" the listener's address
	ids     atomic.Int64
}

// client returns a new client of f, speaking f's protocol. Its idle
// connections are closed when the test ends.
func (f *httpFixture) client(t *testing.T) *httpClient {
	t.Helper()
	tr := &http.Transport{}
	switch f.proto {
	case protoH2:
		tr = f.tlsClient.Transport.(*http.Transport).Clone()
	case protoH2C:
		tr.Protocols = new(http.Protocols)
		tr.Protocols.SetUnencryptedHTTP2(true)
	}
	tr.ResponseHeaderTimeout = watchdog
	tr.DisableCompression = true
	tr.MaxIdleConnsPerHost = 16
	t.Cleanup(tr.CloseIdleConnections)
	return &httpClient{t: t, f: f, hc: &http.Client{Transport: tr}, header: http.Header{}}
}

// httpResp is one whole answer: the JSON body, or the SSE events.
type httpResp struct {
	status int
	header http.Header
	body   []byte            // the body of a non-SSE answer
	msg    *messages.Message // the body decoded, for a JSON answer that is a JSON-RPC message
	events []sseEvent        // the events of an SSE answer, comments included, in order
	endErr error             // how an SSE answer ended: nil at a clean end
}

// contentType returns the answer's media type without parameters.
func (r *httpResp) contentType() string {
	ct, _, _ := strings.Cut(r.header.Get("Content-Type"), ";")
	return strings.TrimSpace(ct)
}

// messages returns the JSON-RPC messages of an SSE answer (priming events
// and comments left out).
func (r *httpResp) messages(t *testing.T) []*messages.Message {
	t.Helper()
	var out []*messages.Message
	for _, ev := range r.events {
		if ev.isMessage() {
			out = append(out, ev.message(t))
		}
	}
	return out
}

// newRequest builds a request to the endpoint with the client's headers;
// hdr adds to them or (with an empty value) removes them.
func (c *httpClient) newRequest(ctx context.Context, method string, body []byte, hdr http.Header) *http.Request {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.f.url, rd)
	require.NoError(c.t, err)
	switch method {
	case http.MethodPost:
		req.Header.Set("Content-Type", mtJSON)
		req.Header.Set("Accept", acceptBoth)
	case http.MethodGet:
		req.Header.Set("Accept", mtSSE)
	}
	if c.sid != "" {
		req.Header.Set(transport.HeaderSessionID, c.sid)
	}
	if c.version != "" {
		req.Header.Set(transport.HeaderProtocolVersion, c.version)
	}
	for k, vs := range c.header {
		req.Header[k] = vs
	}
	for k, vs := range hdr {
		if len(vs) == 1 && vs[0] == "" {
			req.Header.Del(k)
			continue
		}
		req.Header[http.CanonicalHeaderKey(k)] = vs
	}
	if c.host != "" {
		req.Host = c.host
	}
	if h := req.Header.Get("Host"); h != "" {
		req.Host = h
		req.Header.Del("Host")
	}
	return req
}

// open sends a request and returns the response with its body unread. The
// body is closed when the test ends, if not before.
func (c *httpClient) open(method string, body []byte, hdr http.Header) *http.Response {
	c.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := c.hc.Do(c.newRequest(ctx, method, body, hdr))
	if err != nil {
		cancel()
		require.NoError(c.t, err, "%s %s", method, body)
	}
	c.t.Cleanup(func() {
		resp.Body.Close()
		cancel()
	})
	return resp
}

// pending is a request sent by openAsync.
type pending struct {
	c     *httpClient
	ch    chan *http.Response // receives the response, or nil when the request failed
	resp  *http.Response      // once taken from ch
	taken bool                // whether resp was taken from ch (a failed request leaves it nil)
}

// openAsync sends a request on a goroutine of its own, for a request whose
// answer waits for its handler (a JSON answer's headers come with the
// response). Its body is closed when the test ends.
func (c *httpClient) openAsync(method string, body []byte, hdr http.Header) *pending {
	c.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req := c.newRequest(ctx, method, body, hdr)
	p := &pending{c: c, ch: make(chan *http.Response, 1)}
	go func() {
		resp, err := c.hc.Do(req)
		if err != nil {
			resp = nil
		}
		p.ch <- resp
	}()
	c.t.Cleanup(func() {
		cancel()
		if !p.taken {
			p.resp, p.taken = <-p.ch, true
		}
		if p.resp != nil {
			p.resp.Body.Close()
		}
	})
	return p
}

// response waits for the response's headers.
func (p *pending) response() *http.Response {
	p.c.t.Helper()
	if !p.taken {
		p.resp = recv(p.c.t, p.ch, "the response")
		p.taken = true
	}
	require.NotNil(p.c.t, p.resp, "the request failed")
	return p.resp
}

// read waits for the whole answer.
func (p *pending) read() *httpResp {
	p.c.t.Helper()
	return p.c.read(p.response())
}

// do sends a request and reads the whole answer.
func (c *httpClient) do(method string, body []byte, hdr http.Header) *httpResp {
	c.t.Helper()
	return c.read(c.open(method, body, hdr))
}

// post sends body and reads the whole answer.
func (c *httpClient) post(body []byte, hdr http.Header) *httpResp {
	c.t.Helper()
	return c.do(http.MethodPost, body, hdr)
}

// read reads a whole answer: a JSON body, or an SSE stream to its end.
// Error answers are checked for leaked internals.
func (c *httpClient) read(resp *http.Response) *httpResp {
	c.t.Helper()
	r := &httpResp{status: resp.StatusCode, header: resp.Header}
	if r.contentType() == mtSSE {
		s := newSSEReader(c.t, resp)
		for {
			ev, ok := s.next(watchdog)
			if !ok {
				break
			}
			r.events = append(r.events, ev)
		}
		r.endErr = s.err
		for _, m := range r.messages(c.t) {
			if m.Error != nil {
				assertNoLeak(c.t, m.Error.Message+string(m.Error.Data))
			}
		}
		return r
	}
	r.body = readAllWithin(c.t, resp.Body, watchdog)
	if r.status >= 400 {
		assertNoLeak(c.t, string(r.body))
	}
	if r.contentType() == mtJSON && len(r.body) > 0 {
		m, derr := messages.Decode(r.body)
		if derr == nil {
			r.msg = m
		}
		if m != nil && m.Error != nil {
			assertNoLeak(c.t, m.Error.Message+string(m.Error.Data))
		}
	}
	return r
}

// readAllWithin reads r to its end, failing the test after d.
func readAllWithin(t *testing.T, r io.ReadCloser, d time.Duration) []byte {
	t.Helper()
	type result struct {
		b   []byte
		err error
	}
	ch := make(chan result, 1)
	go func() {
		b, err := io.ReadAll(r)
		ch <- result{b, err}
	}()
	select {
	case res := <-ch:
		require.NoError(t, res.err, "reading the body")
		return res.b
	case <-time.After(d):
		r.Close()
		<-ch
		require.FailNow(t, "the body did not end in time")
		return nil
	}
}

// leakMarkers betray a Go stack trace or internal error text.
var leakMarkers = []string{"goroutine", ".go:", "panic", "runtime."}

// assertNoLeak checks that an error text carries no Go internals.
func assertNoLeak(t *testing.T, s string) {
	t.Helper()
	for _, m := range leakMarkers {
		assert.NotContains(t, s, m, "an error body leaks internals")
	}
}

// request encodes a request with the client's next ID.
func (c *httpClient) request(method string, params any) ([]byte, messages.ID) {
	c.t.Helper()
	id := messages.IntID(c.ids.Add(1))
	b, err := messages.EncodeRequest(id, method, params)
	require.NoError(c.t, err)
	return b, id
}

// notification encodes a notification.
func notification(t *testing.T, method string, params any) []byte {
	t.Helper()
	b, err := messages.EncodeNotification(method, params)
	require.NoError(t, err)
	return b
}

// initParams are initialize params for version with caps.
func initParams(version string, caps messages.ClientCapabilities) *messages.InitializeParams {
	return &messages.InitializeParams{
		ProtocolVersion: version,
		Capabilities:    caps,
		ClientInfo:      messages.Implementation{Name: "http-test-client", Version: "1"},
	}
}

// initialize runs the handshake for version (the client then sends that
// version in MCP-Protocol-Version) and returns the session ID.
func (c *httpClient) initialize(version string, caps messages.ClientCapabilities) string {
	c.t.Helper()
	c.sid = c.initializeOnly(version, caps)
	c.version = version
	r := c.post(notification(c.t, messages.MethodInitialized, nil), nil)
	require.Equal(c.t, http.StatusAccepted, r.status, "notifications/initialized: %s", r.body)
	return c.sid
}

// initializeOnly sends initialize (no session header) and returns the new
// session's ID without sending notifications/initialized or remembering it.
func (c *httpClient) initializeOnly(version string, caps messages.ClientCapabilities) string {
	c.t.Helper()
	body, id := c.request(messages.MethodInitialize, initParams(version, caps))
	r := c.post(body, http.Header{transport.HeaderSessionID: {""}, transport.HeaderProtocolVersion: {""}})
	require.Equal(c.t, http.StatusOK, r.status, "initialize: %s", r.body)
	require.Equal(c.t, mtJSON, r.contentType())
	require.NotNil(c.t, r.msg, "initialize: %s", r.body)
	require.Nil(c.t, r.msg.Error, "initialize: %s", r.body)
	require.Equal(c.t, id, r.msg.ID)
	var res messages.InitializeResult
	require.NoError(c.t, json.Unmarshal(r.msg.Result, &res))
	require.Equal(c.t, version, res.ProtocolVersion)
	sid := r.header.Get(transport.HeaderSessionID)
	require.NotEmpty(c.t, sid, "initialize answered without Mcp-Session-Id")
	return sid
}

// call sends a request and returns its response, from a JSON answer or the
// end of an SSE one.
func (c *httpClient) call(method string, params any) *messages.Message {
	c.t.Helper()
	body, id := c.request(method, params)
	r := c.post(body, nil)
	return r.response(c.t, id)
}

// response returns the answer to id: the JSON body, or the last message of
// the SSE stream, which must be it.
func (r *httpResp) response(t *testing.T, id messages.ID) *messages.Message {
	t.Helper()
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	var m *messages.Message
	switch r.contentType() {
	case mtJSON:
		m = r.msg
		require.NotNil(t, m, "body: %s", r.body)
	case mtSSE:
		msgs := r.messages(t)
		require.NotEmpty(t, msgs, "the stream ended without a message (%v)", r.endErr)
		m = msgs[len(msgs)-1]
	default:
		require.FailNowf(t, "unexpected Content-Type", "%q", r.header.Get("Content-Type"))
	}
	require.Contains(t, []messages.Kind{messages.KindResponse, messages.KindError}, m.Kind(), "got %+v", m)
	require.Equal(t, id, m.ID)
	return m
}

// callTool calls a tool and returns its result, which must not be a
// JSON-RPC error.
func (c *httpClient) callTool(name string, args any) *messages.CallToolResult {
	c.t.Helper()
	m := c.call(messages.MethodCallTool, toolParams(name, args, nil))
	require.Nil(c.t, m.Error, "tools/call %s", name)
	var res messages.CallToolResult
	require.NoError(c.t, json.Unmarshal(m.Result, &res))
	return &res
}

// toolParams are tools/call params, with a progress token when token is not
// nil.
func toolParams(name string, args any, token any) map[string]any {
	p := map[string]any{"name": name}
	if args != nil {
		p["arguments"] = args
	}
	if token != nil {
		p["_meta"] = map[string]any{"progressToken": token}
	}
	return p
}

// resultText is the text of a tool result's first block.
func resultText(t *testing.T, m *messages.Message) string {
	t.Helper()
	require.Nil(t, m.Error)
	s, isErr := firstText(t, m.Result)
	require.False(t, isErr, "tool error: %s", s)
	return s
}

// stream sends a request and returns its SSE answer for reading event by
// event. The status must be 200 and the body an event stream.
func (c *httpClient) stream(method string, body []byte, hdr http.Header) *sseReader {
	c.t.Helper()
	resp := c.open(method, body, hdr)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), mtSSE) {
		b := readAllWithin(c.t, resp.Body, watchdog)
		require.FailNowf(c.t, "not an event stream", "%s: %d %s: %s", method, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	return newSSEReader(c.t, resp)
}

// get opens a GET stream (lastEventID "" for none).
func (c *httpClient) get(lastEventID string) *sseReader {
	c.t.Helper()
	var hdr http.Header
	if lastEventID != "" {
		hdr = http.Header{headerLast: {lastEventID}}
	}
	return c.stream(http.MethodGet, nil, hdr)
}

// errorCode returns the JSON-RPC error code of a JSON answer.
func (r *httpResp) errorCode(t *testing.T) int64 {
	t.Helper()
	require.NotNil(t, r.msg, "not a JSON-RPC message: %s", r.body)
	require.NotNil(t, r.msg.Error, "not an error: %s", r.body)
	return r.msg.Error.Code
}
