package transport

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/mcp-actors/mcp-actors/messages"
)

// HTTPHandler serves the Streamable HTTP transport as a net/http Handler, to
// mount in any server (see NewHTTPServer for suitable timeouts). The
// endpoint's rules are in http_endpoint.go and docs/http.md; FastServer
// serves the same endpoint on fasthttp, with less CPU per request.
type HTTPHandler struct {
	ep *endpoint
}

// NewHTTPHandler returns the transport for host's sessions. opts may be
// nil.
func NewHTTPHandler(host SessionHost, opts *HTTPOptions) *HTTPHandler {
	return &HTTPHandler{ep: newEndpoint(host, opts)}
}

// StartDrain makes the handler refuse new sessions (503) while existing
// ones finish; see mcpactors.Server.Shutdown.
func (h *HTTPHandler) StartDrain() { h.ep.draining.Store(true) }

// Close stops the handler's idle goroutines. Event streams still open are
// closed by their sessions.
func (h *HTTPHandler) Close() { h.ep.close() }

// ServeHTTP implements http.Handler.
func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	x := &stdExchange{w: w, r: r, o: &h.ep.opts, start: time.Now()}
	if obs := h.ep.opts.Observer; obs != nil {
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		x.w = sw
		defer func() {
			if !x.hijacked && !x.aside { // those report when their stream ends
				obs.HTTPRequest(r.Method, sw.status, time.Since(x.start))
			}
		}()
	}
	h.ep.serve(x)
}

// stdExchange is an exchange on net/http.
type stdExchange struct {
	w        http.ResponseWriter
	r        *http.Request
	o        *HTTPOptions
	start    time.Time
	hijacked bool
	aside    bool // streamed by a second goroutine (streamAside)
}

func (x *stdExchange) method() string                    { return x.r.Method }
func (x *stdExchange) header(name string) string         { return x.r.Header.Get(name) }
func (x *stdExchange) headerValues(name string) []string { return x.r.Header.Values(name) }
func (x *stdExchange) host() string                      { return x.r.Host }
func (x *stdExchange) context() context.Context          { return x.r.Context() }
func (x *stdExchange) setHeader(name, value string)      { x.w.Header().Set(name, value) }

func (x *stdExchange) body(max int64) ([]byte, error) {
	// A client that trickles its body is cut off (slow loris).
	_ = http.NewResponseController(x.w).SetReadDeadline(time.Now().Add(x.o.WriteTimeout))
	b, err := io.ReadAll(http.MaxBytesReader(x.w, x.r.Body, max))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, errBodyTooLarge
	}
	return b, err
}

func (x *stdExchange) reply(status int, body []byte) {
	if body != nil {
		x.w.Header().Set("Content-Type", "application/json")
	}
	x.w.WriteHeader(status)
	if body != nil {
		_, _ = x.w.Write(body)
	}
}

func (x *stdExchange) stream(src *eventSource) {
	h := x.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // let proxies stream
	x.w.WriteHeader(http.StatusOK)   // sent with the first events, in one write
	rc := http.NewResponseController(x.w)
	ew := newEventWriter(x.w, rc.Flush, rc.SetWriteDeadline, x.o)
	ctx := x.r.Context()
	for {
		frames, ping, done := src.next()
		end, err := ew.write(frames, ping)
		if err != nil || (done && !end && ctx.Err() != nil) {
			src.failed()
			return
		}
		if end || done {
			return
		}
	}
}

func (x *stdExchange) streamAside(src *eventSource) func() {
	done := make(chan struct{})
	x.aside = true
	go func() {
		defer close(done)
		if obs := x.o.Observer; obs != nil { // the exchange ends with the stream
			defer func() { obs.HTTPRequest(x.r.Method, http.StatusOK, time.Since(x.start)) }()
		}
		x.stream(src) // the handler goroutine does not touch the writer meanwhile
	}()
	return func() { <-done }
}

// net/http streams a handler's frames with a second goroutine (streamAside).
func (x *stdExchange) canStreamDirect() bool      { return false }
func (x *stdExchange) newDirect() *directStream   { return nil }
func (x *stdExchange) finishDirect(*directStream) {}

// suspender: handlers wait as usual.
func (x *stdExchange) suspender() messages.Suspender { return nil }

func (x *stdExchange) canHijack() bool { return x.r.ProtoMajor == 1 }

func (x *stdExchange) hijack(take func(net.Conn, func(net.Conn))) {
	conn, _, err := http.NewResponseController(x.w).Hijack()
	if err != nil {
		take(nil, nil)
		return
	}
	x.hijacked = true
	take(conn, nil) // net/http cannot take a connection back
}

// statusWriter records the status code for the Observer.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the real writer.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
