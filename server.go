package mcpactors

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"math"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-actors/mcp-actors/actors/router"
	"github.com/mcp-actors/mcp-actors/actors/session"
	"github.com/mcp-actors/mcp-actors/internal/access"
	"github.com/mcp-actors/mcp-actors/internal/clusterapi"
	"github.com/mcp-actors/mcp-actors/internal/memguard"
	"github.com/mcp-actors/mcp-actors/internal/tracing"
	"github.com/mcp-actors/mcp-actors/messages"
	"github.com/mcp-actors/mcp-actors/metrics"
)

// Options configure a Server. The zero value is usable.
type Options struct {
	// Instructions are sent to clients in the initialize result.
	Instructions string
	// Logger receives the server's own log (handler panics and failures
	// among it); nil means slog.Default(). Nothing logged here reaches
	// clients.
	Logger *slog.Logger
	// PageSize is the number of items per page of a list (default 100).
	PageSize int
	// Limits bound each session.
	Limits Limits
	// Observer is told what sessions do, and what the HTTP endpoint does
	// when it is an HTTPObserver too: for metrics of the embedder's own
	// (Metrics gives Prometheus's); nil ignores it.
	Observer Observer
	// Metrics, when set, gets the server's Prometheus metrics (sessions,
	// requests by method and tool, server-to-client calls, HTTP), and
	// HTTPHandler serves them at /metrics.
	Metrics *prometheus.Registry
	// MaxSessions bounds the sessions the server holds at once (default
	// 100,000); opening one more fails (HTTP: 503 with Retry-After).
	MaxSessions int
	// MaxHeldMemory, when positive, refuses new sessions (HTTP: 503 with
	// Retry-After) while the memory the Go runtime holds, less what the
	// next collection would free (goroutine stacks and fragmentation
	// count; dead objects do not), is above it, in bytes: a bound under
	// the process's memory limit (GOMEMLIMIT), so
	// that a node full of sessions says so before it is killed for it.
	// Sessions already open, and sessions a node takes over, are served
	// whatever it says.
	MaxHeldMemory int64

	// MaxParked bounds the handlers of protocol 2026-07-28 requests kept
	// waiting for the client's input (default 10,000; negative: none):
	// past it a handler
	// that asks for input is not kept, and the client's retry runs it
	// again, its earlier calls answered from the requestState's journal.
	MaxParked int
	// RequestStateTTL is how long a requestState is valid, and a kept
	// handler waits for the retry (default 10 minutes).
	RequestStateTTL time.Duration
	// SingleUseRequestState makes a cluster refuse a retry of an answered
	// round of a protocol 2026-07-28 request on every node, also once the
	// node that answered it is lost: each answer of a kept handler is
	// recorded in the cluster's storage first, a replicated write per
	// answered call (bench/README: about 0.7 ms more CPU per elicitation
	// round trip on three nodes). Without it an answered round is refused
	// by its node while that node lives; after its loss a replayed retry
	// runs the handler again from the journal. A lone node refuses from
	// memory either way.
	SingleUseRequestState bool

	// JournalSpillBytes is the size past which a protocol 2026-07-28
	// request's journal (the client's answers so far) is kept in the
	// cluster's storage rather than in its requestState (default 16 KiB;
	// a lone node never spills).
	JournalSpillBytes int
	// URLElicitationWait bounds how long the retry of a protocol
	// 2026-07-28 request waits for the out-of-band step of a URL
	// elicitation its client accepted (Session.ElicitURL) before the
	// client is asked again (default 10 s).
	URLElicitationWait time.Duration

	// TracerProvider, when set, gets the server's OpenTelemetry spans: one
	// for each client request its HTTP endpoint receives ("mcp.request
	// <method>"), each hop of one to another node ("mcp.route", then
	// "mcp.deliver" there), each handler run ("mcp.handle <method>") and
	// each server-to-client call ("mcp.client_call <method>"), every span
	// with its node (mcp.node), in the trace the client named (W3C
	// traceparent, from the HTTP header or from params._meta). A request
	// that names no trace starts one. Nil: no spans, at no cost.
	TracerProvider trace.TracerProvider
}

// Server is a catalog of tools, prompts, resources, resource templates and
// completions, and the actor system its sessions run in. Its methods are safe
// for concurrent use; the catalog may change while sessions use it.
type Server struct {
	info   messages.Implementation
	opts   Options
	log    *slog.Logger
	system *actor.ActorSystem
	cfg    *session.Config
	local  *router.Local // this process's sessions
	router router.Router // how transports reach sessions: local, or the cluster's
	// cluster is the router of JoinCluster, or nil.
	cluster clusterapi.Relay
	tracer  *tracing.Tracer // nil without Options.TracerProvider
	// metrics are the collectors of Options.Metrics, or nil.
	metrics *metrics.Metrics
	// handlers runs the sessions' handlers.
	handlers *handlerGoroutines
	// modern serves the requests of protocol 2026-07-28, which have no
	// session; stateKeys says whether SetRequestStateKeys gave it keys.
	modern    *session.Modern
	listens   listeners // subscriptions/listen of this node
	modernOpt session.ModernOptions
	stateKeys bool

	mu          sync.Mutex // serialises catalog changes; readers use the snapshots below
	tools       atomic.Pointer[index[*tool]]
	resources   atomic.Pointer[index[*resource]]
	templates   atomic.Pointer[index[*resourceTemplate]]
	prompts     atomic.Pointer[index[*prompt]]
	completions atomic.Pointer[index[CompletionHandler]]

	open     sync.Map         // session ID → *session.Ref: open sessions, for broadcasts
	disabled map[string]*tool // disabled tools (SetToolEnabled); guarded by mu
	versions sync.Map         // resource URI → uint64: ResourceVersion
	// state is the replicated catalog state of a cluster; nil on its own.
	state    catalogState
	closed   atomic.Bool
	shutdown sync.Once // stops the actor system once, however often Close is called
	// stopping is set by LameDuck: Ready says so while everything is
	// still served.
	stopping atomic.Bool
}

// NewServer returns a server that introduces itself as info. opts may be
// nil.
func NewServer(info messages.Implementation, opts *Options) *Server {
	s := &Server{info: info}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.PageSize <= 0 {
		s.opts.PageSize = 100
	}
	if s.opts.MaxSessions <= 0 {
		s.opts.MaxSessions = 100000
	}
	s.log = s.opts.Logger
	if s.log == nil {
		s.log = slog.Default()
	}
	s.handlers = newHandlerGoroutines(s.log)
	s.tools.Store(newIndex[*tool]())
	s.resources.Store(newIndex[*resource]())
	s.templates.Store(newIndex[*resourceTemplate]())
	s.prompts.Store(newIndex[*prompt]())
	s.completions.Store(newIndex[CompletionHandler]())
	s.system = actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(minLevel{Handler: s.log.Handler(), min: slog.LevelWarn})
	}),
		// A message that reaches a session after it stopped (a timer's,
		// say) is a dead letter; protoactor counts them in a goroutine that
		// lives for this interval. Keep it short: the count is not logged
		// (Info), and a closed server should leave no goroutine behind.
		actor.WithDeadLetterThrottleInterval(20*time.Millisecond))
	if s.opts.Metrics != nil {
		s.metrics = metrics.New(s.opts.Metrics, &metrics.Options{
			Sessions: s,
			// Only the catalog's tools get a tool label: a tools/call
			// names whatever the client likes.
			KnownTool:   func(name string) bool { _, ok := s.tools.Load().get(name); return ok },
			Version:     info.Version,
			MaxSessions: s.opts.MaxSessions,
			Memory:      memoryFigures(),
		})
	}
	s.local = router.NewLocal(router.NewStreams(""), s.opts.MaxSessions, s.spawn)
	s.admit(s.local)
	s.router = s.local
	s.tracer = tracing.New(s.opts.TracerProvider, "")
	s.cfg = &session.Config{
		Tracer:       s.tracer,
		ServerInfo:   info,
		Capabilities: serverCapabilities(),
		Instructions: s.opts.Instructions,
		Handler:      session.HandlerFunc(s.handle),
		Limits:       session.Limits(s.opts.Limits),
		Logger:       s.log,
		Observer:     s.sessionObserver(),
		Streams:      s.local,
		// A session's mailbox runs on the goroutine that posts to an idle
		// one (its Receive never blocks): a request costs no hand-over
		// between goroutines until its handler runs.
		Dispatcher: actor.NewSynchronizedDispatcher(300),
		Go:         s.handlers.run,
		OnOpen:     func(r *session.Ref) { s.open.Store(r.ID(), r) },
		OnClose: func(r *session.Ref) {
			s.open.CompareAndDelete(r.ID(), r) // never a newer run of the session (restored here again)
			if s.cluster != nil && r.HandedOver() {
				s.cluster.HandedOver(r.ID()) // while it is still in the registry (cluster/handover.go)
			}
			s.local.SessionClosed(r)
			if s.cluster != nil && !r.HandedOver() {
				s.cluster.Forget(r.ID())
			}
		},
	}
	s.modernOpt = session.ModernOptions{Check: s.checkModern, Listen: s.listen, SpillBytes: s.opts.JournalSpillBytes, MaxParked: s.opts.MaxParked, ParkTTL: s.opts.RequestStateTTL, RecordAnswers: s.opts.SingleUseRequestState}
	s.modern = session.NewModern(s.system.Root, s.cfg, s.modernOpt)
	// URL elicitations are kept as long as the requestStates that may wait
	// for them.
	s.cfg.URLElicitations = session.NewURLElicitations(s.modern.TTL(), cmp.Or(s.opts.URLElicitationWait, 10*time.Second))
	return s
}

// serverCapabilities is what every session announces: the catalog can
// change at runtime, so every list may change.
func serverCapabilities() messages.ServerCapabilities {
	return messages.ServerCapabilities{
		Logging:     &messages.Empty{},
		Completions: &messages.Empty{},
		Prompts:     &messages.PromptsCapabilities{ListChanged: true},
		Resources:   &messages.ResourcesCapabilities{Subscribe: true, ListChanged: true},
		Tools:       &messages.ToolsCapabilities{ListChanged: true},
	}
}

// Info returns the server's name and version.
func (s *Server) Info() messages.Implementation { return s.info }

// init gives the module's own packages (harness, tests) a server's router
// and sessions, which embedders do not see.
func init() {
	access.Router = func(s any) router.Router { return s.(*Server).router }
	access.Session = func(s any, id string) (*session.Ref, bool) { return s.(*Server).local.Session(id) }
}

// spawn starts the actor of a session the router opens.
func (s *Server) spawn(id string, o router.OpenOptions) (*session.Ref, error) {
	if s.closed.Load() {
		return nil, ErrServerClosed
	}
	return session.Spawn(s.system.Root, id, s.cfg, session.SpawnOptions{Principal: o.Principal, Resumable: o.Resumable, Restore: o.Restore})
}

// ClusterNode is a node of a cluster: a *cluster.Node, from cluster.Start
// (see package cluster). The server asks it what internal/clusterapi
// says, so that a program that never joins a cluster links no NATS.
type ClusterNode = clusterapi.Node

// JoinCluster makes the server a node of node's cluster: its sessions are
// reachable from every node, and its transports reach every node's
// sessions. Call it before the server opens a session; the node is the
// caller's to close, after the server.
func (s *Server) JoinCluster(node ClusterNode) error {
	if s.local.Len() > 0 || s.cluster != nil {
		return errors.New("mcpactors: JoinCluster must come before any session, once")
	}
	if !s.stateKeys && !node.Standalone() {
		// A retry may land on any node: each must open what the others
		// sealed.
		current, previous := node.StateKeys()
		if current == nil {
			return ErrNoStateKey
		}
		if err := s.SetRequestStateKeys(current, previous); err != nil {
			return err
		}
		// Derived from the route secret: they follow its file.
		sl := s.modernOpt.Sealer
		node.OnRouteSecrets(func() {
			if err := sl.Rotate(node.StateKeys()); err != nil {
				s.log.Error("the request state keys could not follow the route secrets", "err", err)
			}
		})
	}
	local := router.NewLocal(router.NewStreams(node.ID()), s.opts.MaxSessions, s.spawn)
	s.admit(local)
	rt, err := node.Relay(local, s.opts.TracerProvider)
	if err != nil {
		return err
	}
	s.modernOpt.Node, s.modernOpt.Forward = node.ID(), rt.ForwardModern
	if !node.Standalone() {
		s.modernOpt.Spill = node.Journals(s.modern.TTL())
		s.cfg.URLElicitations.SetStore(s.modernOpt.Spill, s.log)
	}
	s.modern = session.NewModern(s.system.Root, s.cfg, s.modernOpt)
	if err := rt.ServeModern(s.modern.Serve, s.modern.TTL()); err != nil {
		rt.Close()
		return err
	}
	if err := rt.OnCompletion(func(id, principal string) { s.cfg.URLElicitations.Complete(id, principal) }); err != nil {
		rt.Close()
		return err
	}
	s.local, s.router, s.cluster, s.state = local, rt, rt, rt
	s.cfg.Streams = rt
	s.tracer = tracing.New(s.opts.TracerProvider, node.ID())
	s.cfg.Tracer = s.tracer
	node.CountSessions(local.Len)
	if !node.Standalone() {
		s.cfg.Persist = rt.Persist
		s.cfg.Acting = node.LeaseContext
		if idle := s.opts.Limits.IdleTimeout; idle > 0 {
			// A session in use writes its record at least every idle
			// timeout (session.Config.Persist); one whose node died is
			// removed from the directory after twice that.
			rt.SetRecordTTL(2 * idle)
		}
	}
	// A session's durable State is one NATS message: PutData refuses what
	// would not fit.
	if max := rt.MaxStateBytes(); max > 0 && (s.cfg.Limits.MaxStateBytes <= 0 || s.cfg.Limits.MaxStateBytes > max) {
		s.cfg.Limits.MaxStateBytes = max
	}
	s.cfg.Mark = s.catalogMark
	s.cfg.CatchUp = s.catchUp
	s.cfg.LogEvent = rt.LogEvent
	if s.opts.Metrics != nil {
		rt.RegisterMetrics(s.opts.Metrics)
	}
	rt.WatchCatalog(clusterapi.CatalogWatch{Tool: s.applyTool, Resource: s.bumpVersion})
	return nil
}

// OpenSessions returns the number of open sessions.
func (s *Server) OpenSessions() int {
	n := 0
	s.open.Range(func(any, any) bool { n++; return true })
	return n
}

// Close ends every session at once and waits until they have ended or ctx
// is done. The server accepts no new sessions afterwards. Calling it again
// is safe.
func (s *Server) Close(ctx context.Context) error {
	return s.end(ctx, 0)
}

// Shutdown ends every session gracefully: new sessions and requests are
// refused, server-to-client calls fail, and the requests already running
// get until ctx's deadline (or 10 s without one) to finish and answer.
// Sessions still running then are closed at once.
func (s *Server) Shutdown(ctx context.Context) error {
	grace := 10 * time.Second
	if d, ok := ctx.Deadline(); ok {
		grace = time.Until(d)
	}
	return s.end(ctx, max(grace, time.Millisecond))
}

// Drain makes the server open no more sessions (initialize gets 503
// "draining", /readyz 503) while the open ones go on: the first step of
// Shutdown, which an operator may also take alone to move clients to
// other nodes.
func (s *Server) Drain() {
	s.local.Drain()
	s.endListens()
}

// Ready reports whether the server takes new sessions: not while it
// drains, nor while its cluster node is not ready (JetStream not up, no
// lease, no route to the others); the error says why. /readyz answers it.
func (s *Server) Ready() error {
	if s.Draining() {
		return errDraining
	}
	if s.stopping.Load() {
		return errStopping
	}
	if s.cluster != nil {
		return s.cluster.Ready()
	}
	return nil
}

// Started reports whether the server has finished starting: at once
// alone; in a cluster, once its node has been ready once (it joined the
// cluster, its stores exist, it took its lease). Unlike Ready it stays nil
// after, whatever happens: /startupz answers it, for a startup probe that
// holds the liveness probe off while a node waits for the others.
func (s *Server) Started() error {
	if s.cluster != nil && !s.cluster.Started() {
		if err := s.cluster.Ready(); err != nil {
			return err
		}
		return errors.New("starting")
	}
	return nil
}

// errDraining is Ready's answer while the server drains.
var errDraining = errors.New("draining")

// errStopping is Ready's answer in a lame duck (LameDuck).
var errStopping = errors.New("stopping: still answering, about to drain")

// LameDuck makes Ready report the server not ready ("stopping") while it
// goes on serving everything, new sessions included: the first step of a
// planned stop, for the time a load balancer needs to stop sending it
// clients (a Kubernetes Service drops a terminating pod from its
// endpoints within seconds, not at once). Serve's answers say
// "Connection: close" meanwhile: a client that kept a connection to this
// node (a Service balances connections, not requests) reconnects, to a
// node that is ready. Shutdown (or Drain) follows it; nothing undoes it.
func (s *Server) LameDuck() { s.stopping.Store(true) }

// Draining reports whether Drain (or Shutdown, or Close) has begun.
func (s *Server) Draining() bool { return s.local.Draining() }

func (s *Server) end(ctx context.Context, grace time.Duration) error {
	s.local.Drain()
	s.endListens()
	if s.cluster != nil {
		s.cluster.Drain(grace)
	}
	s.closed.Store(true)
	var refs []*session.Ref
	// In a cluster, a session of a node that shuts down is handed over:
	// another node takes it over, from its durable state, at its client's
	// next message.
	handover := s.cluster != nil && s.cluster.HandsOver()
	s.local.Each(func(r *session.Ref) bool {
		r.Send(&messages.CloseSession{Reason: "server closing", Grace: grace, Handover: handover})
		refs = append(refs, r)
		return true
	})
	modernDone := make(chan error, 1)
	go func() { modernDone <- s.modern.Close(ctx, grace) }()
	for _, r := range refs {
		select {
		case <-r.Done(): // OnClose has run: the session is listed nowhere
		case <-ctx.Done():
			for _, r := range refs {
				r.Send(&messages.CloseSession{Reason: "server closing: deadline passed"})
			}
			s.handlers.release() // a handler still running ends on its own
			return ctx.Err()
		}
	}
	if err := <-modernDone; err != nil {
		s.handlers.release()
		return err
	}
	s.shutdown.Do(func() {
		if s.cluster != nil {
			s.cluster.Close()
		}
		s.system.Shutdown()
		s.handlers.release()
	})
	return nil
}

// broadcast sends an encoded notification to every open session (for a
// resource update, to those subscribed to uri).
func (s *Server) broadcast(method string, params any, uri string) {
	m := s.notification(method, params, uri)
	if m == nil {
		return
	}
	s.open.Range(func(_, v any) bool {
		v.(*session.Ref).Send(m)
		return true
	})
	s.notifyListeners(method, params, uri)
}

// notification returns the message that has a session send notification
// method (for subscribers of uri only, when not ""); nil, logged, if it
// cannot be encoded.
func (s *Server) notification(method string, params any, uri string) *messages.NotifyClient {
	frame, err := messages.EncodeNotification(method, params)
	if err != nil {
		s.log.Error("encoding a notification failed", "method", method, "err", err)
		return nil
	}
	return &messages.NotifyClient{Data: frame, URI: uri}
}

// minLevel drops records below min (the actor system logs dead letters at
// Info, which is noise for us).
type minLevel struct {
	slog.Handler
	min slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(as []slog.Attr) slog.Handler {
	return minLevel{Handler: h.Handler.WithAttrs(as), min: h.min}
}

func (h minLevel) WithGroup(g string) slog.Handler {
	return minLevel{Handler: h.Handler.WithGroup(g), min: h.min}
}

// LiveSessions returns the number of sessions not yet closed.
func (s *Server) LiveSessions() int { return s.local.Len() }

// admit makes l refuse new sessions past Options.MaxHeldMemory.
func (s *Server) admit(l *router.Local) {
	if g := memguard.New(s.opts.MaxHeldMemory); g != nil {
		l.SetAdmission(g.Check)
	}
}

// memoryFigures returns what the memory gauges read: the memory held
// (memguard) and the limit in effect (GOMEMLIMIT; 0 for none).
func memoryFigures() func() (held, limit uint64) {
	g := memguard.New(math.MaxInt64)
	return func() (uint64, uint64) {
		limit := debug.SetMemoryLimit(-1)
		if limit == math.MaxInt64 {
			limit = 0
		}
		return g.Held(), uint64(limit)
	}
}
