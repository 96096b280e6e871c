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
	_, err := io.WriteString(conn, rawGETRequest(c, "HTTP/1.1", extra))
	require.NoError(t, err)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, mtSSE, resp.Header.Get("Content-Type"))
	return resp, br
}

// TestGETStreamEndClosesTheConnection checks how a GET stream ends when
// the server ends it (here: the session is deleted) and the handler has no
// listener to give a held connection back to (HTTPOptions.Listener), whether
// net/http still serves the stream or it is held: over HTTP/1.1 its head
// says the connection closes after it, the chunked body ends cleanly, and
// the connection is closed — a client never takes it back into its pool.
// (With a listener: TestGETStreamKeepsItsConnection.)
func TestGETStreamEndClosesTheConnection(t *testing.T) {
	for _, hold := range []time.Duration{time.Hour, 0} {
		t.Run(map[bool]string{true: "served", false: "held"}[hold > 0], func(t *testing.T) {
			t.Cleanup(transport.SetHoldAfter(hold))
			c, conn, _ := rawSession(t)
			require.NoError(t, conn.SetDeadline(time.Now().Add(2*watchdog)))
			resp, br := rawGET(t, c, conn, "")
			require.Equal(t, []string{"chunked"}, resp.TransferEncoding)
			assert.True(t, resp.Close, "the head says the connection closes after the stream")

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
			_, err = br.ReadByte()
			assert.True(t, errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET), "the connection is closed: %v", err)
		})
	}
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

// TestGETStreamEndLeavesPipelinedRequests checks a request the client
// pipelined behind its GET, without a listener to give connections back
// to: the stream's head said the connection closes after it, so when the
// server ends the stream (here the session's DELETE ends it, on the
// session actor's goroutine) the body ends cleanly and the
// connection closes without serving the request, which the client sends
// again on a new connection (RFC 9112, 9.6).
func TestGETStreamEndLeavesPipelinedRequests(t *testing.T) {
	t.Cleanup(transport.SetHoldAfter(time.Hour))
	c, conn, _ := rawSession(t)
	require.NoError(t, conn.SetDeadline(time.Now().Add(2*watchdog)))
	resp, br := rawGET(t, c, conn, "")
	assert.True(t, resp.Close)
	writeInitialize(t, c, conn)

	r := c.do(http.MethodDelete, nil, nil)
	require.Equal(t, http.StatusNoContent, r.status, "DELETE: %s", r.body)
	_, err := io.Copy(io.Discard, resp.Body)
	require.NoError(t, err, "the stream ends cleanly")
	_, err = br.ReadByte()
	assert.True(t, errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET), "the connection is closed: %v", err)
}
