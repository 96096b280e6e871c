package transport_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/actors/transport"
	"github.com/mcp-actors/mcp-actors/messages"
)

// rawPOST is the text of a POST of body for c's session, with extra
// header lines (each ending in CRLF) and the Content-Length given (or the
// body's own when cl is "").
func rawPOST(c *httpClient, body []byte, extra, cl string) string {
	if cl == "" {
		cl = strconv.Itoa(len(body))
	}
	return "POST /mcp HTTP/1.1\r\nHost: " + c.f.addr + "\r\nContent-Type: " + mtJSON +
		"\r\nAccept: " + acceptBoth + "\r\n" + transport.HeaderSessionID + ": " + c.sid +
		"\r\n" + transport.HeaderProtocolVersion + ": " + c.version + "\r\n" + extra +
		"Content-Length: " + cl + "\r\n\r\n" + string(body)
}

// rawSession starts a fixture, opens a session on it, and dials a raw
// connection to write requests for that session by hand.
func rawSession(t *testing.T) (*httpClient, net.Conn, *bufio.Reader) {
	t.Helper()
	f := newHTTPFixture(t, nil)
	c := f.client(t)
	c.initialize(messages.LatestVersion, messages.ClientCapabilities{})
	conn, br := dialRaw(t, f)
	return c, conn, br
}

func dialRaw(t *testing.T, f *httpFixture) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", f.addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	require.NoError(t, conn.SetDeadline(time.Now().Add(2*watchdog)))
	return conn, bufio.NewReader(conn)
}

// readAnswer reads one response and its JSON-RPC message.
func readAnswer(t *testing.T, br *bufio.Reader) (*http.Response, *messages.Message) {
	t.Helper()
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodPost})
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	m, derr := messages.Decode(body)
	require.Nil(t, derr, "%s", body)
	return resp, m
}

// TestHTTPPipelinedRequests checks two requests written at once on one
// connection: both are answered, in order.
func TestHTTPPipelinedRequests(t *testing.T) {
	c, conn, br := rawSession(t)
	first, id1 := c.request(messages.MethodCallTool, toolParams("test_echo", map[string]any{"text": "one"}, nil))
	second, id2 := c.request(messages.MethodPing, nil)
	_, err := io.WriteString(conn, rawPOST(c, first, "", "")+rawPOST(c, second, "", ""))
	require.NoError(t, err)
	_, m := readAnswer(t, br)
	assert.Equal(t, id1, m.ID)
	assert.Equal(t, "one", resultText(t, m))
	_, m = readAnswer(t, br)
	assert.Equal(t, id2, m.ID)
}

// TestHTTPRequestArrivingInPieces checks a request whose head and body
// arrive in several writes, split mid-line. Each write leaves as a segment
// of its own (Go's TCP connections set TCP_NODELAY); whether the server
// reads them apart or together, the answer is the same. (parseRequest's
// own tests feed requests byte by byte.)
func TestHTTPRequestArrivingInPieces(t *testing.T) {
	c, conn, br := rawSession(t)
	body, id := c.request(messages.MethodCallTool, toolParams("test_echo", map[string]any{"text": "pieces"}, nil))
	req := rawPOST(c, body, "", "")
	from := 0
	for _, to := range []int{7, 40, len(req) - len(body) - 3, len(req) - 5, len(req)} {
		_, err := io.WriteString(conn, req[from:to])
		require.NoError(t, err)
		from = to
	}
	_, m := readAnswer(t, br)
	assert.Equal(t, id, m.ID)
	assert.Equal(t, "pieces", resultText(t, m))
}

// TestHTTPExpectContinue checks a client that waits for "100 Continue"
// before it sends its body (curl does, for large bodies).
func TestHTTPExpectContinue(t *testing.T) {
	c, conn, br := rawSession(t)
	body, id := c.request(messages.MethodPing, nil)
	req := rawPOST(c, body, "Expect: 100-continue\r\n", "")
	_, err := io.WriteString(conn, strings.TrimSuffix(req, string(body)))
	require.NoError(t, err)
	line, err := br.ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "HTTP/1.1 100 Continue\r\n", line)
	blank, err := br.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "\r\n", blank)
	_, err = conn.Write(body)
	require.NoError(t, err)
	_, m := readAnswer(t, br)
	assert.Equal(t, id, m.ID)
}

// TestHTTPChunkedRequestBody checks a POST whose body is chunked.
func TestHTTPChunkedRequestBody(t *testing.T) {
	c, conn, br := rawSession(t)
	body, id := c.request(messages.MethodCallTool, toolParams("test_echo", map[string]any{"text": "chunks"}, nil))
	head := strings.TrimSuffix(rawPOST(c, nil, "Transfer-Encoding: chunked\r\n", "x"), "Content-Length: x\r\n\r\n") + "\r\n"
	half := len(body) / 2
	chunked := strconv.FormatInt(int64(half), 16) + "\r\n" + string(body[:half]) + "\r\n" +
		strconv.FormatInt(int64(len(body)-half), 16) + ";ext=1\r\n" + string(body[half:]) + "\r\n0\r\n\r\n"
	_, err := io.WriteString(conn, head+chunked)
	require.NoError(t, err)
	_, m := readAnswer(t, br)
	assert.Equal(t, id, m.ID)
	assert.Equal(t, "chunks", resultText(t, m))
}

// TestHTTPMalformedRequestsAreRefused checks requests no HTTP server may
// serve: each gets a 4xx or 5xx answer, never an HTML page.
func TestHTTPMalformedRequestsAreRefused(t *testing.T) {
	f := newHTTPFixture(t, nil)
	cases := map[string]string{
		"garbage":            "HELLO\r\n\r\n",
		"space before colon": "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type : application/json\r\n\r\n",
		"bad length":         "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: -3\r\n\r\n",
		"length and chunked": "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
		"huge head":          "GET /mcp HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 64<<10) + "\r\n\r\n",
	}
	for name, req := range cases {
		t.Run(name, func(t *testing.T) {
			conn, br := dialRaw(t, f)
			_, _ = io.WriteString(conn, req) // the server may close before it has read all
			resp, err := http.ReadResponse(br, nil)
			require.NoError(t, err)
			_, _ = io.Copy(io.Discard, resp.Body)
			assert.GreaterOrEqual(t, resp.StatusCode, 400)
			assert.NotContains(t, resp.Header.Get("Content-Type"), "html")
		})
	}
}

// TestHTTPSilentHandlerDoesNotHoldOthers checks that a handler that
// blocks without sending anything (here "gate") holds up nobody else: the
// other sessions' requests are answered meanwhile.
func TestHTTPSilentHandlerDoesNotHoldOthers(t *testing.T) {
	f := newHTTPFixture(t, nil)
	a := f.client(t)
	a.initialize(messages.LatestVersion, messages.ClientCapabilities{})
	b := f.client(t)
	b.initialize(messages.LatestVersion, messages.ClientCapabilities{})
	body, id := a.request(messages.MethodCallTool, toolParams("gate", nil, nil))
	held := a.openAsync(http.MethodPost, body, nil)
	recv(t, f.gateStarted, "gate to start")
	for i := range 20 {
		text := "while held " + strconv.Itoa(i)
		assert.Equal(t, text, textOf(t, b.callTool("test_echo", map[string]any{"text": text})))
	}
	f.gate <- struct{}{}
	m := held.read().response(t, id)
	assert.Equal(t, "opened", resultText(t, m))
}

// TestHTTPAbsoluteFormTargetHostIsChecked checks that the host an
// absolute-form target names is the one the Host allow-list sees (RFC 9112
// §3.2.2: it takes precedence over the Host header).
func TestHTTPAbsoluteFormTargetHostIsChecked(t *testing.T) {
	f := newHTTPFixture(t, nil)
	conn, br := dialRaw(t, f)
	body, err := messages.EncodeRequest(messages.IntID(1), messages.MethodInitialize, initParams(messages.LatestVersion, messages.ClientCapabilities{}))
	require.NoError(t, err)
	_, err = io.WriteString(conn, "POST http://evil.example/mcp HTTP/1.1\r\nHost: "+f.addr+"\r\nContent-Type: "+mtJSON+
		"\r\nAccept: "+acceptBoth+"\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+string(body))
	require.NoError(t, err)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
}

// TestHTTPHeadGetsNoBody checks that the answer to a HEAD (405 here) has
// no body, so that the connection serves the next request cleanly.
func TestHTTPHeadGetsNoBody(t *testing.T) {
	f := newHTTPFixture(t, nil)
	conn, br := dialRaw(t, f)
	body, err := messages.EncodeRequest(messages.IntID(1), messages.MethodInitialize, initParams(messages.LatestVersion, messages.ClientCapabilities{}))
	require.NoError(t, err)
	_, err = io.WriteString(conn, "HEAD /mcp HTTP/1.1\r\nHost: "+f.addr+"\r\n\r\n"+
		"POST /mcp HTTP/1.1\r\nHost: "+f.addr+"\r\nContent-Type: "+mtJSON+"\r\nAccept: "+acceptBoth+
		"\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+string(body))
	require.NoError(t, err)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodHead})
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	_, m := readAnswer(t, br)
	assert.Equal(t, messages.IntID(1), m.ID)
}
