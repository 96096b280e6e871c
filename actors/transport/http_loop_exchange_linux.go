package transport

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcp-actors/mcp-actors/messages"
)

// loopExchange is an exchange on a LoopServer's connection. Answers are
// written as soon as they are made, by the goroutine making them.
type loopExchange struct {
	s        *LoopServer
	c        *pollConn
	t        *task // the task serving it, or nil
	req      *httpRequest
	raw      []byte    // the whole request as received
	hdr      []byte    // header lines set by setHeader
	vals     [2]string // scratch for headerValues
	start    time.Time
	status   int
	keep     bool // the connection serves on after this exchange
	answered bool
	// deferred: the answer outlives the call to the endpoint (a stream, a
	// taken-over connection); whoever finishes it releases the connection.
	deferred bool
}

func (x *loopExchange) method() string            { return interned(x.req.method) }
func (x *loopExchange) header(name string) string { return x.c.strs.get(x.req.header(name)) }
func (x *loopExchange) context() context.Context  { return x.s.ctx }

// host is the Host header, or the authority of an absolute-form target,
// which takes precedence (RFC 9112 §3.2.2).
func (x *loopExchange) host() string {
	h := x.req.authority
	if h == nil {
		h = x.req.header("Host")
	}
	return x.c.strs.get(h)
}

func (x *loopExchange) headerValues(name string) []string {
	out := x.vals[:0]
	for _, f := range x.req.headers {
		if equalFold(f.name, name) {
			out = append(out, x.c.strs.get(f.value))
		}
	}
	return out
}

func (x *loopExchange) body(max int64) ([]byte, error) {
	if int64(len(x.req.body)) > max {
		return nil, errBodyTooLarge
	}
	// A copy: the connection's buffer serves the next request, and a
	// decoded message keeps slices of it for as long as its handler runs.
	return append([]byte(nil), x.req.body...), nil
}

func (x *loopExchange) setHeader(name, value string) {
	if strings.ContainsAny(value, "\r\n") || strings.ContainsAny(name, "\r\n: ") {
		return // never a header split
	}
	x.hdr = append(x.hdr, name...)
	x.hdr = append(x.hdr, ": "...)
	x.hdr = append(x.hdr, value...)
	x.hdr = append(x.hdr, "\r\n"...)
}

// head appends the status line and the headers every answer carries.
func (x *loopExchange) head(b []byte, status int) []byte {
	b = append(b, "HTTP/1.1 "...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, ' ')
	b = append(b, http.StatusText(status)...)
	b = append(b, "\r\n"...)
	b = append(b, x.hdr...)
	switch {
	case !x.keep:
		b = append(b, "Connection: close\r\n"...)
	case !x.req.http11:
		b = append(b, "Connection: keep-alive\r\n"...)
	}
	return b
}

func (x *loopExchange) reply(status int, body []byte) {
	var ctype []byte
	if body != nil {
		ctype = jsonContentType
	}
	x.answer(status, ctype, body)
}

var (
	jsonContentType  = []byte("Content-Type: application/json\r\n")
	plainContentType = []byte("Content-Type: text/plain; charset=utf-8\r\n")
)

// answerBuffers hold answers while they are written (Write returns once
// the socket has taken all).
var answerBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// answer writes a whole answer: the head, the given header lines, the
// length, and the body (not for HEAD, whose answer has none).
func (x *loopExchange) answer(status int, headers, body []byte) {
	buf := answerBuffers.Get().(*[]byte)
	b := append(x.head((*buf)[:0], status), headers...)
	if status != http.StatusNoContent {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, int64(len(body)), 10)
		b = append(b, "\r\n"...)
	}
	b = append(b, "\r\n"...)
	if string(x.req.method) != http.MethodHead {
		b = append(b, body...)
	}
	x.answered, x.status = true, status
	_ = x.c.SetWriteDeadline(time.Now().Add(x.s.ep.opts.WriteTimeout))
	if _, err := x.c.Write(b); err != nil {
		x.keep = false
	}
	if cap(b) <= 64<<10 {
		*buf = b[:0]
		answerBuffers.Put(buf)
	}
}

// observeStream tells the Observer a stream has ended.
func (x *loopExchange) observeStream() {
	if obs := x.s.ep.opts.Observer; obs != nil {
		obs.HTTPRequest(x.method(), http.StatusOK, time.Since(x.start))
	}
}

// stream writes the event stream on a goroutine of its own, which then
// serves the connection's next request.
func (x *loopExchange) stream(src *eventSource) {
	x.deferred = true
	x.startStream()
	x.watchGone(src.gone)
	// The goroutine ends with the stream: src says done at the latest when
	// the server's context ends (Shutdown), and the connection counts as
	// busy until then.
	go func() {
		x.writeStream(src)
		x.observeStream()
		x.s.resume(x.c, x.keep)
	}()
}

// watchGone has gone called if the client hangs up while the stream is
// written.
func (x *loopExchange) watchGone(gone func()) {
	if gone != nil {
		x.c.tellGone(gone)
	}
}

// streamAside writes the event stream while this goroutine runs a
// request's handler: on HTTP/1.0, whose stream ends with the connection.
func (x *loopExchange) streamAside(src *eventSource) func() {
	done := make(chan struct{})
	x.startStream()
	x.watchGone(src.gone)
	go func() {
		defer close(done)
		x.writeStream(src)
	}()
	return func() {
		<-done
		x.keep = false
		x.observeStream()
	}
}

// startStream settles the answer before a goroutine writes the stream.
func (x *loopExchange) startStream() {
	x.answered, x.status = true, http.StatusOK
	if !x.req.http11 {
		x.keep = false // no chunked body: it ends with the connection
	}
}

// writeStream writes a 200 event stream until src says done: chunked on
// HTTP/1.1, so that the connection serves on; otherwise until the
// connection closes.
func (x *loopExchange) writeStream(src *eventSource) {
	chunked := x.req.http11
	b := append(x.head(nil, http.StatusOK), sseHeaders...)
	if chunked {
		b = append(b, "Transfer-Encoding: chunked\r\n"...)
	}
	b = append(b, "\r\n"...)
	if !pumpEvents(x.c, src, b, chunked, &x.s.ep.opts, x.s.ep.retry) {
		x.keep = false
	}
}

// canStreamDirect: a directStream's body is chunked.
func (x *loopExchange) canStreamDirect() bool { return x.req.http11 }

// newDirect returns a stream written straight onto the connection.
func (x *loopExchange) newDirect() *directStream {
	return newDirectStream(x.c, &x.s.ep.opts, x.s.ep.retry)
}

// suspender is the task serving x, which a handler waiting for its client
// suspends (see task).
func (x *loopExchange) suspender() messages.Suspender {
	if x.t == nil {
		return nil
	}
	return x.t
}

// finishDirect waits for the direct stream to be written.
func (x *loopExchange) finishDirect(d *directStream) {
	x.answered, x.status = true, http.StatusOK
	if d == nil || !d.wait(x.s.ctx.Done()) {
		x.keep = false
	}
}

func (x *loopExchange) canHijack() bool { return true }

// hijack hands the connection to a long-lived stream; on HTTP/1.1 the
// stream gives it back when its body ends, and it serves the client's
// next request.
func (x *loopExchange) hijack(take func(net.Conn, func(net.Conn))) {
	x.deferred, x.answered = true, true
	var back func(net.Conn)
	if x.req.http11 && x.keep {
		s, c := x.s, x.c // not x: it holds the request's buffer
		back = func(net.Conn) { s.giveBack(c) }
	}
	x.c.dropServed() // a stream may live for hours: its buffer goes now
	take(x.c, back)
}
