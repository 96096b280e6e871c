package transport

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testLimits are the limits the tests parse with, unless a case says.
var testLimits = requestLimits{maxHead: 1 << 10, maxBody: 1 << 12}

// parsedRequest is what a test expects of an httpRequest, in plain values.
type parsedRequest struct {
	method, target, path string
	http11, keepAlive    bool
	expect, chunked      bool
	contentLength        int64
	headers              []string // "name: value", in order
	body                 string
}

// summarize turns r into a parsedRequest.
func summarize(r *httpRequest) parsedRequest {
	p := parsedRequest{
		method: string(r.method), target: string(r.target), path: string(r.path),
		http11: r.http11, keepAlive: r.keepAlive, expect: r.expectContinue, chunked: r.chunked,
		contentLength: r.contentLength, body: string(r.body),
	}
	for _, f := range r.headers {
		p.headers = append(p.headers, string(f.name)+": "+string(f.value))
	}
	return p
}

var validRequests = []struct {
	name string
	raw  string
	want parsedRequest
}{{
	name: "GET",
	raw:  "GET /mcp?x=1 HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\n\r\n",
	want: parsedRequest{method: "GET", target: "/mcp?x=1", path: "/mcp", http11: true, keepAlive: true,
		contentLength: -1, headers: []string{"Host: example.com", "Accept: */*"}},
}, {
	name: "POST with Content-Length",
	raw:  "POST /mcp HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{\"a\":1}",
	want: parsedRequest{method: "POST", target: "/mcp", path: "/mcp", http11: true, keepAlive: true,
		contentLength: 7, body: `{"a":1}`,
		headers: []string{"Host: h", "Content-Type: application/json", "Content-Length: 7"}},
}, {
	name: "DELETE without body",
	raw:  "DELETE /mcp HTTP/1.1\r\nHost: h\r\nMcp-Session-Id: abc\r\n\r\n",
	want: parsedRequest{method: "DELETE", target: "/mcp", path: "/mcp", http11: true, keepAlive: true,
		contentLength: -1, headers: []string{"Host: h", "Mcp-Session-Id: abc"}},
}, {
	name: "DELETE with Content-Length 0",
	raw:  "DELETE /mcp HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n",
	want: parsedRequest{method: "DELETE", target: "/mcp", path: "/mcp", http11: true, keepAlive: true,
		headers: []string{"Host: h", "Content-Length: 0"}},
}, {
	name: "bare LF line ends",
	raw:  "GET / HTTP/1.1\nHost: h\n\n",
	want: parsedRequest{method: "GET", target: "/", path: "/", http11: true, keepAlive: true,
		contentLength: -1, headers: []string{"Host: h"}},
}, {
	name: "leading empty lines",
	raw:  "\r\n\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n",
	want: parsedRequest{method: "GET", target: "/", path: "/", http11: true, keepAlive: true,
		contentLength: -1, headers: []string{"Host: h"}},
}, {
	name: "values trimmed, empty and obs-text values",
	raw:  "GET / HTTP/1.1\r\nHost:h\r\nX-A: \t a  b \t\r\nX-Empty:\r\nX-Text: caf\xc3\xa9\r\n\r\n",
	want: parsedRequest{method: "GET", target: "/", path: "/", http11: true, keepAlive: true,
		contentLength: -1, headers: []string{"Host: h", "X-A: a  b", "X-Empty: ", "X-Text: caf\xc3\xa9"}},
}, {
	name: "HTTP/1.0 without Host closes",
	raw:  "GET /x HTTP/1.0\r\n\r\n",
	want: parsedRequest{method: "GET", target: "/x", path: "/x", contentLength: -1},
}, {
	name: "chunked with extensions and trailers",
	raw: "POST /mcp HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: Chunked\r\n\r\n" +
		"5;name=value;flag\r\nhello\r\n6;q=\"a b\"\r\n world\r\nA\r\n0123456789\r\n0\r\nX-Trailer: t\r\nX-Other: u\r\n\r\n",
	want: parsedRequest{method: "POST", target: "/mcp", path: "/mcp", http11: true, keepAlive: true,
		chunked: true, contentLength: -1, body: "hello world0123456789",
		headers: []string{"Host: h", "Transfer-Encoding: Chunked"}},
}, {
	name: "chunked, empty",
	raw:  "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
	want: parsedRequest{method: "POST", target: "/", path: "/", http11: true, keepAlive: true,
		chunked: true, contentLength: -1, headers: []string{"Host: h", "Transfer-Encoding: chunked"}},
}, {
	name: "absolute-form",
	raw:  "GET http://example.com:8080/a/b?x=1 HTTP/1.1\r\nHost: other\r\n\r\n",
	want: parsedRequest{method: "GET", target: "http://example.com:8080/a/b?x=1", path: "/a/b", http11: true,
		keepAlive: true, contentLength: -1, headers: []string{"Host: other"}},
}, {
	name: "absolute-form, empty path",
	raw:  "GET https://h?x HTTP/1.1\r\nHost: h\r\n\r\n",
	want: parsedRequest{method: "GET", target: "https://h?x", path: "/", http11: true,
		keepAlive: true, contentLength: -1, headers: []string{"Host: h"}},
}, {
	name: "absolute-form, IPv6",
	raw:  "GET http://[::1]:80/p HTTP/1.1\r\nHost: [::1]:80\r\n\r\n",
	want: parsedRequest{method: "GET", target: "http://[::1]:80/p", path: "/p", http11: true,
		keepAlive: true, contentLength: -1, headers: []string{"Host: [::1]:80"}},
}, {
	name: "asterisk-form",
	raw:  "OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n",
	want: parsedRequest{method: "OPTIONS", target: "*", path: "*", http11: true, keepAlive: true,
		contentLength: -1, headers: []string{"Host: h"}},
}, {
	name: "authority-form",
	raw:  "CONNECT h.example:443 HTTP/1.1\r\nHost: h.example:443\r\n\r\n",
	want: parsedRequest{method: "CONNECT", target: "h.example:443", http11: true, keepAlive: true,
		contentLength: -1, headers: []string{"Host: h.example:443"}},
}, {
	name: "empty Host, percent-encoded path",
	raw:  "GET /a%2Fb HTTP/1.1\r\nHost:\r\n\r\n",
	want: parsedRequest{method: "GET", target: "/a%2Fb", path: "/a%2Fb", http11: true, keepAlive: true,
		contentLength: -1, headers: []string{"Host: "}},
}, {
	name: "Content-Length repeated",
	raw:  "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\ncontent-length: 5, 5\r\n\r\nhello",
	want: parsedRequest{method: "POST", target: "/", path: "/", http11: true, keepAlive: true,
		contentLength: 5, body: "hello",
		headers: []string{"Host: h", "Content-Length: 5", "content-length: 5, 5"}},
}, {
	name: "100-continue with its body",
	raw:  "PUT /f HTTP/1.1\r\nHost: h\r\nExpect: 100-Continue\r\nContent-Length: 2\r\n\r\nhi",
	want: parsedRequest{method: "PUT", target: "/f", path: "/f", http11: true, keepAlive: true,
		expect: true, contentLength: 2, body: "hi",
		headers: []string{"Host: h", "Expect: 100-Continue", "Content-Length: 2"}},
}}

func TestParseRequestValid(t *testing.T) {
	for _, tc := range validRequests {
		t.Run(tc.name, func(t *testing.T) {
			var r httpRequest
			n, err := parseRequest([]byte(tc.raw), testLimits, &r)
			require.NoError(t, err)
			assert.Equal(t, len(tc.raw), n)
			assert.True(t, r.headDone)
			assert.Equal(t, tc.want, summarize(&r))
		})
	}
}

// TestParseRequestByteByByte feeds each valid request one byte at a time:
// nothing until the last byte, then what the whole request gives.
func TestParseRequestByteByByte(t *testing.T) {
	for _, tc := range validRequests {
		t.Run(tc.name, func(t *testing.T) {
			var r httpRequest
			headDone := false
			for i := range len(tc.raw) {
				n, err := parseRequest([]byte(tc.raw[:i]), testLimits, &r)
				require.NoError(t, err, "after %d bytes", i)
				require.Zero(t, n, "after %d bytes", i)
				assert.False(t, headDone && !r.headDone, "the head came undone after %d bytes", i)
				headDone = r.headDone
			}
			n, err := parseRequest([]byte(tc.raw), testLimits, &r)
			require.NoError(t, err)
			assert.Equal(t, len(tc.raw), n)
			assert.Equal(t, tc.want, summarize(&r))
		})
	}
}

func TestParseRequestPipelined(t *testing.T) {
	first := "POST /mcp HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello"
	second := "POST /mcp HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
	third := "GET /last HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"
	buf := []byte(first + second + third)
	var r httpRequest
	var got []string
	for len(buf) > 0 {
		n, err := parseRequest(buf, testLimits, &r)
		require.NoError(t, err)
		require.Positive(t, n)
		got = append(got, string(r.method)+" "+string(r.path)+" "+string(r.body))
		buf = buf[n:]
	}
	assert.Equal(t, []string{"POST /mcp hello", "POST /mcp abc", "GET /last "}, got)
	assert.False(t, r.keepAlive)

	// A partial second request does not disturb the first.
	buf = []byte(first + second[:20])
	n, err := parseRequest(buf, testLimits, &r)
	require.NoError(t, err)
	assert.Equal(t, len(first), n)
	assert.Equal(t, "hello", string(r.body))
}

func TestParseRequestContinue(t *testing.T) {
	head := "POST /mcp HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n"
	var r httpRequest
	n, err := parseRequest([]byte(head), testLimits, &r)
	require.NoError(t, err)
	assert.Zero(t, n, "the body has not arrived")
	assert.True(t, r.headDone)
	assert.True(t, r.expectContinue)
	assert.Equal(t, int64(5), r.contentLength)
	assert.Equal(t, "/mcp", string(r.path))

	n, err = parseRequest([]byte(head[:len(head)-1]), testLimits, &r)
	require.NoError(t, err)
	assert.Zero(t, n)
	assert.False(t, r.headDone, "the head's last LF is missing")

	// RFC 9110 §10.1.1: an HTTP/1.0 expectation is ignored.
	_, err = parseRequest([]byte("POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n"), testLimits, &r)
	require.NoError(t, err)
	assert.True(t, r.headDone)
	assert.False(t, r.expectContinue)
}

func TestParseRequestKeepAlive(t *testing.T) {
	for _, tc := range []struct {
		version, connection string // connection: "" for no header; "|" separates fields
		keep                bool
	}{
		{"HTTP/1.1", "", true},
		{"HTTP/1.1", "close", false},
		{"HTTP/1.1", "Close", false},
		{"HTTP/1.1", "keep-alive", true},
		{"HTTP/1.1", "Upgrade, CLOSE", false},
		{"HTTP/1.1", "upgrade|close", false},
		{"HTTP/1.1", "closed", true},
		{"HTTP/1.0", "", false},
		{"HTTP/1.0", "keep-alive", true},
		{"HTTP/1.0", "Keep-Alive", true},
		{"HTTP/1.0", "foo , keep-alive ,bar", true},
		{"HTTP/1.0", "keep-alive, close", false},
		{"HTTP/1.0", "keep-alive|close", false},
		{"HTTP/1.0", "keep-alives", false},
	} {
		t.Run(tc.version+" "+tc.connection, func(t *testing.T) {
			raw := "GET / " + tc.version + "\r\nHost: h\r\n"
			if tc.connection != "" {
				for v := range strings.SplitSeq(tc.connection, "|") {
					raw += "Connection: " + v + "\r\n"
				}
			}
			var r httpRequest
			_, err := parseRequest([]byte(raw+"\r\n"), testLimits, &r)
			require.NoError(t, err)
			assert.Equal(t, tc.keep, r.keepAlive)
		})
	}
}

func TestParseRequestHeaderLookup(t *testing.T) {
	var r httpRequest
	_, err := parseRequest([]byte("GET / HTTP/1.1\r\nHost: h\r\nAccept: a\r\nX-K: 1\r\naccept: b\r\n\r\n"), testLimits, &r)
	require.NoError(t, err)
	assert.Equal(t, "a", string(r.header("ACCEPT")))
	assert.Nil(t, r.header("Accept-Encoding"))
	assert.Nil(t, r.header("\xe2\x84\xaa-x"), "no Unicode folding: the Kelvin sign is not K")
	assert.Equal(t, [][]byte{[]byte("a"), []byte("b")}, headerValues(&r, "accept"))
	assert.Nil(t, headerValues(&r, "missing"))
}

const h11 = "Host: h\r\n"

var badRequests = []struct {
	name   string
	raw    string
	status int
}{
	{"too many empty lines", "\r\n\r\n\n\r\n\r\nGET / HTTP/1.1\r\n" + h11 + "\r\n", 400},
	{"one word", "GET\r\n\r\n", 400},
	{"no version", "GET /\r\n\r\n", 400},
	{"empty method", " / HTTP/1.1\r\n" + h11 + "\r\n", 400},
	{"method not a token", "G(T / HTTP/1.1\r\n" + h11 + "\r\n", 400},
	{"empty target", "GET  / HTTP/1.1\r\n" + h11 + "\r\n", 400},
	{"two spaces before version", "GET /  HTTP/1.1\r\n" + h11 + "\r\n", 400},
	{"space after version", "GET / HTTP/1.1 \r\n" + h11 + "\r\n", 400},
	{"space in target", "GET /a b HTTP/1.1\r\n" + h11 + "\r\n", 400},
	{"control in target", "GET /a\x01 HTTP/1.1\r\n" + h11 + "\r\n", 400},
	{"DEL in target", "GET /a\x7f HTTP/1.1\r\n" + h11 + "\r\n", 400},
	{"non-ASCII target", "GET /caf\xc3\xa9 HTTP/1.1\r\n" + h11 + "\r\n", 400},
	{"fragment", "GET /a#b HTTP/1.1\r\n" + h11 + "\r\n", 400},
	{"bad percent-encoding", "GET /a%zz HTTP/1.1\r\n" + h11 + "\r\n", 400},
	{"truncated percent-encoding", "GET /a%4 HTTP/1.1\r\n" + h11 + "\r\n", 400},
	{"relative target", "GET a/b HTTP/1.1\r\n" + h11 + "\r\n", 400},
	{"asterisk for GET", "GET * HTTP/1.1\r\n" + h11 + "\r\n", 400},
	{"CONNECT with a path", "CONNECT /x HTTP/1.1\r\n" + h11 + "\r\n", 400},
	{"CONNECT without port", "CONNECT h HTTP/1.1\r\n" + h11 + "\r\n", 400},
	{"absolute-form with userinfo", "GET http://u@h/ HTTP/1.1\r\n" + h11 + "\r\n", 400},
	{"absolute-form without host", "GET http:///p HTTP/1.1\r\n" + h11 + "\r\n", 400},
	{"absolute-form with bad port", "GET http://h:8x/ HTTP/1.1\r\n" + h11 + "\r\n", 400},
	{"absolute-form without //", "GET http:x HTTP/1.1\r\n" + h11 + "\r\n", 400},
	{"HTTP/2.0", "GET / HTTP/2.0\r\n" + h11 + "\r\n", 505},
	{"HTTP/1.2", "GET / HTTP/1.2\r\n" + h11 + "\r\n", 505},
	{"HTTP/0.9", "GET / HTTP/0.9\r\n\r\n", 505},
	{"lowercase version", "GET / http/1.1\r\n" + h11 + "\r\n", 400},
	{"long version", "GET / HTTP/1.10\r\n" + h11 + "\r\n", 400},
	{"no HTTP version", "GET / FOO\r\n" + h11 + "\r\n", 400},
	{"CR inside the request line", "GET / HTTP/1.1\r\r\n" + h11 + "\r\n", 400},
	{"space before colon", "GET / HTTP/1.1\r\nHost : h\r\n\r\n", 400},
	{"tab before colon", "GET / HTTP/1.1\r\n" + h11 + "X\t: v\r\n\r\n", 400},
	{"obs-fold", "GET / HTTP/1.1\r\n" + h11 + "X: a\r\n b\r\n\r\n", 400},
	{"whitespace before the first field", "GET / HTTP/1.1\r\n " + h11 + "\r\n", 400},
	{"no colon", "GET / HTTP/1.1\r\n" + h11 + "X\r\n\r\n", 400},
	{"empty name", "GET / HTTP/1.1\r\n" + h11 + ": v\r\n\r\n", 400},
	{"name not a token", "GET / HTTP/1.1\r\n" + h11 + "X@Y: v\r\n\r\n", 400},
	{"NUL in value", "GET / HTTP/1.1\r\n" + h11 + "X: a\x00b\r\n\r\n", 400},
	{"CR in value", "GET / HTTP/1.1\r\n" + h11 + "X: a\rb\r\n\r\n", 400},
	{"control in value", "GET / HTTP/1.1\r\n" + h11 + "X: a\x1bb\r\n\r\n", 400},
	{"missing Host", "GET / HTTP/1.1\r\nX: y\r\n\r\n", 400},
	{"two Hosts", "GET / HTTP/1.1\r\nHost: a\r\nhost: a\r\n\r\n", 400},
	{"two Hosts in HTTP/1.0", "GET / HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n", 400},
	{"Host with space", "GET / HTTP/1.1\r\nHost: a b\r\n\r\n", 400},
	{"Host with userinfo", "GET / HTTP/1.1\r\nHost: u@h\r\n\r\n", 400},
	{"Host with bad port", "GET / HTTP/1.1\r\nHost: h:99999\r\n\r\n", 400},
	{"Host, two colons", "GET / HTTP/1.1\r\nHost: h:1:2\r\n\r\n", 400},
	{"Host, unclosed IPv6", "GET / HTTP/1.1\r\nHost: [::1\r\n\r\n", 400},
	{"Host, bracketed IPv4", "GET / HTTP/1.1\r\nHost: [1.2.3.4]\r\n\r\n", 400},
	{"Content-Length not digits", "POST / HTTP/1.1\r\n" + h11 + "Content-Length: 1x\r\n\r\n", 400},
	{"Content-Length negative", "POST / HTTP/1.1\r\n" + h11 + "Content-Length: -1\r\n\r\n", 400},
	{"Content-Length signed", "POST / HTTP/1.1\r\n" + h11 + "Content-Length: +1\r\n\r\n", 400},
	{"Content-Length empty", "POST / HTTP/1.1\r\n" + h11 + "Content-Length:\r\n\r\n", 400},
	{"Content-Length overflows", "POST / HTTP/1.1\r\n" + h11 + "Content-Length: 9223372036854775808\r\n\r\n", 400},
	{"Content-Length list differs", "POST / HTTP/1.1\r\n" + h11 + "Content-Length: 1, 2\r\n\r\nx", 400},
	{"Content-Length list with empty element", "POST / HTTP/1.1\r\n" + h11 + "Content-Length: 1,\r\n\r\nx", 400},
	{"Content-Lengths differ", "POST / HTTP/1.1\r\n" + h11 + "Content-Length: 1\r\nContent-Length: 2\r\n\r\nx", 400},
	{"Content-Lengths differ in text", "POST / HTTP/1.1\r\n" + h11 + "Content-Length: 1\r\nContent-Length: 01\r\n\r\nx", 400},
	{"Content-Length with chunked", "POST / HTTP/1.1\r\n" + h11 + "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400},
	{"Transfer-Encoding in HTTP/1.0", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400},
	{"gzip", "POST / HTTP/1.1\r\n" + h11 + "Transfer-Encoding: gzip\r\n\r\n", 501},
	{"gzip, chunked", "POST / HTTP/1.1\r\n" + h11 + "Transfer-Encoding: gzip, chunked\r\n\r\n", 501},
	{"chunked, chunked", "POST / HTTP/1.1\r\n" + h11 + "Transfer-Encoding: chunked, chunked\r\n\r\n", 501},
	{"two Transfer-Encodings", "POST / HTTP/1.1\r\n" + h11 + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", 501},
	{"empty Transfer-Encoding", "POST / HTTP/1.1\r\n" + h11 + "Transfer-Encoding:\r\n\r\n", 501},
	{"Content-Length over maxBody", "POST / HTTP/1.1\r\n" + h11 + "Content-Length: 4097\r\n\r\n", 413},
	{"chunk over maxBody", chunked("1001\r\n"), 413},
	{"chunks over maxBody", chunked("800\r\n" + strings.Repeat("x", 0x800) + "\r\n801\r\n"), 413},
	{"chunk size not hex", chunked("x\r\n"), 400},
	{"chunk size empty", chunked("\r\n"), 400},
	{"chunk size empty with extension", chunked(";a\r\n"), 400},
	{"chunk size of 17 digits", chunked("00000000000000001\r\nx\r\n0\r\n\r\n"), 400},
	{"chunk size negative", chunked("-1\r\n"), 400},
	{"space after chunk size", chunked("5 \r\nhello\r\n0\r\n\r\n"), 400},
	{"space before chunk extension", chunked("5 ;a\r\nhello\r\n0\r\n\r\n"), 400},
	{"control in chunk extension", chunked("5;a\x01\r\nhello\r\n0\r\n\r\n"), 400},
	{"bare LF after chunk size", chunked("5\nhello\r\n0\r\n\r\n"), 400},
	{"bare CR in chunk line", chunked("5\r;a\r\nhello\r\n0\r\n\r\n"), 400},
	{"data longer than its size", chunked("5\r\nhelloX\r\n0\r\n\r\n"), 400},
	{"bare LF after data", chunked("5\r\nhello\n0\r\n\r\n"), 400},
	{"bare LF after last chunk", chunked("0\n\r\n"), 400},
	{"bare LF ending trailers", chunked("0\r\n\n"), 400},
	{"bad trailer", chunked("0\r\nno colon\r\n\r\n"), 400},
	{"folded trailer", chunked("0\r\nX: a\r\n b\r\n\r\n"), 400},
	{"chunk line too long", chunked("1;" + strings.Repeat("e", maxChunkLine) + "\r\nx\r\n0\r\n\r\n"), 400},
	{"too much chunk framing", chunked(strings.Repeat("1;"+strings.Repeat("e", 1000)+"\r\nx\r\n", 20)), 400},
	{"head over maxHead", "GET / HTTP/1.1\r\n" + h11 + "X: " + strings.Repeat("a", 1<<10) + "\r\n\r\n", 431},
	{"trailers over maxHead", chunked("0\r\nX: " + strings.Repeat("a", 1<<10) + "\r\n\r\n"), 431},
}

// chunked returns a chunked POST with this body.
func chunked(body string) string {
	return "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n" + body
}

func TestParseRequestErrors(t *testing.T) {
	for _, tc := range badRequests {
		t.Run(tc.name, func(t *testing.T) {
			var r httpRequest
			n, err := parseRequest([]byte(tc.raw), testLimits, &r)
			var he *httpError
			require.ErrorAs(t, err, &he)
			assert.Equal(t, tc.status, he.status, "%s", he.msg)
			assert.Zero(t, n)
			checkPrefixes(t, []byte(tc.raw), testLimits, 0, he, true)
		})
	}
}

// checkPrefixes checks that every prefix of buf gives nothing yet or the
// error buf gives (wantErr), and that buf[:wantN] is whole when wantN > 0.
// With every unset it checks only the first 64 prefixes that end just
// before or just past a LF, where a parser most often changes its mind: the
// fuzzer checks every input, and minimizing one runs thousands of them.
func checkPrefixes(t *testing.T, buf []byte, lim requestLimits, wantN int, wantErr *httpError, every bool) {
	t.Helper()
	var r httpRequest
	end := len(buf)
	if wantN > 0 {
		end = wantN
	}
	ends := 0
	for i := range end {
		if !every && buf[i] != '\n' && (i == 0 || buf[i-1] != '\n') {
			continue
		}
		if ends++; !every && ends > 64 {
			break
		}
		// No testify here: the fuzzer runs this loop on every input.
		n, err := parseRequest(buf[:i], lim, &r)
		if n != 0 || err != nil && err != error(wantErr) {
			t.Fatalf("%d bytes of %q: n %d, err %v; whole: n %d, err %v", i, buf, n, err, wantN, wantErr)
		}
	}
	if wantN > 0 {
		n, err := parseRequest(buf[:wantN], lim, &r)
		require.NoError(t, err)
		require.Equal(t, wantN, n)
	}
}

func TestParseRequestLimits(t *testing.T) {
	lim := requestLimits{maxHead: 64, maxBody: 10}
	line := "GET / HTTP/1.1\r\nHost: h\r\n" // 25 bytes
	fill := func(size int) string {         // a head of size bytes
		return line + "X: " + strings.Repeat("a", size-len(line)-7) + "\r\n\r\n"
	}
	var r httpRequest
	head := fill(64)
	n, err := parseRequest([]byte("\r\n"+head), lim, &r)
	require.NoError(t, err, "a head of maxHead bytes, empty lines before it aside")
	assert.Equal(t, 66, n)

	_, err = parseRequest([]byte(fill(65)), lim, &r)
	assert.Same(t, errHeadTooLarge, err)

	// 431 as soon as buf holds more than maxHead bytes without the head's end.
	partial := line + "X: " + strings.Repeat("a", 36)
	require.Len(t, partial, 64)
	n, err = parseRequest([]byte(partial), lim, &r)
	assert.Zero(t, n)
	assert.NoError(t, err)
	_, err = parseRequest([]byte(partial+"a"), lim, &r)
	assert.Same(t, errHeadTooLarge, err)

	// 413 from the declared length, before the body arrives.
	_, err = parseRequest([]byte(line+"Content-Length: 11\r\n\r\n"), lim, &r)
	assert.Same(t, errContentTooLarge, err)
	n, err = parseRequest([]byte(line+"Content-Length: 10\r\n\r\n0123456789"), lim, &r)
	require.NoError(t, err)
	assert.Positive(t, n)

	// 413 from the chunk sizes, before their data arrives.
	coded := line + "Transfer-Encoding: chunked\r\n\r\n" // 55 bytes
	_, err = parseRequest([]byte(coded+"6\r\nabcdef\r\n5\r\n"), lim, &r)
	assert.Same(t, errContentTooLarge, err)
	n, err = parseRequest([]byte(coded+"6\r\nabcdef\r\n4\r\nghij\r\n0\r\n\r\n"), lim, &r)
	require.NoError(t, err)
	assert.Equal(t, "abcdefghij", string(r.body))
	assert.Positive(t, n)

	// Trailers share maxHead with the head: 9 bytes are left.
	n, err = parseRequest([]byte(coded+"0\r\nT: 1234\r\n\r\n"), lim, &r)
	require.NoError(t, err)
	assert.Positive(t, n)
	_, err = parseRequest([]byte(coded+"0\r\nT: 12345\r\n\r\n"), lim, &r)
	assert.Same(t, errHeadTooLarge, err)
	_, err = parseRequest([]byte(coded+"0\r\nT: 1234567890"), lim, &r)
	assert.Same(t, errHeadTooLarge, err, "refused before the trailer line ends")
}

// TestParseRequestReuse checks that a reused httpRequest carries nothing
// over and that parsing allocates nothing once its slices have grown.
func TestParseRequestReuse(t *testing.T) {
	var r httpRequest
	chunkedReq := []byte(chunked("5;x=y\r\nhello\r\n0\r\nT: 1\r\n\r\n"))
	_, err := parseRequest(chunkedReq, testLimits, &r)
	require.NoError(t, err)
	require.Equal(t, "hello", string(r.body))

	_, err = parseRequest([]byte("GET / HTTP/1.0\r\n\r\n"), testLimits, &r)
	require.NoError(t, err)
	assert.Equal(t, parsedRequest{method: "GET", target: "/", path: "/", contentLength: -1}, summarize(&r))

	for _, tc := range validRequests {
		buf := []byte(tc.raw)
		_, err := parseRequest(buf, testLimits, &r)
		require.NoError(t, err)
		allocs := testing.AllocsPerRun(50, func() {
			_, _ = parseRequest(buf, testLimits, &r)
		})
		if strings.Contains(tc.raw, "[::1]") {
			// netip.ParseAddr copies each IPv6 literal it checks (the
			// target's and the Host's).
			assert.LessOrEqual(t, allocs, 2.0, tc.name)
			continue
		}
		assert.Zero(t, allocs, tc.name)
	}
}

// FuzzParseRequest checks that parseRequest never panics, that feeding a
// prefix of the input never disagrees with the whole, and that whatever it
// accepts net/http's http.ReadRequest reads the same way.
func FuzzParseRequest(f *testing.F) {
	for _, tc := range validRequests {
		f.Add([]byte(tc.raw))
	}
	for _, tc := range badRequests {
		// Not those of several KiB (chunk framing, a long chunk line):
		// minimizing what the fuzzer derives from them would take all
		// its time.
		if len(tc.raw) <= 2<<10 {
			f.Add([]byte(tc.raw))
		}
	}
	f.Add([]byte("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabcGET / HTTP/1.1\r\nHost: h\r\n\r\n"))
	f.Add([]byte("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\nconnection: x, close\r\n\r\n"))
	f.Add([]byte("GET / HTTP/1.1\r\nHost: h\r\nConnection: upgrade , close\r\nPragma: no-cache\r\n\r\n"))
	lim := requestLimits{maxHead: 512, maxBody: 4096}
	f.Fuzz(func(t *testing.T, in []byte) {
		var r httpRequest
		n, err := parseRequest(in, lim, &r)
		if err != nil {
			var he *httpError
			require.ErrorAs(t, err, &he)
			require.Contains(t, []int{400, 413, 431, 501, 505}, he.status)
			require.Zero(t, n)
		}
		require.LessOrEqual(t, n, len(in))
		wantErr, _ := err.(*httpError)
		checkPrefixes(t, in, lim, n, wantErr, len(in) <= 128)
		if n > 0 {
			require.True(t, r.headDone)
			compareWithNetHTTP(t, in, n, &r)
		}
	})
}

// compareWithNetHTTP checks that http.ReadRequest reads in, which
// parseRequest accepted as r using n bytes, the same way.
func compareWithNetHTTP(t *testing.T, in []byte, n int, r *httpRequest) {
	// RFC 9110 §8.6 lets a recipient take "Content-Length: 5, 5" as 5;
	// net/http refuses it.
	for _, v := range headerValues(r, "Content-Length") {
		if bytes.IndexByte(v, ',') >= 0 {
			return
		}
	}
	// RFC 9112 §2.2: empty lines before the request line are ignored;
	// http.ReadRequest does not skip them (its server does, after a POST).
	skip, err := skipEmptyLines(in)
	require.NoError(t, err)
	msg := in[skip:]
	rd := bytes.NewReader(msg)
	br := bufio.NewReaderSize(rd, len(msg)+16) // whole, so trailers are all in view
	req, err := http.ReadRequest(br)
	require.NoError(t, err, "net/http refuses %q", in)
	body, err := io.ReadAll(req.Body)
	require.NoError(t, err, "net/http refuses the body of %q", in)

	assert.Equal(t, n, skip+len(msg)-br.Buffered()-rd.Len(), "bytes used")
	assert.Equal(t, string(r.method), req.Method)
	assert.Equal(t, string(r.target), req.RequestURI)
	assert.Equal(t, r.http11, req.ProtoMinor == 1)
	assert.Equal(t, r.keepAlive, !req.Close)
	assert.Equal(t, r.chunked, slices.Equal(req.TransferEncoding, []string{"chunked"}))
	if !r.chunked {
		assert.Equal(t, max(r.contentLength, 0), req.ContentLength)
	}
	assert.Equal(t, string(r.body), string(body))

	if req.Method == http.MethodConnect {
		assert.Nil(t, r.path)
		assert.Equal(t, string(r.target), req.URL.Host)
	} else {
		path, err := url.PathUnescape(string(r.path))
		require.NoError(t, err)
		goPath := req.URL.Path
		if goPath == "" {
			goPath = "/" // an absolute-form target's empty path (RFC 9110 §4.2.3)
		}
		assert.Equal(t, path, goPath)
	}

	ours := map[string][]string{}
	for _, f := range r.headers {
		name := strings.ToLower(string(f.name))
		ours[name] = append(ours[name], string(f.value))
	}
	for name, values := range ours {
		switch name {
		case "content-length", "transfer-encoding":
			continue // net/http folds them into ContentLength and TransferEncoding, checked above
		case "host":
			// net/http moves Host to req.Host, which an absolute-form
			// target's authority overrides (RFC 9112 §3.2.2).
			if req.URL.Host == "" {
				assert.Equal(t, values[0], req.Host)
			}
			continue
		}
		assert.Equal(t, values, req.Header.Values(name), name)
	}
}

// headerValues returns every value of the named header, in order (may be
// nil).
func headerValues(r *httpRequest, name string) [][]byte {
	var vs [][]byte
	for _, f := range r.headers {
		if equalFold(f.name, name) {
			vs = append(vs, f.value)
		}
	}
	return vs
}

// BenchmarkParseRequest parses a typical MCP POST (a tools/call with its
// headers) the way LoopServer does for every request: into a reused
// httpRequest, with no allocation.
func BenchmarkParseRequest(b *testing.B) {
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"test_echo","arguments":{"message":"hello"}}}`
	raw := []byte("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: Go-http-client/1.1\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\nAccept: application/json, text/event-stream\r\n" +
		"Content-Type: application/json\r\nMcp-Protocol-Version: 2025-11-25\r\n" +
		"Mcp-Session-Id: 3uQe1c7mCq0u3d1bKkJ7pA\r\nAccept-Encoding: gzip\r\n\r\n" + body)
	var r httpRequest
	b.ReportAllocs()
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		r.reset()
		if n, err := parseRequest(raw, testLimits, &r); err != nil || n != len(raw) {
			b.Fatalf("parsed %d of %d bytes: %v", n, len(raw), err)
		}
	}
}
