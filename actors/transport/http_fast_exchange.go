package transport

import (
	"context"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/mcp-actors/mcp-actors/messages"
)

// fastExchange is an exchange on fasthttp.
type fastExchange struct {
	ctx      *fasthttp.RequestCtx
	o        *HTTPOptions
	retry    string
	watcher  *closeWatcher
	srv      *FastServer // serves a connection a GET stream gives back
	hostText string      // the Host header, once read
	start    time.Time
	// deferred is set when the answer outlives the handler (a stream, or a
	// taken-over connection): the Observer hears of it when it ends.
	deferred bool
}

func (x *fastExchange) method() string { return interned(x.ctx.Method()) }
func (x *fastExchange) header(name string) string {
	return interned(x.ctx.Request.Header.Peek(name))
}

func (x *fastExchange) host() string {
	if x.hostText == "" { // read twice per request (Host and Origin checks)
		x.hostText = string(x.ctx.Host())
	}
	return x.hostText
}

// interned returns v as a string, without copying the values every
// request carries alike (methods, media types, protocol versions).
func interned(v []byte) string {
	switch string(v) {
	case "":
		return ""
	case "POST":
		return "POST"
	case "GET":
		return "GET"
	case "DELETE":
		return "DELETE"
	case "application/json":
		return "application/json"
	}
	for _, version := range messages.SupportedVersions {
		if string(v) == version {
			return version
		}
	}
	return string(v)
}

func (x *fastExchange) context() context.Context { return x.ctx }

// sseBody is an event stream as an io.Reader that fasthttp pulls: each Read
// waits for the next events.
type sseBody struct {
	src     *eventSource
	o       *HTTPOptions
	retry   string
	method  string
	start   time.Time
	watcher *closeWatcher
	watch   *watch
	conn    net.Conn // for write deadlines: a client that stops reading is cut off

	buf      []byte // formatted events not yet read
	off      int
	finished bool // nothing after buf
	closed   bool
}

// Read returns formatted events, waiting for some.
func (b *sseBody) Read(p []byte) (int, error) {
	for b.off == len(b.buf) {
		if b.finished {
			return 0, io.EOF
		}
		frames, ping, done := b.src.next()
		var end bool
		b.buf, end = appendEvents(b.buf[:0], frames, ping, b.retry)
		b.off = 0
		b.finished = done || end
		if c, ok := b.conn.(*endConn); ok && b.finished {
			c.holdToEnd() // these events leave with the end of the body
		}
		if obs := b.o.Observer; obs != nil {
			for range frames {
				obs.StreamEvent(false)
			}
		}
	}
	n := copy(p, b.buf[b.off:])
	b.off += n
	_ = b.conn.SetWriteDeadline(time.Now().Add(b.o.WriteTimeout))
	return n, nil
}

// Close is called by fasthttp when the body is done, or when writing it
// failed (then the client is gone: the session must stop using the sink).
func (b *sseBody) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	if b.watcher != nil {
		b.watcher.remove(b.watch) // before fasthttp reads the next request
	}
	if !b.finished {
		b.src.failed()
	}
	if obs := b.o.Observer; obs != nil {
		obs.HTTPRequest(b.method, http.StatusOK, time.Since(b.start))
	}
	return nil
}

func (x *fastExchange) setHeader(name, value string) {
	x.ctx.Response.Header.Set(name, value)
}

func (x *fastExchange) headerValues(name string) []string {
	all := x.ctx.Request.Header.PeekAll(name)
	out := make([]string, len(all))
	for i, v := range all {
		out[i] = string(v)
	}
	return out
}

func (x *fastExchange) body(max int64) ([]byte, error) {
	b := x.ctx.PostBody() // fasthttp enforced MaxRequestBodySize
	if int64(len(b)) > max {
		return nil, errBodyTooLarge
	}
	// A copy: fasthttp reuses the buffer, and a decoded message keeps
	// slices of it for as long as its handler runs.
	return append([]byte(nil), b...), nil
}

func (x *fastExchange) reply(status int, body []byte) {
	x.ctx.SetStatusCode(status)
	if body != nil {
		x.ctx.SetContentType("application/json")
		x.ctx.SetBody(body)
	}
}

func (x *fastExchange) stream(src *eventSource) {
	x.ctx.SetStatusCode(http.StatusOK)
	x.ctx.SetContentType("text/event-stream")
	x.ctx.Response.Header.Set("Cache-Control", "no-cache")
	x.ctx.Response.Header.Set("X-Accel-Buffering", "no")
	body := &sseBody{src: src, o: x.o, retry: x.retry, method: x.method(), start: x.start, conn: x.ctx.Conn()}
	if src.gone != nil {
		body.watch = x.watcher.add(x.ctx.Conn(), src.gone)
		body.watcher = x.watcher
	}
	x.deferred = true // the body reports when it ends
	// fasthttp's connection goroutine pulls the body and writes it as
	// chunks, each flushed: no extra goroutine, no copy through a pipe.
	x.ctx.SetBodyStream(body, -1)
}

// streamAside writes the event stream straight onto the connection while
// fasthttp's goroutine runs the handler (fasthttp could only start a body
// once the handler function returns). The response ends with the
// connection, which is detached from fasthttp and closed. (Used where a
// directStream cannot be: HTTP/1.0, no chunked bodies.)
func (x *fastExchange) streamAside(src *eventSource) func() {
	conn, o, retry := x.ctx.Conn(), x.o, x.retry
	var wt *watch
	if src.gone != nil {
		wt = x.watcher.add(conn, src.gone)
	}
	done := make(chan struct{})
	x.deferred = true
	method, start := x.method(), x.start
	go func() {
		defer close(done)
		defer x.watcher.remove(wt)
		if obs := o.Observer; obs != nil { // the exchange ends with the stream
			defer func() { obs.HTTPRequest(method, http.StatusOK, time.Since(start)) }()
		}
		pumpEvents(conn, src, []byte(sseHead), false, o, retry)
	}()
	return func() {
		<-done
		x.ctx.SetConnectionClose()
		_ = x.ctx.Conn().(*endConn).detach().Close()
	}
}

func (x *fastExchange) canStreamDirect() bool {
	_, ok := x.ctx.Conn().(*endConn)
	return ok && x.ctx.Request.Header.IsHTTP11() // the stream is chunked
}

func (x *fastExchange) newDirect() *directStream {
	ec, ok := x.ctx.Conn().(*endConn)
	if !ok {
		return nil
	}
	return newDirectStream(ec.Conn, x.o, x.retry)
}

// finishDirect waits for the direct stream to end, then has fasthttp's own
// response dropped from the connection (or the connection closed, when
// the stream failed or was cut).
func (x *fastExchange) finishDirect(d *directStream) {
	x.ctx.Response.Reset() // a 200 with an empty body: only its head is written
	// d is nil only when nothing was written, which httpSink.Deliver rules out.
	if d == nil {
		x.ctx.SetConnectionClose()
		return
	}
	if !d.wait(x.ctx.Done()) {
		x.ctx.SetConnectionClose()
	}
	x.ctx.Conn().(*endConn).discardHead()
}

// canHijack: every connection FastServer serves is an endConn, which can
// hand its socket over.
// suspender: handlers wait as usual.
func (x *fastExchange) suspender() messages.Suspender { return nil }

func (x *fastExchange) canHijack() bool {
	_, ok := x.ctx.Conn().(*endConn)
	return ok
}

// hijack detaches the socket: fasthttp writes its response into nothing
// and lets go of the connection; the stream has the socket, and gives it
// back when it ends its body (HTTP/1.1 keep-alive).
func (x *fastExchange) hijack(take func(net.Conn, func(net.Conn))) {
	x.deferred = true // the stream reports when it ends
	var back func(net.Conn)
	if h := &x.ctx.Request.Header; h.IsHTTP11() && !h.ConnectionClose() {
		back = x.srv.serveAgain
	}
	x.ctx.SetConnectionClose()
	take(x.ctx.Conn().(*endConn).detach(), back)
}
