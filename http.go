package mcpactors

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/mcp-actors/mcp-actors/actors/transport"
	"github.com/mcp-actors/mcp-actors/internal/certfile"
)

// HTTPOptions configure the server's Streamable HTTP endpoint
// (HTTPHandler) and, for Serve, the HTTP server around it. The zero value
// is usable and safe: the endpoint is at /mcp and accepts only loopback
// Host and Origin headers until told where it is reached (ListenAddr,
// AllowedHosts). Zero fields take the defaults.
type HTTPOptions struct {
	// ListenAddr is the address the server listens on (Serve sets it from
	// its listener). Unless AllowedHosts and AllowedOrigins say otherwise,
	// a loopback address — or none at all — accepts only loopback Host and
	// Origin headers (DNS-rebinding protection); any other address accepts
	// any Host and same-origin Origins.
	ListenAddr string
	// AllowedHosts lists the Host header values accepted (host or
	// host:port; "*" accepts any). Empty: see ListenAddr.
	AllowedHosts []string
	// AllowedOrigins lists the Origin header values accepted
	// (scheme://host[:port]; "*" accepts any). A request without Origin is
	// always accepted. Empty: loopback origins on a loopback listener, the
	// request's own host elsewhere.
	AllowedOrigins []string
	// Authenticator, when set, must accept every request; sessions are
	// bound to the principal that created them (see BearerTokens).
	Authenticator Authenticator

	// MaxBodyBytes bounds a POST body (default 4 MiB); more gets 413.
	MaxBodyBytes int64
	// StreamQueue bounds the frames queued for one SSE connection
	// (default 256). A client that stops reading past it loses the
	// connection; the frames stay in the session's event log for
	// Last-Event-ID resumption.
	StreamQueue int
	// WriteTimeout bounds one write to a client (default 30 s).
	WriteTimeout time.Duration
	// ReadTimeout bounds the reading of a POST body (default 10 s): a
	// client that trickles it is cut off. NewHTTPServer bounds headers to
	// 10 s itself.
	ReadTimeout time.Duration
	// KeepAlive is the interval of SSE comment pings on idle GET streams
	// and on the event streams of 2026-07-28 requests
	// (subscriptions/listen, a slow tool) (default 25 s; negative disables
	// them).
	KeepAlive time.Duration
	// Retry is the reconnection delay sent in priming events (default
	// 1 s).
	Retry time.Duration
	// Logger receives the endpoint's diagnostics (at debug level, a line
	// per request and one per refused request with its reason); nil means
	// the server's Options.Logger.
	Logger *slog.Logger

	// Path is where the MCP endpoint is served (default "/mcp"). It must
	// start with a slash.
	Path string

	// Health also serves three probes, each saying another thing:
	// GET /healthz, liveness (200 while the process serves HTTP: nothing
	// a restart would cure is wrong; never the cluster's state); GET
	// /readyz, readiness (200 while the server opens new sessions; 503
	// "draining" once Shutdown has begun, and 503 with the reason while
	// its cluster node is not ready: see Server.Ready); GET /startupz
	// (200 once the server has finished starting, and for good after;
	// 503 with what it waits for before: see Server.Started).
	Health bool
	// TLSCertFile and TLSKeyFile make Serve speak HTTPS (HTTP/1.1 and
	// HTTP/2) with this certificate and key (PEM files), read again when
	// they change (a renewal in place needs no restart; a pair that does
	// not load is logged and the previous one served).
	// mcp_tls_certificate_expiry_timestamp_seconds says when it expires.
	TLSCertFile string
	TLSKeyFile  string
	// H2C makes Serve accept HTTP/2 without TLS (prior knowledge) as well
	// as HTTP/1.1.
	H2C bool
	// ShutdownTimeout is how long Serve lets running requests finish once
	// its context ends (default 10 s).
	ShutdownTimeout time.Duration
	// OmitMetrics serves no /metrics even with Options.Metrics set: the
	// caller serves MetricsHandler elsewhere (an admin listener).
	OmitMetrics bool
}

// ErrInvalidOptions is returned, wrapped with the reason, for options that
// cannot work.
var ErrInvalidOptions = errors.New("mcpactors: invalid options")

// check validates the options.
func (o *HTTPOptions) check() error {
	if o.Path != "" && !strings.HasPrefix(o.Path, "/") {
		return fmt.Errorf("%w: the path %q must start with a slash", ErrInvalidOptions, o.Path)
	}
	for name, v := range map[string]int64{
		"MaxBodyBytes": o.MaxBodyBytes, "StreamQueue": int64(o.StreamQueue),
		"WriteTimeout": int64(o.WriteTimeout), "ReadTimeout": int64(o.ReadTimeout),
		"Retry": int64(o.Retry), "ShutdownTimeout": int64(o.ShutdownTimeout),
	} {
		if v < 0 {
			return fmt.Errorf("%w: %s must not be negative", ErrInvalidOptions, name)
		}
	}
	if (o.TLSCertFile == "") != (o.TLSKeyFile == "") {
		return fmt.Errorf("%w: TLS needs both a certificate and a key file", ErrInvalidOptions)
	}
	return nil
}

// HTTPHandler returns the server's Streamable HTTP endpoint as an
// http.Handler, at opts.Path (default /mcp), with /healthz and /readyz
// when opts.Health is set and /metrics when Options.Metrics is. opts may
// be nil. Mount it in your own server (HTTP/1.1, HTTP/2 over TLS, h2c), or
// use Serve. Your http.Server's Shutdown ends the GET event streams it
// serves (each is a plain handler that watches for it); call Shutdown
// first to let running requests finish and close the sessions.
func (s *Server) HTTPHandler(opts *HTTPOptions) (http.Handler, error) {
	return s.httpMux(opts)
}

// httpMux builds the handler HTTPHandler returns.
func (s *Server) httpMux(opts *HTTPOptions) (*http.ServeMux, error) {
	var o HTTPOptions
	if opts != nil {
		o = *opts
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	if o.Path == "" {
		o.Path = "/mcp"
	}
	ep := transport.NewHTTPHandler(s.router, s.endpointOptions(&o))
	ep.SetTracer(s.tracer)
	ep.SetModern(s.modern)
	mux := http.NewServeMux()
	mux.Handle(o.Path, ep)
	if o.Health {
		s.HandleHealth(mux)
	}
	if m := s.MetricsHandler(); m != nil && !o.OmitMetrics {
		mux.Handle("GET /metrics", m)
	}
	return mux, nil
}

// HandleHealth registers the three probes HTTPOptions.Health describes
// (GET /healthz, /readyz and /startupz) on mux: for a listener of your
// own, an admin port say.
func (s *Server) HandleHealth(mux *http.ServeMux) {
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if err := s.Ready(); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ready\n"))
	})
	mux.HandleFunc("GET /startupz", func(w http.ResponseWriter, _ *http.Request) {
		if err := s.Started(); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("started\n"))
	})
}

// MetricsHandler returns the Prometheus handler of Options.Metrics, or nil
// without a registry.
func (s *Server) MetricsHandler() http.Handler {
	reg := s.opts.Metrics
	if reg == nil {
		return nil
	}
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg})
}

// NewHTTPServer returns an http.Server for handler with the bounds an MCP
// endpoint needs: 10 s to read a request's headers, of at most 64 KiB, and
// idle connections closed after 2 minutes; no write timeout, which would
// cut event streams (each write is bounded by HTTPOptions.WriteTimeout
// instead). The server's own errors go to log at debug level; log may be
// nil.
func NewHTTPServer(handler http.Handler, log *slog.Logger) *http.Server {
	return transport.NewHTTPServer(handler, log)
}

// Serve serves HTTPHandler(opts) on ln until ctx ends, then shuts down in
// order: new sessions are refused (503 "draining", /readyz 503), the
// requests already running get opts.ShutdownTimeout to answer, sessions
// close (ending their event streams), and the HTTP server closes its
// connections. It returns nil after a shutdown ctx asked for, and the
// error that stopped the HTTP server otherwise. extra, when not nil,
// serves every path the MCP handler does not (debug endpoints, say).
func (s *Server) Serve(ctx context.Context, ln net.Listener, opts *HTTPOptions, extra http.Handler) error {
	var o HTTPOptions
	if opts != nil {
		o = *opts
	}
	if o.ListenAddr == "" {
		o.ListenAddr = ln.Addr().String()
	}
	if extra != nil && o.Path == "/" {
		return fmt.Errorf("%w: the path / leaves no room for other handlers", ErrInvalidOptions)
	}
	if err := o.check(); err != nil {
		return err
	}
	mux, err := s.httpMux(&o)
	if err != nil { // not after check
		return err
	}
	if extra != nil {
		mux.Handle("/", extra) // the least specific pattern: whatever the others leave
	}
	hs := NewHTTPServer(s.closingLameDuck(mux), s.log)
	hs.Protocols = new(http.Protocols)
	hs.Protocols.SetHTTP1(true)
	if o.TLSCertFile != "" {
		certs, err := certfile.New(o.TLSCertFile, o.TLSKeyFile, func(err error) {
			s.log.Error("the renewed TLS certificate does not load; the previous one is served", "err", err)
		})
		if err != nil {
			return fmt.Errorf("loading the TLS certificate: %w", err)
		}
		s.watchCertificate(certs)
		hs.TLSConfig = &tls.Config{GetCertificate: certs.GetCertificate, MinVersion: tls.VersionTLS12}
		hs.Protocols.SetHTTP2(true)
	}
	if o.H2C {
		hs.Protocols.SetUnencryptedHTTP2(true)
	}
	served := make(chan error, 1)
	go func() {
		if hs.TLSConfig != nil {
			served <- hs.ServeTLS(ln, "", "")
		} else {
			served <- hs.Serve(ln)
		}
	}()
	select {
	case err := <-served:
		_ = s.Close(context.Background())
		return fmt.Errorf("serving HTTP: %w", err)
	case <-ctx.Done():
	}
	grace := o.ShutdownTimeout
	if grace <= 0 {
		grace = 10 * time.Second
	}
	s.log.Info("shutting down: draining sessions", "timeout", grace)
	drainCtx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := s.Shutdown(drainCtx); err != nil {
		s.log.Warn("sessions still running at the shutdown deadline were closed", "err", err)
	}
	closeCtx, cancelClose := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancelClose()
	if err := hs.Shutdown(closeCtx); err != nil {
		_ = hs.Close()
	}
	<-served
	return nil
}

// closingLameDuck serves h, and from LameDuck on answers "Connection:
// close" (HTTP/2: a GOAWAY once the connection is idle), so that the
// client closes its connection after the answer, knowing it: closing an
// idle connection instead (http.Server.SetKeepAlivesEnabled) races the
// client's next request on it, which then fails.
func (s *Server) closingLameDuck(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.stopping.Load() {
			w.Header().Set("Connection", "close")
		}
		h.ServeHTTP(w, r)
	})
}

// watchCertificate exports when the certificate served expires, as
// mcp_tls_certificate_expiry_timestamp_seconds (with Options.Metrics).
func (s *Server) watchCertificate(certs *certfile.Reloader) {
	if s.opts.Metrics == nil {
		return
	}
	err := s.opts.Metrics.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "mcp_tls_certificate_expiry_timestamp_seconds",
		Help: "When the TLS certificate the HTTP endpoint serves expires (Unix time); it is read again when its file changes.",
	}, func() float64 { return float64(certs.NotAfter().Unix()) }))
	if err != nil && !errors.As(err, new(prometheus.AlreadyRegisteredError)) {
		s.log.Warn("registering the certificate expiry metric", "err", err)
	}
}
