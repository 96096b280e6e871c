package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/actors/session"
	"github.com/mcp-actors/mcp-actors/actors/transport"
	"github.com/mcp-actors/mcp-actors/metrics"
)

// serveCmd runs a node: MCP over Streamable HTTP on one endpoint, plus
// /healthz, /readyz and Prometheus /metrics.
type serveCmd struct {
	Listen          string        `default:"127.0.0.1:8080" env:"MCP_ACTORS_LISTEN" help:"Address to listen on (host:port)."`
	Path            string        `default:"/mcp" env:"MCP_ACTORS_PATH" help:"Path of the MCP endpoint."`
	ReferenceTools  bool          `env:"MCP_ACTORS_REFERENCE_TOOLS" help:"Serve the reference tools, resources and prompts (the conformance suite's and our own)."`
	AllowedOrigins  []string      `env:"MCP_ACTORS_ALLOWED_ORIGINS" help:"Origin header values accepted (comma-separated; * for any). Default: loopback origins on a loopback listener, same-origin elsewhere."`
	AllowedHosts    []string      `env:"MCP_ACTORS_ALLOWED_HOSTS" help:"Host header values accepted (comma-separated; * for any). Default: loopback hosts on a loopback listener, any elsewhere."`
	SessionTTL      time.Duration `default:"30m" env:"MCP_ACTORS_SESSION_TTL" help:"Close a session idle this long (no message and nothing running); 0 never."`
	MaxLifetime     time.Duration `default:"0" env:"MCP_ACTORS_MAX_LIFETIME" help:"Close a session this long after it started, whatever it is doing; 0 never."`
	MaxSessions     int           `default:"100000" env:"MCP_ACTORS_MAX_SESSIONS" help:"Most live sessions; initialize beyond gets 503 with Retry-After."`
	MaxBody         int64         `default:"4194304" env:"MCP_ACTORS_MAX_BODY" help:"Largest POST body in bytes; more gets 413."`
	KeepAlive       time.Duration `name:"keepalive" default:"25s" env:"MCP_ACTORS_KEEPALIVE" help:"Interval of keep-alive comments on idle GET streams; 0 disables them."`
	ShutdownTimeout time.Duration `default:"10s" env:"MCP_ACTORS_SHUTDOWN_TIMEOUT" help:"How long running requests may take to finish on SIGINT/SIGTERM."`
	Debug           bool          `env:"MCP_ACTORS_DEBUG" help:"Also serve /debug/pprof/ and /debug/mem."`
	HTTPServer      string        `name:"http-server" enum:"loop,fast,std" default:"loop" env:"MCP_ACTORS_HTTP_SERVER" help:"HTTP server under the endpoint: loop (its own epoll event loop, HTTP/1.x, least CPU; fast elsewhere than Linux), fast (fasthttp, HTTP/1.1) or std (net/http, also HTTP/2): ${enum}."`
}

// Run serves until ctx is cancelled (SIGINT/SIGTERM), then drains.
func (c *serveCmd) Run(ctx context.Context, log *slog.Logger) error {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	var m *metrics.Metrics
	srv, err := newServer(log, c.ReferenceTools, func(o *mcpactors.Options) {
		o.Limits = session.Limits{IdleTimeout: c.SessionTTL, MaxLifetime: c.MaxLifetime}
		o.Observer = observerFunc(func() session.Observer { return m })
	})
	if err != nil {
		return err
	}
	m = metrics.New(reg, srv)

	ln, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", c.Listen, err)
	}
	keepAlive := c.KeepAlive
	if keepAlive == 0 {
		keepAlive = -1
	}
	httpOpts := &transport.HTTPOptions{
		ListenAddr:     ln.Addr().String(),
		AllowedHosts:   c.AllowedHosts,
		AllowedOrigins: c.AllowedOrigins,
		MaxBodyBytes:   c.MaxBody,
		MaxSessions:    c.MaxSessions,
		KeepAlive:      keepAlive,
		Observer:       m,
		Logger:         log,
	}
	var ready atomic.Bool
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready.Load() {
			http.Error(w, "draining", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ready\n"))
	})
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	if c.Debug {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		mux.Handle("/debug/mem", debugMem())
	}
	n := newHTTPNode(c.HTTPServer, srv, c.Path, mux, httpOpts, log)
	served := make(chan error, 1)
	go func() { served <- n.Serve(ln) }()
	ready.Store(true)
	log.Info("serving MCP over Streamable HTTP", "url", "http://"+ln.Addr().String()+c.Path,
		"version", version, "reference_tools", c.ReferenceTools, "http_server", c.HTTPServer)

	select {
	case err := <-served:
		closeServer(log, srv)
		return fmt.Errorf("serving HTTP: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down: draining sessions", "timeout", c.ShutdownTimeout)
	ready.Store(false)
	n.StartDrain()
	drainCtx, cancel := context.WithTimeout(context.Background(), c.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(drainCtx); err != nil {
		log.Warn("sessions still running at the shutdown deadline were closed", "err", err)
	}
	closeCtx, cancelClose := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancelClose()
	if err := n.Shutdown(closeCtx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		log.Warn("closing HTTP connections", "err", err)
	}
	<-served
	log.Info("stopped")
	return nil
}

// httpNode is the HTTP server a node runs: the MCP endpoint on its path and
// mux (health, metrics, debug) everywhere else.
type httpNode interface {
	Serve(ln net.Listener) error
	StartDrain()
	Shutdown(ctx context.Context) error
}

func newHTTPNode(kind string, srv *mcpactors.Server, path string, mux *http.ServeMux, o *transport.HTTPOptions, log *slog.Logger) httpNode {
	switch kind {
	case "fast":
		return transport.NewFastServer(srv, path, mux, o)
	case "loop":
		return transport.NewLoopServer(srv, path, mux, o)
	}
	h := transport.NewHTTPHandler(srv, o)
	mux.Handle(path, h)
	return &stdNode{h: h, hs: transport.NewHTTPServer(mux, log)}
}

// stdNode is an httpNode on net/http.
type stdNode struct {
	h  *transport.HTTPHandler
	hs *http.Server
}

func (n *stdNode) Serve(ln net.Listener) error { return n.hs.Serve(ln) }
func (n *stdNode) StartDrain()                 { n.h.StartDrain() }

func (n *stdNode) Shutdown(ctx context.Context) error {
	err := n.hs.Shutdown(ctx)
	_ = n.hs.Close()
	n.h.Close()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// observerFunc defers choosing the observer until it is used: the metrics
// need the server, and the server needs the observer.
type observerFunc func() session.Observer

func (f observerFunc) RequestHandled(method string, o session.Outcome, d time.Duration) {
	f().RequestHandled(method, o, d)
}
func (f observerFunc) PendingCalls(delta int) { f().PendingCalls(delta) }
func (f observerFunc) EventsReplayed(n int)   { f().EventsReplayed(n) }
