package transport_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/actors/transport"
	"github.com/mcp-actors/mcp-actors/internal/sse"
	"github.com/mcp-actors/mcp-actors/messages"
)

// How a GET stream's connection fares when the server ends the stream: it
// is a plain net/http response, so the connection serves the client's next
// request, as any keep-alive connection does, unless the client asked for
// it to close or its protocol cannot say where the body ends.

// TestGETStreamKeepsItsConnection checks a GET stream the server ends
// (here: the session is deleted): its head does not say Connection:
// close, its body ends cleanly, and the client's next request is served
// on the same TCP connection.
func TestGETStreamKeepsItsConnection(t *testing.T) {
	f := newHTTPFixture(t, nil)
	c := f.client(t)
	c.initialize(messages.LatestVersion, messages.ClientCapabilities{})
	g := f.client(t) // one connection: the GET's, then the next request's
	g.hc.Transport.(*http.Transport).MaxConnsPerHost = 1
	g.sid, g.version = c.sid, c.version

	resp := g.open(http.MethodGet, nil, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.False(t, resp.Close, "the head keeps the connection alive")
	assert.Empty(t, resp.Header.Get("Connection"))
	endGETStream(t, c, resp)
	require.NoError(t, resp.Body.Close())

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
}

// TestGETStreamKeepsPipelinedRequests checks a request the client
// pipelined behind its GET, on one TCP connection: when the server ends
// the stream (here the session's DELETE ends it, on the session actor's
// goroutine), the request is served after it.
func TestGETStreamKeepsPipelinedRequests(t *testing.T) {
	f := newHTTPFixture(t, nil)
	c := f.client(t)
	c.initialize(messages.LatestVersion, messages.ClientCapabilities{})
	dialed := f.dialed.Load()
	conn, br := dialRaw(t, f)

	init, id := rawInitialize(c)
	_, err := io.WriteString(conn, rawGETRequest(c, "HTTP/1.1", "")+init)
	require.NoError(t, err)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.False(t, resp.Close)
	endGETStream(t, c, resp)
	next, m := readAnswer(t, br)
	assert.Equal(t, id, m.ID, "the pipelined initialize is answered")
	assert.NotEmpty(t, next.Header.Get(transport.HeaderSessionID))
	assert.Equal(t, dialed+1, f.dialed.Load(), "one connection")
}

// TestGETStreamClosesItsConnection checks the GET streams whose
// connection closes when the server ends them: the client asked for it to
// close, or an HTTP/1.0 body ends with its connection.
func TestGETStreamClosesItsConnection(t *testing.T) {
	for _, tc := range []struct{ name, proto, extra string }{
		{name: "asked to", proto: "HTTP/1.1", extra: "Connection: close\r\n"},
		{name: "HTTP/1.0", proto: "HTTP/1.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, conn, br := rawSession(t)
			_, err := io.WriteString(conn, rawGETRequest(c, tc.proto, tc.extra))
			require.NoError(t, err)
			resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet})
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, resp.StatusCode)
			require.Equal(t, mtSSE, resp.Header.Get("Content-Type"))
			assert.True(t, resp.Close, "the head says the connection closes")
			endGETStream(t, c, resp)
			_, err = br.ReadByte()
			assert.True(t, errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET), "the connection is closed: %v", err)
		})
	}
}

// TestGETStreamConnectionCarriesSessions checks that nothing of a GET
// stream touches its connection once the stream has ended: with keep-alive
// comments due every few milliseconds, one TCP connection carries session
// after session — initialize, initialized, a GET until it has been pinged,
// the session deleted — and every answer on it parses, no stray comment in
// between. Run it with -race -count=20.
func TestGETStreamConnectionCarriesSessions(t *testing.T) {
	f := newHTTPFixture(t, &httpSetup{HTTP: transport.HTTPOptions{KeepAlive: 4 * time.Millisecond}})
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
		events := sse.NewReader(resp.Body)
		for {
			ev, err := events.Next()
			require.NoError(t, err)
			if len(ev.Comments) > 0 {
				break // pinged
			}
		}
		r := c.do(http.MethodDelete, nil, nil)
		require.Equal(t, http.StatusNoContent, r.status, "DELETE: %s", r.body)
		for err == nil {
			_, err = events.Next()
		}
		require.ErrorIs(t, err, io.EOF, "the stream ends cleanly")
	}
	assert.Equal(t, int64(2), f.dialed.Load(), "the client's connection and the raw one")
}

// TestHTTP10StreamEndsWithTheConnection checks a POST whose handler
// streams, from an HTTP/1.0 client (no chunked bodies): its events and
// its response come in a body that ends with the connection.
func TestHTTP10StreamEndsWithTheConnection(t *testing.T) {
	c, conn, br := rawSession(t)

	body, id := c.request(messages.MethodCallTool, toolParams("test_tool_with_logging", nil, nil))
	_, err := io.WriteString(conn, "POST /mcp HTTP/1.0\r\nHost: "+c.f.addr+"\r\nContent-Type: "+mtJSON+
		"\r\nAccept: "+acceptBoth+"\r\n"+transport.HeaderSessionID+": "+c.sid+
		"\r\n"+transport.HeaderProtocolVersion+": "+c.version+
		"\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+string(body))
	require.NoError(t, err)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodPost})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, mtSSE, strings.TrimSpace(strings.Split(resp.Header.Get("Content-Type"), ";")[0]))
	assert.Empty(t, resp.TransferEncoding, "HTTP/1.0: not chunked")
	events, err := io.ReadAll(resp.Body)
	require.NoError(t, err, "the body ends cleanly, with the connection")
	assert.Contains(t, string(events), messages.MethodLogMessage)
	var answered bool
	for _, ev := range sse.Parse(events) {
		if len(ev.Data) > 0 {
			m, derr := messages.Decode(ev.Data)
			require.Nil(t, derr)
			answered = answered || (m.Kind() == messages.KindResponse && m.ID == id)
		}
	}
	assert.True(t, answered, "the response is in the stream: %s", events)
	_, err = br.ReadByte()
	assert.True(t, errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET), "the connection is closed: %v", err)
}

// endGETStream has c's session deleted, and reads the GET stream resp's
// body to its end, which must be clean.
func endGETStream(t *testing.T, c *httpClient, resp *http.Response) {
	t.Helper()
	r := c.do(http.MethodDelete, nil, nil)
	require.Equal(t, http.StatusNoContent, r.status, "DELETE: %s", r.body)
	_, err := io.Copy(io.Discard, resp.Body)
	require.NoError(t, err, "the stream ends cleanly")
}

// writeInitialize writes an initialize request for a new session on conn
// by hand and returns its ID.
func writeInitialize(t *testing.T, c *httpClient, conn net.Conn) messages.ID {
	t.Helper()
	req, id := rawInitialize(c)
	_, err := io.WriteString(conn, req)
	require.NoError(t, err)
	return id
}

// rawInitialize is the text of a POST of initialize, with no session.
func rawInitialize(c *httpClient) (string, messages.ID) {
	body, id := c.request(messages.MethodInitialize, initParams(messages.LatestVersion, messages.ClientCapabilities{}))
	return "POST /mcp HTTP/1.1\r\nHost: " + c.f.addr + "\r\nContent-Type: " + mtJSON +
		"\r\nAccept: " + acceptBoth + "\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + string(body), id
}

// rawGETRequest is the text of a GET for c's session, with extra header
// lines (each ending in CRLF).
func rawGETRequest(c *httpClient, proto, extra string) string {
	return "GET /mcp " + proto + "\r\nHost: " + c.f.addr + "\r\nAccept: " + mtSSE +
		"\r\n" + transport.HeaderSessionID + ": " + c.sid +
		"\r\n" + transport.HeaderProtocolVersion + ": " + c.version + "\r\n" + extra + "\r\n"
}
