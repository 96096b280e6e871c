package transport_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/actors/transport"
	"github.com/mcp-actors/mcp-actors/messages"
)

// onBothPaths runs test with GET streams served by net/http (never held
// in time) and held at once.
func onBothPaths(t *testing.T, test func(t *testing.T, held bool)) {
	for _, held := range []bool{false, true} {
		t.Run(map[bool]string{false: "served", true: "held"}[held], func(t *testing.T) {
			hold := time.Hour
			if held {
				hold = 0
			}
			t.Cleanup(transport.SetHoldAfter(hold))
			test(t, held)
		})
	}
}

// TestGETStreamKeepsItsConnection checks a GET stream the server ends
// (here: the session is deleted) when the handler's http.Server accepts
// from a transport.Listener: its head does not say Connection: close, its
// body ends cleanly, and the client's next request is served on the same
// TCP connection — given back to the listener when the stream was held.
func TestGETStreamKeepsItsConnection(t *testing.T) {
	onBothPaths(t, func(t *testing.T, held bool) {
		f := newHTTPFixture(t, &httpSetup{GiveBack: true})
		c := f.client(t)
		c.initialize(messages.LatestVersion, messages.ClientCapabilities{})
		g := f.client(t) // one connection: the GET's, then the next request's
		g.hc.Transport.(*http.Transport).MaxConnsPerHost = 1
		g.sid, g.version = c.sid, c.version

		resp := g.open(http.MethodGet, nil, nil)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.False(t, resp.Close, "the head keeps the connection alive")
		assert.Empty(t, resp.Header.Get("Connection"))
		endGETStream(t, f, c, resp, held)
		require.NoError(t, resp.Body.Close())
		// The stream is forgotten just after its last write.
		assert.Eventually(t, func() bool { return transport.Held(f.h) == 0 }, watchdog, time.Millisecond)

		dialed := f.dialed.Load()
		var reused bool
		trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused }}
		ctx, cancel := context.WithTimeout(httptrace.WithClientTrace(context.Background(), trace), watchdog)
		defer cancel()
		g.sid = ""
		body, _ := g.request(messages.MethodInitialize, initParams(messages.LatestVersion, messages.ClientCapabilities{}))
		next, err := g.hc.Do(g.newRequest(ctx, http.MethodPost, body, http.Header{transport.HeaderProtocolVersion: {""}}))
		require.NoError(t, err, "the next request on the stream's connection")
		_, _ = io.Copy(io.Discard, next.Body)
		require.NoError(t, next.Body.Close())
		assert.Equal(t, http.StatusOK, next.StatusCode)
		assert.True(t, reused, "the next request went on the stream's connection")
		assert.Equal(t, dialed, f.dialed.Load(), "the server accepted no new connection for it")
	})
}

// TestGETStreamKeepsPipelinedRequests checks a request the client
// pipelined behind its GET, on one TCP connection: when the server ends
// the stream, the request is served after it — what net/http had read of
// it before the stream was held survives the give-back.
func TestGETStreamKeepsPipelinedRequests(t *testing.T) {
	onBothPaths(t, func(t *testing.T, held bool) {
		f := newHTTPFixture(t, &httpSetup{GiveBack: true})
		c := f.client(t)
		c.initialize(messages.LatestVersion, messages.ClientCapabilities{})
		dialed := f.dialed.Load()
		conn, br := dialRaw(t, f)

		// The GET and the request behind it in one write: net/http reads
		// both into its buffer before the stream is held.
		init, id := rawInitialize(c)
		_, err := io.WriteString(conn, rawGETRequest(c, "HTTP/1.1", "")+init)
		require.NoError(t, err)
		resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet})
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.False(t, resp.Close)
		endGETStream(t, f, c, resp, held)
		next, m := readAnswer(t, br)
		assert.Equal(t, id, m.ID, "the pipelined initialize is answered")
		assert.NotEmpty(t, next.Header.Get(transport.HeaderSessionID))
		assert.Equal(t, dialed+1, f.dialed.Load(), "one connection")
	})
}

// TestGETStreamClosesItsConnection checks the GET streams whose
// connection closes when the server ends them, although the handler has a
// listener to give connections back to: the client asked for it to close,
// or an HTTP/1.0 body ends with its connection.
func TestGETStreamClosesItsConnection(t *testing.T) {
	for _, tc := range []struct{ name, proto, extra string }{
		{name: "asked to", proto: "HTTP/1.1", extra: "Connection: close\r\n"},
		{name: "HTTP/1.0", proto: "HTTP/1.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			onBothPaths(t, func(t *testing.T, held bool) {
				f := newHTTPFixture(t, &httpSetup{GiveBack: true})
				c := f.client(t)
				c.initialize(messages.LatestVersion, messages.ClientCapabilities{})
				conn, br := dialRaw(t, f)
				_, err := io.WriteString(conn, rawGETRequest(c, tc.proto, tc.extra))
				require.NoError(t, err)
				resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet})
				require.NoError(t, err)
				require.Equal(t, http.StatusOK, resp.StatusCode)
				assert.True(t, resp.Close, "the head says the connection closes")
				endGETStream(t, f, c, resp, held)
				_, err = br.ReadByte()
				assert.True(t, errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET), "the connection is closed: %v", err)
			})
		})
	}
}

// TestGETStreamOverTLSClosesItsConnection checks that a TLS connection is
// never given back, even to a listener under the TLS one (net/http would
// wrap it in TLS again): the head of a GET stream says Connection: close.
func TestGETStreamOverTLSClosesItsConnection(t *testing.T) {
	t.Cleanup(transport.SetHoldAfter(0))
	f := newHTTPFixture(t, nil)
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ln := transport.NewListener(inner)
	h := transport.NewHTTPHandler(f.srv.Router(), &transport.HTTPOptions{ListenAddr: inner.Addr().String(), Listener: ln})
	ts := httptest.NewUnstartedServer(h)
	ts.Listener = ln // under the TLS listener StartTLS adds
	ts.StartTLS()
	t.Cleanup(ts.Close)
	hc := ts.Client()

	send := func(method, sid, body string) *http.Response {
		req, err := http.NewRequest(method, ts.URL+"/mcp", strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", mtJSON)
		req.Header.Set("Accept", acceptBoth)
		if sid != "" {
			req.Header.Set(transport.HeaderSessionID, sid)
			req.Header.Set(transport.HeaderProtocolVersion, messages.LatestVersion)
		}
		resp, err := hc.Do(req)
		require.NoError(t, err)
		t.Cleanup(func() { _ = resp.Body.Close() })
		return resp
	}
	resp := send(http.MethodPost, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+
		messages.LatestVersion+`","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	_, _ = io.Copy(io.Discard, resp.Body)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	sid := resp.Header.Get(transport.HeaderSessionID)
	require.Equal(t, http.StatusAccepted, send(http.MethodPost, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).StatusCode)

	get := send(http.MethodGet, sid, "")
	require.Equal(t, http.StatusOK, get.StatusCode)
	require.Equal(t, 1, get.ProtoMajor)
	assert.True(t, get.Close, "the head says the connection closes after the stream")
	require.Eventually(t, func() bool { return transport.Held(h) == 1 }, watchdog, time.Millisecond, "the stream is held")
	require.Equal(t, http.StatusNoContent, send(http.MethodDelete, sid, "").StatusCode)
	_, err = io.Copy(io.Discard, get.Body)
	require.NoError(t, err, "the stream ends cleanly")
}

// TestGivenBackConnectionIsLeftAlone checks that nothing of a held stream
// touches its connection once given back: with keep-alive comments due
// every few milliseconds, one TCP connection carries session after
// session — initialize, initialized, a GET held until the hub has pinged
// it, the session deleted — and every answer on it parses, no stray comment
// in between. Run it with -race -count=20.
func TestGivenBackConnectionIsLeftAlone(t *testing.T) {
	t.Cleanup(transport.SetHoldAfter(0))
	f := newHTTPFixture(t, &httpSetup{GiveBack: true, HTTP: transport.HTTPOptions{KeepAlive: 4 * time.Millisecond}})
	c := f.client(t)
	c.version = messages.LatestVersion
	conn, br := dialRaw(t, f)
	for range 8 {
		writeInitialize(t, c, conn)
		resp, _ := readAnswer(t, br)
		c.sid = resp.Header.Get(transport.HeaderSessionID)
		require.NotEmpty(t, c.sid)
		initialized := notification(t, messages.MethodInitialized, nil)
		_, err := io.WriteString(conn, rawPOST(c, initialized, "", ""))
		require.NoError(t, err)
		resp, err = http.ReadResponse(br, &http.Request{Method: http.MethodPost})
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		require.Equal(t, http.StatusAccepted, resp.StatusCode)

		_, err = io.WriteString(conn, rawGETRequest(c, "HTTP/1.1", ""))
		require.NoError(t, err)
		resp, err = http.ReadResponse(br, &http.Request{Method: http.MethodGet})
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		events := bufio.NewReader(resp.Body)
		for {
			line, err := events.ReadString('\n')
			require.NoError(t, err)
			if strings.HasPrefix(line, ":") {
				break // held, and pinged by the hub
			}
		}
		r := c.do(http.MethodDelete, nil, nil)
		require.Equal(t, http.StatusNoContent, r.status, "DELETE: %s", r.body)
		_, err = io.Copy(io.Discard, events)
		require.NoError(t, err, "the stream ends cleanly")
	}
}

// TestShutdownClosesGivenBackConnections checks that http.Server.Shutdown
// does not wait for a connection given back that its client keeps idle:
// net/http takes it for a new connection, which Shutdown waits 5 s for,
// and the listener's Close, which Shutdown begins with, closes it.
func TestShutdownClosesGivenBackConnections(t *testing.T) {
	t.Cleanup(transport.SetHoldAfter(0))
	f := newHTTPFixture(t, &httpSetup{GiveBack: true})
	c := f.client(t)
	c.initialize(messages.LatestVersion, messages.ClientCapabilities{})
	g := f.client(t)
	g.sid, g.version = c.sid, c.version
	resp := g.open(http.MethodGet, nil, nil)
	endGETStream(t, f, c, resp, true)
	require.NoError(t, resp.Body.Close()) // the connection waits in g's pool
	require.NoError(t, f.srv.Close(context.Background()))

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	assert.NoError(t, f.hs.Shutdown(ctx), "Shutdown waited for the connection given back")
}

// endGETStream waits, with held, until the GET stream resp is held, has
// c's session deleted, and reads the stream's body to its end, which must
// be clean.
func endGETStream(t *testing.T, f *httpFixture, c *httpClient, resp *http.Response, held bool) {
	t.Helper()
	if held {
		require.Eventually(t, func() bool { return transport.Held(f.h) == 1 }, watchdog, time.Millisecond, "the stream is held")
	}
	r := c.do(http.MethodDelete, nil, nil)
	require.Equal(t, http.StatusNoContent, r.status, "DELETE: %s", r.body)
	_, err := io.Copy(io.Discard, resp.Body)
	require.NoError(t, err, "the stream ends cleanly")
}
