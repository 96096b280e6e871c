package transport

import (
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
	again servedAgain
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
		CloseOnShutdown:              true,
		ReduceMemoryUsage:            false, // GET streams are taken over; POST connections are few and busy
		DisablePreParseMultipartForm: true,
		NoDefaultServerHeader:        true,
		Logger:                       fastLogger{ep.opts.Logger},
	}
	return s
}

// Serve accepts connections on ln until Shutdown.
func (s *FastServer) Serve(ln net.Listener) error { return s.srv.Serve(endListener{ln}) }

// StartDrain makes the endpoint refuse new sessions (503) while existing
// ones finish; see mcpactors.Server.Shutdown.
func (s *FastServer) StartDrain() { s.ep.draining.Store(true) }

// Shutdown stops accepting connections and closes idle ones, waiting for
// the requests in flight until ctx ends; then it stops the endpoint's
// goroutines. End the sessions first (they close their streams).
func (s *FastServer) Shutdown(ctx context.Context) error {
	s.again.stop()
	err := s.srv.ShutdownWithContext(ctx)
	s.again.close(ctx)
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
	x := &fastExchange{ctx: ctx, o: &s.ep.opts, retry: s.ep.retry, watcher: s.ep.watcher, srv: s}
	obs := s.ep.opts.Observer
	if obs != nil {
		x.start = time.Now()
	}
	s.ep.serve(x)
	if obs != nil && !x.deferred {
		obs.HTTPRequest(interned(ctx.Method()), ctx.Response.StatusCode(), time.Since(x.start))
	}
}

// handleError answers requests fasthttp could not read, in the endpoint's
// style.
func (s *FastServer) handleError(ctx *fasthttp.RequestCtx, err error) {
	x := &fastExchange{ctx: ctx, o: &s.ep.opts, retry: s.ep.retry}
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

// fastLogger sends fasthttp's own log lines to slog at debug level.
type fastLogger struct{ log *slog.Logger }

func (l fastLogger) Printf(format string, args ...any) {
	l.log.Debug("fasthttp", "msg", fmt.Sprintf(format, args...))
}
