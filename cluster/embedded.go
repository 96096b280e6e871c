package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// The embedded NATS server is closed to strangers:
//
//	client port  none alone; with routes, one on loopback (the server
//	             starts routing only once its client accept loop runs)
//	             that admits no connection: inProcessOnly lets in only
//	             the node's own in-process pipe (nats.InProcessServer)
//	route port   every route authenticates: the secret (user routeUser),
//	             mutual TLS (each side verifies the other's certificate
//	             against ClusterCA), or both; Options refuse a route port
//	             with neither
//	log          the secret is redacted from every line (natsLogger)

// startServer starts the embedded NATS server.
func (n *Node) startServer(ctx context.Context) error {
	so, err := n.opts.serverOptions()
	if err != nil {
		return err
	}
	secrets := []string{n.opts.Secret}
	if n.opts.SecretFile != "" && n.opts.ClusterListen != "" {
		if n.secrets, err = newRouteSecrets(n.opts.SecretFile); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidOptions, err)
		}
		secrets = n.secrets.all()
		so.Cluster.Username, so.Cluster.Password = routeUser, n.secrets.present()
		so.Routes = routeURLs(n.opts.Routes, n.secrets.present())
		so.CustomRouterAuthentication = n.secrets
	}
	if n.opts.routeTLS() && n.opts.ClusterListen != "" {
		if n.routeCert, err = routeCertificate(n.opts, so.Cluster.TLSConfig, n.log); err != nil {
			return err
		}
	}
	auth := so.CustomClientAuthentication.(*inProcessOnly)
	ns, err := server.NewServer(so)
	if err != nil {
		return fmt.Errorf("cluster: embedded NATS server: %w", err)
	}
	auth.server.Store(ns)
	// The server's debug lines (routes connecting, JetStream's elections)
	// come only when the node's log shows debug lines.
	debug := n.log.Enabled(context.Background(), slog.LevelDebug)
	logger := newNATSLogger(n.log, secrets, &n.settled)
	n.natsLog = logger
	ns.SetLoggerV2(logger, debug, false, false)
	ns.Start()
	// Seconds at most, unless the machine is starved of CPU (seen: more
	// than 10 s for a node started beside others under -race on 2 cores);
	// a listener that cannot bind, or ctx, ends the wait at once.
	deadline := time.Now().Add(serverStartTimeout)
	for !ns.ReadyForConnections(startPoll) {
		select {
		case err := <-logger.fatal:
			ns.Shutdown()
			return fmt.Errorf("%w: %w", ErrServerStart, err)
		case <-ctx.Done():
			ns.Shutdown()
			return fmt.Errorf("%w: %w", ErrServerStart, ctx.Err())
		default:
		}
		if time.Now().After(deadline) {
			ns.Shutdown()
			return fmt.Errorf("%w: not ready within %s", ErrServerStart, serverStartTimeout)
		}
	}
	logger.started.Store(true)
	n.ns, n.so = ns, so
	return nil
}

// ErrServerStart reports that the embedded NATS server did not start: a
// port it was given is taken, say.
var ErrServerStart = errors.New("cluster: the embedded NATS server did not start")

// serverStartTimeout bounds the embedded server's start; startPoll is how
// often the wait looks for a fatal error meanwhile.
const (
	serverStartTimeout = 30 * time.Second
	startPoll          = 100 * time.Millisecond
)

func (n *Node) shutdownServer() {
	if n.ns != nil {
		n.ns.Shutdown()
		n.ns.WaitForShutdown()
	}
}

// serverOptions returns the embedded server's options.
func (o Options) serverOptions() (*server.Options, error) {
	so := &server.Options{
		ServerName:                 o.NodeID,
		JetStream:                  true,
		StoreDir:                   o.DataDir,
		NoSigs:                     true,
		DontListen:                 true,
		JetStreamMaxMemory:         o.JetStreamMemory(),
		CustomClientAuthentication: &inProcessOnly{},
		SyncAlways:                 o.SyncAlways,
		SyncInterval:               o.SyncInterval, // 0: NATS's default (2 min)
	}
	if o.ClusterListen == "" {
		return so, nil
	}
	// A server with a route port waits for a client port before it
	// reports ready, and routes only once it has one: give it one, on
	// loopback, where inProcessOnly admits nobody.
	so.DontListen = false
	so.Host, so.Port = "127.0.0.1", server.RANDOM_PORT
	host, port, _ := net.SplitHostPort(o.ClusterListen)
	p, err := strconv.Atoi(port)
	if err != nil {
		return nil, fmt.Errorf("%w: cluster listen port %q", ErrInvalidOptions, port)
	}
	if p == 0 {
		p = server.RANDOM_PORT
	}
	so.Cluster = server.ClusterOpts{Name: o.ClusterName, Host: host, Port: p, Advertise: o.ClusterAdvertise}
	if o.Secret != "" {
		so.Cluster.Username, so.Cluster.Password = routeUser, o.Secret
	}
	if o.routeTLS() {
		tc, err := server.GenTLSConfig(&server.TLSConfigOpts{
			CertFile: o.ClusterTLSCert, KeyFile: o.ClusterTLSKey, CaFile: o.ClusterCA, Verify: true,
		})
		if err != nil {
			return nil, fmt.Errorf("%w: route TLS: %v", ErrInvalidOptions, err)
		}
		// The CAs verify the nodes this one dials as well as those that
		// dial it (GenTLSConfig sets them for the latter only).
		tc.RootCAs = tc.ClientCAs
		so.Cluster.TLSConfig = tc
	}
	for _, r := range o.Routes {
		u, _ := url.Parse(r)
		if o.Secret != "" {
			u.User = url.UserPassword(routeUser, o.Secret)
		}
		so.Routes = append(so.Routes, u)
	}
	return so, nil
}

// JetStreamMemory is the embedded server's JetStream memory, in this
// process's heap: the event log (when kept in memory, EventFiles off) may
// fill EventBytes, with room to spare (the leases of a cluster made before
// 0.2 live there too): a store whose replicas move (--replicas changed) is
// placed only where its whole bound fits. 0 with URLs: no embedded server.
func (o Options) JetStreamMemory() int64 {
	const others = 64 << 20 // the leases, and what JetStream keeps besides
	switch {
	case len(o.URLs) > 0:
		return 0
	case o.EventFiles:
		return others
	}
	return o.EventBytes + others
}

// routeUser is the user name of authenticated routes.
const routeUser = "mcp-actors"

// inProcessOnly is the embedded server's client authentication: it admits
// a client connection only if it comes through an in-process pipe
// (nats.InProcessServer), which only this process can open, whatever
// credentials it presents. A connection to the client port, from any
// process, is refused. Only clients are checked here: routes have their
// own authentication, and the server's internal clients (system account,
// JetStream) are not authenticated. An admitted client is in the global
// account, where JetStream is (server.processConnect); one that names
// itself systemUser is in the server's system account, where JetStream's
// cluster administration is (RemoveNode).
type inProcessOnly struct {
	server atomic.Pointer[server.Server] // set once the server exists
}

// systemUser is the user name of the node's in-process connections to the
// system account.
const systemUser = "mcp-actors-system"

func (a *inProcessOnly) Check(c server.ClientAuthentication) bool {
	addr := c.RemoteAddress()
	if c.Kind() != server.CLIENT || addr == nil || addr.Network() != "pipe" {
		return false
	}
	if o := c.GetOpts(); o != nil && o.Username == systemUser {
		ns := a.server.Load()
		if ns == nil || ns.SystemAccount() == nil {
			return false
		}
		c.RegisterUser(&server.User{Username: systemUser, Account: ns.SystemAccount()})
	}
	return true
}

// natsLogger writes the embedded server's log to slog: notices at debug
// (it is chatty), warnings and errors as such. The route secret, as given
// and as escaped in a route URL, reads [REDACTED] in every line.
//
// Levels follow what the line means for the node, not NATS's wording: until
// the node is first ready (settled), failures to dial a route and the
// waits for routes and a storage leader are every start's, at debug;
// after, a route's failures (another node gone or going) are warnings,
// never errors; the metadata layer's routine snapshots are debug.
type natsLogger struct {
	log      *slog.Logger
	redactor *atomic.Pointer[strings.Replacer] // nil inside without a secret
	fatal    chan error                        // the first fatal error (a listener that cannot bind), for the start's wait
	settled  *atomic.Bool                      // the node has been ready once
	started  *atomic.Bool                      // the server started: a fatal error is no longer the start's to report
}

func newNATSLogger(log *slog.Logger, secrets []string, settled *atomic.Bool) natsLogger {
	l := natsLogger{log: log, redactor: new(atomic.Pointer[strings.Replacer]), fatal: make(chan error, 1),
		settled: settled, started: new(atomic.Bool)}
	l.redact(secrets)
	return l
}

// redact makes every later line hide secrets, as given and as escaped in
// a route URL (a secret file read again names them anew).
func (l natsLogger) redact(secrets []string) {
	var pairs []string
	for _, secret := range secrets {
		if secret == "" {
			continue
		}
		escaped := strings.TrimPrefix(url.UserPassword(routeUser, secret).String(), routeUser+":")
		pairs = append(pairs, secret, "[REDACTED]", escaped, "[REDACTED]")
	}
	if len(pairs) == 0 {
		l.redactor.Store(nil)
		return
	}
	l.redactor.Store(strings.NewReplacer(pairs...))
}

func (l natsLogger) line(f string, v []any) string {
	s := "nats: " + fmt.Sprintf(f, v...)
	if r := l.redactor.Load(); r != nil {
		s = r.Replace(s)
	}
	return s
}

func (l natsLogger) Noticef(f string, v ...any) { l.log.Debug(l.line(f, v)) }
func (l natsLogger) Warnf(f string, v ...any) {
	line := l.line(f, v)
	switch msg := strings.TrimPrefix(line, "nats: "); {
	case strings.HasPrefix(msg, "Metalayer "): // routine snapshots, worded as warnings
		l.log.Debug(line)
	case !l.settled.Load() && (strings.HasPrefix(msg, "Waiting for routing to be established") ||
		strings.HasPrefix(msg, "JetStream has not established contact with a meta leader")):
		l.log.Debug(line) // what every start goes through
	default:
		l.log.Warn(line)
	}
}
func (l natsLogger) Fatalf(f string, v ...any) {
	line := l.line(f, v)
	if l.started.Load() {
		l.log.Error(line)
	}
	select {
	case l.fatal <- errors.New(line):
	default: // one is enough
	}
}
func (l natsLogger) Errorf(f string, v ...any) {
	line := l.line(f, v)
	dial := strings.HasPrefix(line, "nats: Error trying to connect to route")
	switch {
	case dial && !l.settled.Load():
		l.log.Debug(line)
	case dial || strings.Contains(line, " - rid:"):
		l.log.Warn(line) // a route's trouble: another node gone or going (its own log says why)
	default:
		l.log.Error(line)
	}
}
func (l natsLogger) Debugf(f string, v ...any) { l.log.Debug(l.line(f, v)) }
func (l natsLogger) Tracef(f string, v ...any) {}
