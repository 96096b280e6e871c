package transport

import (
	"bytes"
	"math"
	"net/http"
	"strconv"
)

// This file is the event-loop server's HTTP/1.x request parser (RFC 9112).
// It is strict where leniency lets two parsers disagree about where a
// request ends (request smuggling), and it keeps nothing between calls: the
// loop hands it everything read so far and calls again when more arrives.
// A call costs one pass over the head plus one step per chunk, so rescanning
// a growing buffer stays cheap; it allocates nothing once r's slices have
// grown to fit.

// requestLimits bounds what parseRequest accepts. The head is counted from
// the request line (empty lines before it aside) through the empty line
// that ends it; chunked trailers get what the head left of maxHead.
type requestLimits struct {
	maxHead int   // bytes of request line + headers (+ chunked trailers); over it: 431
	maxBody int64 // bytes of body (Content-Length, or the decoded chunked total); over it: 413
}

// headerField is one header line; both slices point into the buffer passed
// to parseRequest.
type headerField struct{ name, value []byte }

// httpRequest is one parsed request. It is reused: parseRequest resets it.
// Its slices point into the buffer passed to parseRequest (body of a chunked
// request excepted), so they are valid only while that buffer is unchanged.
type httpRequest struct {
	method []byte
	target []byte // request-target as sent, e.g. "/mcp?x=1"
	// path is target up to '?'. For an absolute-form target
	// ("http://h/p?q") it is the path part, "/" when that is empty
	// (RFC 9110 §4.2.3); "*" for asterisk-form; nil for CONNECT's
	// authority-form. Targets never hold '#' (a fragment is refused).
	path []byte
	// authority is the host[:port] of an absolute-form target, which takes
	// precedence over the Host header (RFC 9112 §3.2.2); nil otherwise.
	authority []byte
	// http11 is true for HTTP/1.1, false for HTTP/1.0.
	http11 bool
	// keepAlive: the connection persists after the response. HTTP/1.1
	// unless a Connection header names "close"; HTTP/1.0 only when one
	// names "keep-alive" and none "close" (RFC 9112 §9.3).
	keepAlive bool
	// expectContinue: "Expect: 100-continue" on HTTP/1.1 (an HTTP/1.0
	// expectation is ignored, RFC 9110 §10.1.1).
	expectContinue bool
	// headDone: the head (request line + headers) is complete and valid,
	// even if the body is not; the fields above and below it are filled.
	headDone bool
	// contentLength is the Content-Length value, 0 included; -1 when the
	// request has none, being chunked or bodiless.
	contentLength int64
	chunked       bool
	headers       []headerField // in order, as sent
	// body is the request content: a slice of the buffer for
	// Content-Length, the decoded chunks (in chunkBuf) for chunked, empty
	// when there is no body.
	body []byte
	// chunkBuf holds decoded chunked content; it is reused, so a chunked
	// body is overwritten by the next parseRequest.
	chunkBuf []byte
}

// header returns the first value of the named header (ASCII
// case-insensitive name match), or nil.
func (r *httpRequest) header(name string) []byte {
	for _, f := range r.headers {
		if equalFold(f.name, name) {
			return f.value
		}
	}
	return nil
}

// reset empties r but keeps the capacity of its slices. Old header entries
// are cleared so they do not pin the previous read buffer.
func (r *httpRequest) reset() {
	clear(r.headers)
	*r = httpRequest{headers: r.headers[:0], chunkBuf: r.chunkBuf[:0], contentLength: -1}
}

// httpError is a request the server must refuse, with this status, then
// close the connection.
type httpError struct {
	status int
	msg    string // short, safe to show to the client
}

func (e *httpError) Error() string {
	return "http " + strconv.Itoa(e.status) + ": " + e.msg
}

// The refusals parseRequest returns. They are shared: callers must not
// modify them.
var (
	errEmptyLines      = &httpError{http.StatusBadRequest, "too many empty lines before the request line"}
	errRequestLine     = &httpError{http.StatusBadRequest, "malformed request line"}
	errMethod          = &httpError{http.StatusBadRequest, "invalid method"}
	errTarget          = &httpError{http.StatusBadRequest, "invalid request target"}
	errVersion         = &httpError{http.StatusHTTPVersionNotSupported, "HTTP version not supported"}
	errFieldLine       = &httpError{http.StatusBadRequest, "malformed header field"}
	errObsFold         = &httpError{http.StatusBadRequest, "obsolete line folding"}
	errHeadTooLarge    = &httpError{http.StatusRequestHeaderFieldsTooLarge, "request header fields too large"}
	errNoHost          = &httpError{http.StatusBadRequest, "missing Host header"}
	errManyHosts       = &httpError{http.StatusBadRequest, "more than one Host header"}
	errHost            = &httpError{http.StatusBadRequest, "invalid Host header"}
	errContentLength   = &httpError{http.StatusBadRequest, "invalid Content-Length"}
	errLengthAndCoded  = &httpError{http.StatusBadRequest, "Content-Length with Transfer-Encoding"}
	errCodedHTTP10     = &httpError{http.StatusBadRequest, "Transfer-Encoding in an HTTP/1.0 request"}
	errCoding          = &httpError{http.StatusNotImplemented, "transfer encoding not supported"}
	errContentTooLarge = &httpError{http.StatusRequestEntityTooLarge, "content too large"}
	errChunked         = &httpError{http.StatusBadRequest, "malformed chunked encoding"}
)

const (
	// maxEmptyLines is how many empty lines may precede the request line:
	// RFC 9112 §2.2 asks to ignore at least one, which old clients send
	// after a POST body; a few cover them without letting a peer idle on
	// an endless stream of newlines.
	maxEmptyLines = 4
	// maxChunkLine bounds a chunk-size line with its extensions, CRLF
	// excluded: it must be shorter, as net/http's chunked reader has it.
	maxChunkLine = 4096
	// maxChunkExcess bounds chunk framing beyond 16 bytes per chunk plus
	// twice its data, net/http's rule: a peer cannot make the caller
	// buffer megabytes of extensions or one-byte chunks to deliver a few
	// bytes of content.
	maxChunkExcess = 16 << 10
)

// rootPath is the path of an absolute-form target with an empty path.
var rootPath = []byte("/")

// parseRequest parses the request at the start of buf into r.
//
// It returns n > 0 (bytes the request used, head and body, leading empty
// lines included) once buf holds a whole request; n == 0 and err == nil
// while it does not yet (then r.headDone tells whether the head is
// complete, and if so r's head fields are filled: the caller may answer
// "100 Continue", or refuse early); and err (*httpError) for a request that
// is malformed or over a limit. Over-limit requests are refused as soon as
// buf shows it: a head longer than lim.maxHead once buf holds more than
// that without the head's end, a body over lim.maxBody once its declared
// length or its chunk sizes say so.
//
// It decides nothing on bytes it has not seen: a prefix of buf gives
// n == 0 and no error, or what buf gives, so a request fed in pieces ends
// the same way as one read whole.
func parseRequest(buf []byte, lim requestLimits, r *httpRequest) (n int, err error) {
	r.reset()
	start, err := skipEmptyLines(buf)
	if err != nil || start < 0 {
		return 0, err
	}
	headLen, err := r.parseHead(buf[start:], lim.maxHead)
	if err != nil || headLen == 0 {
		return 0, err
	}
	if err := r.checkHead(lim.maxBody); err != nil {
		return 0, err
	}
	r.headDone = true
	at := start + headLen
	switch {
	case r.chunked:
		return r.readChunked(buf, at, lim.maxBody, lim.maxHead-headLen)
	case r.contentLength > 0:
		if int64(len(buf)-at) < r.contentLength {
			return 0, nil
		}
		end := at + int(r.contentLength)
		r.body = buf[at:end]
		return end, nil
	}
	return at, nil
}

// skipEmptyLines returns where the request line starts in buf, or -1 while
// buf holds only empty lines (or a lone CR that may start one).
func skipEmptyLines(buf []byte) (int, error) {
	at := 0
	for lines := 0; ; lines++ {
		var eol int
		switch rest := buf[at:]; {
		case len(rest) == 0 || len(rest) == 1 && rest[0] == '\r':
			return -1, nil
		case rest[0] == '\n':
			eol = 1
		case rest[0] == '\r' && rest[1] == '\n':
			eol = 2
		default:
			return at, nil
		}
		if lines == maxEmptyLines {
			return 0, errEmptyLines
		}
		at += eol
	}
}

// parseHead parses the request line and header fields at the start of
// head into r and returns the head's length, its final empty line
// included, or 0 while it is incomplete. Only the first maxHead bytes are
// looked at, so a head that does not end there is refused (431) as soon as
// more bytes have arrived, not once its end finally does.
func (r *httpRequest) parseHead(head []byte, maxHead int) (int, error) {
	window := head[:min(len(head), max(maxHead, 0))]
	incomplete := func() (int, error) {
		if len(head) > len(window) {
			return 0, errHeadTooLarge
		}
		return 0, nil
	}
	line, at, ok := nextLine(window, 0)
	if !ok {
		return incomplete()
	}
	if err := r.parseRequestLine(line); err != nil {
		return 0, err
	}
	for {
		line, next, ok := nextLine(window, at)
		if !ok {
			return incomplete()
		}
		at = next
		if len(line) == 0 {
			return at, nil
		}
		f, err := parseFieldLine(line)
		if err != nil {
			return 0, err
		}
		r.headers = append(r.headers, f)
	}
}

// nextLine returns the line at b[from:] without its CRLF or bare LF
// (RFC 9112 §2.2 lets a recipient accept LF alone in the head), and where
// the next one starts; ok is false when the line has no end yet.
func nextLine(b []byte, from int) (line []byte, next int, ok bool) {
	i := bytes.IndexByte(b[from:], '\n')
	if i < 0 {
		return nil, 0, false
	}
	line = b[from : from+i]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	return line, from + i + 1, true
}

// parseRequestLine parses "method SP request-target SP HTTP-version"
// (RFC 9112 §3), single spaces only.
func (r *httpRequest) parseRequestLine(line []byte) error {
	method, rest, ok1 := bytes.Cut(line, []byte{' '})
	target, version, ok2 := bytes.Cut(rest, []byte{' '})
	if !ok1 || !ok2 {
		return errRequestLine
	}
	if !isToken(method) {
		return errMethod
	}
	switch string(version) {
	case "HTTP/1.1":
		r.http11 = true
	case "HTTP/1.0":
	default:
		if len(version) == len("HTTP/x.y") && string(version[:5]) == "HTTP/" &&
			isDigit(version[5]) && version[6] == '.' && isDigit(version[7]) {
			return errVersion
		}
		return errRequestLine
	}
	path, authority, ok := targetPath(method, target)
	if !ok {
		return errTarget
	}
	r.method, r.target, r.path, r.authority = method, target, path, authority
	return nil
}

// parseFieldLine parses "name: value" (RFC 9112 §5): a token name with the
// colon right after it, the value trimmed of SP and HTAB and free of
// control characters other than HTAB (RFC 9110 §5.5 lets a recipient refuse
// them; CR, LF and NUL it must). A line starting with whitespace is
// obs-fold, which a server may refuse (RFC 9112 §5.2).
func parseFieldLine(line []byte) (headerField, error) {
	if line[0] == ' ' || line[0] == '\t' {
		return headerField{}, errObsFold
	}
	colon := bytes.IndexByte(line, ':')
	if colon < 0 || !isToken(line[:colon]) {
		return headerField{}, errFieldLine
	}
	value := trimOWS(line[colon+1:])
	for _, c := range value {
		if !isFieldByte(c) {
			return headerField{}, errFieldLine
		}
	}
	return headerField{name: line[:colon], value: value}, nil
}

// checkHead checks the fields that frame the request and the connection
// (Host, Content-Length, Transfer-Encoding, Connection, Expect) and sets
// r's framing and connection fields from them.
func (r *httpRequest) checkHead(maxBody int64) error {
	var hosts, codings int
	var host, length, coding []byte
	var closes, keeps, expect bool
	for _, f := range r.headers {
		switch {
		case equalFold(f.name, "host"):
			hosts++
			host = f.value
		case equalFold(f.name, "content-length"):
			v, ok := lengthValue(f.value, length)
			if !ok {
				return errContentLength
			}
			length = v
		case equalFold(f.name, "transfer-encoding"):
			codings++
			coding = f.value
		case equalFold(f.name, "connection"):
			closes = closes || hasToken(f.value, "close")
			keeps = keeps || hasToken(f.value, "keep-alive")
		case equalFold(f.name, "expect"):
			expect = expect || equalFold(f.value, "100-continue")
		}
	}
	// RFC 9112 §3.2: one valid Host, required in HTTP/1.1; an empty one
	// is valid (a target with no authority).
	switch {
	case hosts > 1:
		return errManyHosts
	case hosts == 0 && r.http11:
		return errNoHost
	case hosts == 1 && len(host) > 0 && !validAuthority(host, false):
		return errHost
	}
	// RFC 9112 §6.1: a Transfer-Encoding in HTTP/1.0 means faulty framing,
	// and one alongside Content-Length may be refused. Like net/http,
	// only a lone "chunked" is supported; it must be last in any case.
	if codings > 0 {
		switch {
		case !r.http11:
			return errCodedHTTP10
		case length != nil:
			return errLengthAndCoded
		case codings > 1 || !equalFold(coding, "chunked"):
			return errCoding
		}
		r.chunked = true
	} else if length != nil {
		n, ok := parseDecimal(length)
		if !ok {
			return errContentLength
		}
		if n > maxBody {
			return errContentTooLarge
		}
		r.contentLength = n
	}
	r.keepAlive = !closes && (r.http11 || keeps)
	r.expectContinue = expect && r.http11
	return nil
}

// lengthValue returns the decimal value a Content-Length field carries,
// which must match prev, the value of earlier ones (nil if none). A comma
// list of one value repeated counts as that value (RFC 9110 §8.6 lets a
// recipient accept it, as it does repeated fields); values are compared as
// sent, so "5" and "05" conflict.
func lengthValue(v, prev []byte) ([]byte, bool) {
	for {
		elem, rest, more := bytes.Cut(v, []byte{','})
		elem = trimOWS(elem)
		if len(elem) == 0 || prev != nil && !bytes.Equal(elem, prev) {
			return nil, false
		}
		for _, c := range elem {
			if !isDigit(c) {
				return nil, false
			}
		}
		if !more {
			return elem, true
		}
		prev, v = elem, rest
	}
}

// parseDecimal parses digits (as checked by lengthValue) into an int64,
// refusing overflow.
func parseDecimal(digits []byte) (int64, bool) {
	var n int64
	for _, c := range digits {
		d := int64(c - '0')
		if n > (math.MaxInt64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// hasToken reports whether the comma-separated list v names token (ASCII
// case-insensitive), as net/http's httpguts.HeaderValuesContainsToken.
func hasToken(v []byte, token string) bool {
	for {
		elem, rest, more := bytes.Cut(v, []byte{','})
		if equalFold(trimOWS(elem), token) {
			return true
		}
		if !more {
			return false
		}
		v = rest
	}
}

// equalFold reports whether b and s are equal under ASCII case folding
// only: bytes.EqualFold would also fold non-ASCII (the Kelvin sign to 'k').
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(s) {
		if lowerASCII(b[i]) != lowerASCII(s[i]) {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// trimOWS trims SP and HTAB from both ends of b.
func trimOWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// tchar marks the bytes of a token (RFC 9110 §5.6.2).
var tchar = func() (t [256]bool) {
	for c := range 256 {
		t[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || isDigit(byte(c))
	}
	for _, c := range []byte("!#$%&'*+-.^_`|~") {
		t[c] = true
	}
	return t
}()

func isToken(b []byte) bool {
	for _, c := range b {
		if !tchar[c] {
			return false
		}
	}
	return len(b) > 0
}

// isFieldByte reports whether c may appear in a field value: HTAB, SP,
// visible ASCII or obs-text.
func isFieldByte(c byte) bool { return c == '\t' || c >= ' ' && c != 0x7f }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isHex(c byte) bool { return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func unhex(c byte) byte {
	switch {
	case isDigit(c):
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
