package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/cluster"
)

// serveCmd runs a node: MCP over Streamable HTTP on one endpoint, plus
// /healthz, /readyz and Prometheus /metrics.
type serveCmd struct {
	Listen          string        `default:"127.0.0.1:8080" env:"MCP_ACTORS_LISTEN" help:"Address to listen on (host:port)."`
	Path            string        `default:"/mcp" env:"MCP_ACTORS_PATH" help:"Path of the MCP endpoint (starts with a slash)."`
	ReferenceTools  bool          `env:"MCP_ACTORS_REFERENCE_TOOLS" help:"Serve the reference tools, resources and prompts (the conformance suite's and our own)."`
	AllowedOrigins  []string      `env:"MCP_ACTORS_ALLOWED_ORIGINS" help:"Origin header values accepted (comma-separated; * for any). Default: loopback origins on a loopback listener, same-origin elsewhere."`
	AllowedHosts    []string      `env:"MCP_ACTORS_ALLOWED_HOSTS" help:"Host header values accepted (comma-separated; * for any). Default: loopback hosts on a loopback listener, any elsewhere."`
	SessionTTL      time.Duration `default:"30m" env:"MCP_ACTORS_SESSION_TTL" help:"Close a session idle this long (no message and nothing running); 0 never."`
	MaxLifetime     time.Duration `default:"0" env:"MCP_ACTORS_MAX_LIFETIME" help:"Close a session this long after it started, whatever it is doing; 0 never."`
	MaxSessions     int           `default:"0" env:"MCP_ACTORS_MAX_SESSIONS" help:"Most live sessions; initialize beyond gets 503 with Retry-After. 0: what the memory limit holds (a container's, or GOMEMLIMIT; docs/operations.md, \"Memory\"), 100000 without one."`
	MaxBody         int64         `default:"4194304" env:"MCP_ACTORS_MAX_BODY" help:"Largest POST body in bytes; more gets 413."`
	KeepAlive       time.Duration `name:"keepalive" default:"25s" env:"MCP_ACTORS_KEEPALIVE" help:"Interval of keep-alive comments on idle GET streams; 0 disables them."`
	ShutdownTimeout time.Duration `default:"10s" env:"MCP_ACTORS_SHUTDOWN_TIMEOUT" help:"How long running requests may take to finish on SIGINT/SIGTERM, once the lame duck is over."`
	LameDuck        time.Duration `name:"lame-duck" default:"0s" env:"MCP_ACTORS_LAME_DUCK" help:"On SIGINT/SIGTERM, go on serving everything this long while /readyz answers 503 (for a load balancer to stop sending clients here), then drain; a second signal cuts it short. 0: drain at once."`
	AdminListen     string        `name:"admin-listen" env:"MCP_ACTORS_ADMIN_LISTEN" placeholder:"HOST:PORT" help:"Serve /metrics, /admin/, /debug/ and the probes on this address instead of --listen (which keeps the probes), for a port clients cannot reach."`
	TLSCert         string        `name:"tls-cert" env:"MCP_ACTORS_TLS_CERT" type:"existingfile" help:"Serve HTTPS (HTTP/1.1 and HTTP/2) with this certificate (PEM); needs --tls-key."`
	TLSKey          string        `name:"tls-key" env:"MCP_ACTORS_TLS_KEY" type:"existingfile" help:"The private key (PEM) of --tls-cert."`
	H2C             bool          `name:"h2c" env:"MCP_ACTORS_H2C" help:"Also accept HTTP/2 without TLS (prior knowledge)."`
	Debug           bool          `env:"MCP_ACTORS_DEBUG" help:"Also serve /debug/pprof/ and /debug/mem."`
	AdminTokenFile  string        `name:"admin-token-file" env:"MCP_ACTORS_ADMIN_TOKEN_FILE" type:"existingfile" placeholder:"FILE" help:"Open the admin path (/admin/, for mcp-actors admin) to requests presenting the token in FILE (or $MCP_ACTORS_ADMIN_TOKEN); closed without one."`

	StateKeyFile    string        `name:"state-key-file" env:"MCP_ACTORS_STATE_KEY_FILE" type:"existingfile" placeholder:"FILE" help:"Key sealing the requestState of protocol 2026-07-28 requests: 32 bytes, base64 or hex, in FILE (openssl rand -base64 32). The same on every node. Default: derived from the route secret in a cluster, a key of the process's own alone; needed with --nats-url."`
	MaxParked       int           `name:"max-parked" default:"10000" env:"MCP_ACTORS_MAX_PARKED" help:"Most handlers of protocol 2026-07-28 requests kept waiting for their client's input; past it (0 or -1: always) a retry runs the handler again from its requestState's journal."`
	SingleUseState  bool          `name:"single-use-request-state" env:"MCP_ACTORS_SINGLE_USE_REQUEST_STATE" help:"Refuse a retry of an answered round (protocol 2026-07-28) on every node, also after the node that answered it is lost: each answer is recorded in the cluster's storage first (a replicated write per answered call)."`
	RequestStateTTL time.Duration `name:"request-state-ttl" default:"10m" env:"MCP_ACTORS_REQUEST_STATE_TTL" help:"How long a requestState (protocol 2026-07-28) is valid, and a kept handler waits for the retry."`
	PrevStateKey    string        `name:"previous-state-key-file" env:"MCP_ACTORS_PREVIOUS_STATE_KEY_FILE" type:"existingfile" placeholder:"FILE" help:"The state key before --state-key-file, during a rotation: what it sealed still opens."`

	adminToken string // read from --admin-token-file or the environment
	stateKey   []byte // read from --state-key-file
	prevKey    []byte // read from --previous-state-key-file

	Cluster clusterFlags `embed:"" group:"Cluster"`
}

// Validate rejects flags that cannot work, before anything starts.
func (c *serveCmd) Validate() error {
	switch {
	case c.Path == "" || c.Path[0] != '/':
		return fmt.Errorf("--path %q must start with a slash, e.g. /mcp", c.Path)
	case c.MaxSessions < 0:
		return fmt.Errorf("--max-sessions must not be negative (0: what the memory limit holds; got %d)", c.MaxSessions)
	case c.MaxBody <= 0:
		return fmt.Errorf("--max-body must be positive (got %d)", c.MaxBody)
	case c.ShutdownTimeout <= 0:
		return fmt.Errorf("--shutdown-timeout must be positive (got %s)", c.ShutdownTimeout)
	case c.LameDuck < 0:
		return fmt.Errorf("--lame-duck must not be negative (0 drains at once; got %s)", c.LameDuck)
	case c.SessionTTL < 0:
		return fmt.Errorf("--session-ttl must not be negative (0 disables it; got %s)", c.SessionTTL)
	case c.MaxLifetime < 0:
		return fmt.Errorf("--max-lifetime must not be negative (0 disables it; got %s)", c.MaxLifetime)
	case c.RequestStateTTL <= 0:
		return fmt.Errorf("--request-state-ttl must be positive (got %s)", c.RequestStateTTL)
	case c.MaxParked < -1:
		return fmt.Errorf("--max-parked must be -1 (none kept) or more (got %d)", c.MaxParked)
	case c.KeepAlive < 0:
		return fmt.Errorf("--keepalive must not be negative (0 disables it; got %s)", c.KeepAlive)
	case (c.TLSCert == "") != (c.TLSKey == ""):
		return errors.New("--tls-cert and --tls-key go together")
	}
	token, err := readAdminToken(c.AdminTokenFile)
	if err != nil {
		return err
	}
	c.adminToken = token
	if c.stateKey, err = readStateKey("--state-key-file", c.StateKeyFile); err != nil {
		return err
	}
	if c.prevKey, err = readStateKey("--previous-state-key-file", c.PrevStateKey); err != nil {
		return err
	}
	if err := c.Cluster.validate(); err != nil {
		return err
	}
	switch {
	case c.prevKey != nil && c.stateKey == nil:
		return errors.New("--previous-state-key-file needs --state-key-file (the new key)")
	case len(c.Cluster.NATSURL) > 0 && c.stateKey == nil:
		return errors.New("--nats-url needs --state-key-file: every node must open the requestState the others seal, and there is no route secret to derive a key from")
	}
	return nil
}

// logReady logs one line when the node first becomes ready, with the
// time since the process started; it returns then, or when ctx ends.
func logReady(ctx context.Context, log *slog.Logger, node *cluster.Node) {
	if err := node.WaitReady(ctx); err != nil {
		return
	}
	log.Info("ready", "after", time.Since(processStart).Round(time.Millisecond))
}

// processStart is when the process started, as near as Go lets it know.
var processStart = time.Now()

// Run serves until ctx is cancelled (SIGINT/SIGTERM), then stops in
// order: the lame duck (--lame-duck), the drain (running requests get
// --shutdown-timeout, sessions are handed over), the admin listener, the
// node (its lease goes last but one), the last spans.
func (c *serveCmd) Run(ctx context.Context, log *slog.Logger) error {
	limit, source := setMemoryLimit(log)
	budget, err := newMemoryBudget(limit, source, c.Cluster.jetStreamMemory(), c.MaxSessions)
	if err != nil {
		return configError{err}
	}
	ln, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", c.Listen, err)
	}
	var adminLn net.Listener
	if c.AdminListen != "" {
		if adminLn, err = net.Listen("tcp", c.AdminListen); err != nil {
			_ = ln.Close()
			return fmt.Errorf("listening on %s (--admin-listen): %w", c.AdminListen, err)
		}
	}
	closeListeners := func() {
		_ = ln.Close()
		if adminLn != nil {
			_ = adminLn.Close()
		}
	}
	c.Cluster.maxBody = c.MaxBody
	node, err := c.Cluster.start(ctx, log, ln.Addr())
	if err != nil {
		closeListeners()
		return err
	}
	log = node.Logger() // every line names the node
	tp, err := tracerProvider(ctx, node.ID())
	if err != nil {
		closeListeners()
		node.Close()
		return err
	}
	// After the server has shut down: the lease goes, then the last spans
	// are sent (not before: a node that holds its lease but answers
	// nothing is what the others wait out).
	defer func() {
		node.Close()
		flushSpans(log, tp)
	}()
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	srv, err := newServer(log, c.ReferenceTools, node.ID(), func(o *mcpactors.Options) {
		o.Limits = mcpactors.Limits{IdleTimeout: c.SessionTTL, MaxLifetime: c.MaxLifetime}
		o.MaxSessions, o.MaxHeldMemory = budget.maxSessions, budget.maxHeld
		o.MaxParked, o.RequestStateTTL = c.MaxParked, c.RequestStateTTL
		o.SingleUseRequestState = c.SingleUseState
		if c.MaxParked == 0 {
			o.MaxParked = -1 // 0 on the command line keeps none, as -1
		}
		o.Metrics = reg
		if tp != nil {
			o.TracerProvider = tp
		}
	})
	if err != nil {
		closeListeners()
		return err
	}
	if c.stateKey != nil {
		if err := srv.SetRequestStateKeys(c.stateKey, c.prevKey); err != nil {
			closeListeners()
			closeServer(log, srv)
			return configError{err}
		}
	}
	if err := srv.JoinCluster(node); err != nil {
		closeListeners()
		closeServer(log, srv)
		return err
	}
	keepAlive := c.KeepAlive
	if keepAlive == 0 {
		keepAlive = -1
	}
	opts := &mcpactors.HTTPOptions{
		ListenAddr:      ln.Addr().String(),
		AllowedHosts:    c.AllowedHosts,
		AllowedOrigins:  c.AllowedOrigins,
		MaxBodyBytes:    c.MaxBody,
		KeepAlive:       keepAlive,
		Logger:          log,
		Path:            c.Path,
		Health:          true,
		TLSCertFile:     c.TLSCert,
		TLSKeyFile:      c.TLSKey,
		H2C:             c.H2C,
		ShutdownTimeout: c.ShutdownTimeout,
		OmitMetrics:     adminLn != nil,
	}
	ops := c.operatorPaths(node, srv, log)
	var extra http.Handler
	if adminLn == nil {
		if ops != nil {
			extra = ops
		}
	} else {
		admin := startAdminListener(adminLn, srv, ops, log)
		defer admin.stop() // after the drain: metrics are read to the end
	}
	scheme := "http"
	if c.TLSCert != "" {
		scheme = "https"
	}
	attrs := []any{"url", scheme + "://" + ln.Addr().String() + c.Path,
		"version", release(), "reference_tools", c.ReferenceTools, "h2c", c.H2C, "cluster", node.ClusterName(), "tracing", tp != nil}
	if adminLn != nil {
		attrs = append(attrs, "admin_listen", adminLn.Addr().String())
	}
	attrs = append(attrs, budget.attrs()...)
	attrs = append(attrs, c.Cluster.describe()...)
	log.Info("serving MCP over Streamable HTTP", attrs...)
	if w := budget.over(); w != "" {
		log.Warn(w)
	}
	readyCtx, cancelReady := context.WithCancel(ctx)
	defer cancelReady()
	go logReady(readyCtx, log, node)
	serveCtx, stopLameDuck := lameDuck(ctx, c.LameDuck, srv, log)
	defer stopLameDuck()
	if err := srv.Serve(serveCtx, ln, opts, extra); err != nil {
		return err
	}
	log.Info("stopped")
	return nil
}

// operatorPaths returns the handler of the paths for operators: /admin/
// with an admin token, /debug/ with --debug; nil when neither is on.
func (c *serveCmd) operatorPaths(node *cluster.Node, srv *mcpactors.Server, log *slog.Logger) *http.ServeMux {
	if !c.Debug && c.adminToken == "" {
		return nil
	}
	mux := http.NewServeMux()
	if c.Debug {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		mux.Handle("/debug/mem", debugMem())
	}
	if c.adminToken != "" {
		mux.Handle("/admin/", adminHandler(c.adminToken, node, srv, log))
	}
	return mux
}
