package transport_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/actors/transport"
	"github.com/mcp-actors/mcp-actors/messages"
)

// rawGET sends a GET for c's session on conn and returns the response
// (its body unread) and the reader the connection's next response comes
// from.
func rawGET(t *testing.T, c *httpClient, conn net.Conn, extra string) (*http.Response, *bufio.Reader) {
	t.Helper()
	req := "GET /mcp HTTP/1.1\r\nHost: " + c.f.addr + "\r\nAccept: " + mtSSE +
		"\r\n" + transport.HeaderSessionID + ": " + c.sid +
		"\r\n" + transport.HeaderProtocolVersion + ": " + c.version + "\r\n" + extra + "\r\n"
	_, err := io.WriteString(conn, req)
	require.NoError(t, err)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, mtSSE, resp.Header.Get("Content-Type"))
	return resp, br
}

// TestGETStreamEndGivesTheConnectionBack checks how a GET stream that is
// not held ends when the server ends it (here: the session is deleted).
// Over HTTP/1.1 the body is chunked, ends cleanly, and the same connection
// then serves the client's next request; Shutdown closes such a
// connection.
func TestGETStreamEndGivesTheConnectionBack(t *testing.T) {
	t.Cleanup(transport.SetHoldAfter(time.Hour))
	var conn net.Conn
	t.Cleanup(func() { // runs after the fixture's shutdown
		if conn == nil {
			return
		}
		_ = conn.SetReadDeadline(time.Now().Add(watchdog))
		_, err := conn.Read(make([]byte, 1))
		assert.ErrorIs(t, err, io.EOF, "Shutdown closes a connection given back by a stream")
		_ = conn.Close()
	})
	f := newHTTPFixture(t, nil)
	c := f.client(t)
	c.initialize(messages.LatestVersion, messages.ClientCapabilities{})

	var err error
	conn, err = net.Dial("tcp", f.addr)
	require.NoError(t, err)
	require.NoError(t, conn.SetDeadline(time.Now().Add(2*watchdog)))
	resp, br := rawGET(t, c, conn, "")
	require.Equal(t, []string{"chunked"}, resp.TransferEncoding)

	// An event on the stream, then the session's end ends the stream.
	c.callTool("test_toggle_tool", nil)
	events := bufio.NewReader(resp.Body)
	line, err := events.ReadString('\n')
	for err == nil && !strings.HasPrefix(line, "data: {") {
		line, err = events.ReadString('\n')
	}
	require.NoError(t, err)
	assert.Contains(t, line, messages.MethodToolsListChanged)

	r := c.do(http.MethodDelete, nil, nil)
	require.Equal(t, http.StatusNoContent, r.status, "DELETE: %s", r.body)
	_, err = io.Copy(io.Discard, events)
	require.NoError(t, err, "the stream ends cleanly")

	// The same connection serves a new session's initialize.
	id := writeInitialize(t, c, conn)
	next, m := readAnswer(t, br)
	assert.Equal(t, id, m.ID)
	assert.NotEmpty(t, next.Header.Get(transport.HeaderSessionID))
}

// writeInitialize writes an initialize request for a new session on conn
// by hand and returns its ID.
func writeInitialize(t *testing.T, c *httpClient, conn net.Conn) messages.ID {
	t.Helper()
	body, id := c.request(messages.MethodInitialize, initParams(messages.LatestVersion, messages.ClientCapabilities{}))
	_, err := io.WriteString(conn, "POST /mcp HTTP/1.1\r\nHost: "+c.f.addr+"\r\nContent-Type: "+mtJSON+
		"\r\nAccept: "+acceptBoth+"\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+string(body))
	require.NoError(t, err)
	return id
}

// TestGETStreamClosesWhenAskedTo checks that a GET whose client asks for
// the connection to close gets it closed after the stream.
func TestGETStreamClosesWhenAskedTo(t *testing.T) {
	c, conn, _ := rawSession(t)
	resp, br := rawGET(t, c, conn, "Connection: close\r\n")
	assert.True(t, resp.Close)

	r := c.do(http.MethodDelete, nil, nil)
	require.Equal(t, http.StatusNoContent, r.status, "DELETE: %s", r.body)
	_, err := io.Copy(io.Discard, resp.Body)
	require.NoError(t, err, "the stream ends cleanly")
	_, err = br.ReadByte()
	assert.True(t, errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET), "the connection is closed: %v", err)
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
	for _, line := range strings.Split(string(events), "\n") {
		if data, ok := strings.CutPrefix(line, "data: {"); ok {
			m, derr := messages.Decode([]byte("{" + data))
			require.Nil(t, derr)
			answered = answered || (m.Kind() == messages.KindResponse && m.ID == id)
		}
	}
	assert.True(t, answered, "the response is in the stream: %s", events)
	_, err = br.ReadByte()
	assert.True(t, errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET), "the connection is closed: %v", err)
}

// TestGETStreamEndServesWhatFollowed checks that a request the client
// pipelined behind its GET is served once the server ends the stream (here
// the session's DELETE ends it, on the session actor's goroutine).
func TestGETStreamEndServesWhatFollowed(t *testing.T) {
	t.Cleanup(transport.SetHoldAfter(time.Hour)) // a held stream's connection is not served on
	c, conn, _ := rawSession(t)
	resp, br := rawGET(t, c, conn, "")
	id := writeInitialize(t, c, conn)

	r := c.do(http.MethodDelete, nil, nil)
	require.Equal(t, http.StatusNoContent, r.status, "DELETE: %s", r.body)
	_, err := io.Copy(io.Discard, resp.Body)
	require.NoError(t, err, "the stream ends cleanly")
	_, m := readAnswer(t, br)
	assert.Equal(t, id, m.ID)
}
