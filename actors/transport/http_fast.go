package transport

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"
)

// FastServer serves the Streamable HTTP endpoint on fasthttp: the same
// rules as HTTPHandler (they share the endpoint code), with far less CPU
// and memory per request than net/http. It serves HTTP/1.1 only; requests
// for any other path go to a net/http handler (health, metrics). This is
// what `mcp-actors serve` runs.
type FastServer struct {
	ep    *endpoint
	path  string
	other fasthttp.RequestHandler
	srv   *fasthttp.Server
}

// NewFastServer returns a server for host's sessions on path; other (which
// may be nil: 404) serves every other path. opts may be nil.
func NewFastServer(host SessionHost, path string, other http.Handler, opts *HTTPOptions) *FastServer {
	ep := newEndpoint(host, opts)
	s := &FastServer{ep: ep, path: path}
	if other != nil {
		s.other = fasthttpadaptor.NewFastHTTPHandler(other)
	}
	s.srv = &fasthttp.Server{
		Handler:                      s.handle,
		ErrorHandler:                 s.handleError,
		ReadTimeout:                  ep.opts.ReadTimeout, // a request, headers and body, must arrive promptly (slow loris)
		IdleTimeout:                  2 * time.Minute,
		ReadBufferSize:               16 << 10, // also the bound on request headers
		MaxRequestBodySize:           int(ep.opts.MaxBodyBytes),
		KeepHijackedConns:            true, // taken-over GET streams are ours to close
		CloseOnShutdown:              true,
		ReduceMemoryUsage:            false, // GET streams are taken over; POST connections are few and busy
		DisablePreParseMultipartForm: true,
		NoDefaultServerHeader:        true,
		Logger:                       fastLogger{ep.opts.Logger},
	}
	return s
}

// Serve accepts connections on ln until Shutdown.
func (s *FastServer) Serve(ln net.Listener) error { return s.srv.Serve(ln) }

// StartDrain makes the endpoint refuse new sessions (503) while existing
// ones finish; see mcpactors.Server.Shutdown.
func (s *FastServer) StartDrain() { s.ep.draining.Store(true) }

// Shutdown stops accepting connections and closes idle ones, waiting for
// the requests in flight until ctx ends; then it stops the endpoint's
// goroutines. End the sessions first (they close their streams).
func (s *FastServer) Shutdown(ctx context.Context) error {
	err := s.srv.ShutdownWithContext(ctx)
	s.ep.close()
	return err
}

func (s *FastServer) handle(ctx *fasthttp.RequestCtx) {
	if string(ctx.Path()) != s.path {
		if s.other != nil {
			s.other(ctx)
			return
		}
		ctx.SetStatusCode(http.StatusNotFound)
		return
	}
	x := &fastExchange{ctx: ctx, o: &s.ep.opts, watcher: s.ep.watcher}
	obs := s.ep.opts.Observer
	if obs != nil {
		x.start = time.Now()
	}
	s.ep.serve(x)
	if obs != nil && !x.deferred {
		obs.HTTPRequest(string(ctx.Method()), ctx.Response.StatusCode(), time.Since(x.start))
	}
}

// handleError answers requests fasthttp could not read, in the endpoint's
// style.
func (s *FastServer) handleError(ctx *fasthttp.RequestCtx, err error) {
	x := &fastExchange{ctx: ctx, o: &s.ep.opts}
	var bodyErr interface{ Timeout() bool }
	switch {
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		s.ep.fail(x, http.StatusRequestEntityTooLarge, "request body too large")
	case errors.As(err, &bodyErr) && bodyErr.Timeout():
		s.ep.fail(x, http.StatusRequestTimeout, "request timeout")
	default:
		s.ep.fail(x, http.StatusBadRequest, "bad request")
	}
}

// fastExchange is an exchange on fasthttp.
type fastExchange struct {
	ctx     *fasthttp.RequestCtx
	o       *HTTPOptions
	watcher *closeWatcher
	start   time.Time
	// deferred is set when the answer outlives the handler (a stream, or a
	// taken-over connection): the Observer hears of it when it ends.
	deferred bool
}

func (x *fastExchange) method() string            { return string(x.ctx.Method()) }
func (x *fastExchange) header(name string) string { return string(x.ctx.Request.Header.Peek(name)) }
func (x *fastExchange) host() string              { return string(x.ctx.Host()) }
func (x *fastExchange) context() context.Context  { return x.ctx }
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

func (x *fastExchange) stream(feed func(w *eventWriter), gone func()) {
	x.ctx.SetStatusCode(http.StatusOK)
	x.ctx.SetContentType("text/event-stream")
	x.ctx.Response.Header.Set("Cache-Control", "no-cache")
	x.ctx.Response.Header.Set("X-Accel-Buffering", "no")
	conn, o, watcher := x.ctx.Conn(), x.o, x.watcher
	method, start := string(x.ctx.Method()), x.start
	x.deferred = true
	x.ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
		if obs := o.Observer; obs != nil {
			defer func() { obs.HTTPRequest(method, http.StatusOK, time.Since(start)) }()
		}
		var wt *watch
		if gone != nil {
			wt = watcher.add(conn, gone)
			defer watcher.remove(wt) // before fasthttp reads the next request
		}
		ew := newEventWriter(w, w.Flush, conn.SetWriteDeadline, o)
		if ew.send(nil) != nil { // the head, at once
			return
		}
		feed(ew)
	})
}

func (x *fastExchange) canHijack() bool { return true }

func (x *fastExchange) hijack(take func(net.Conn)) {
	x.deferred = true   // the stream reports when it ends
	raw := x.ctx.Conn() // the socket itself, for the close watcher
	x.ctx.HijackSetNoResponse(true)
	x.ctx.Hijack(func(net.Conn) { take(raw) })
}

// fastLogger sends fasthttp's own log lines to slog at debug level.
type fastLogger struct{ log *slog.Logger }

func (l fastLogger) Printf(format string, args ...any) {
	l.log.Debug("fasthttp", "msg", fmt.Sprintf(format, args...))
}
