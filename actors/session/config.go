package session

import (
	"context"
	"encoding/json/jsontext"
	"log/slog"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/mcp-actors/mcp-actors/internal/tracing"
	"github.com/mcp-actors/mcp-actors/messages"
)

// Handler serves the client requests a session does not answer itself
// (everything but initialize, ping, logging/setLevel and resources
// (un)subscribe). Serve runs on its own goroutine, off the mailbox; ctx ends
// when the client cancels the request or the session closes. The result is
// marshalled as the response; an error that is a *messages.Error goes to the
// client as it is, any other error as a generic internal error.
type Handler interface {
	Serve(ctx context.Context, s *Session, req *messages.Message) (any, error)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, s *Session, req *messages.Message) (any, error)

// Serve calls f.
func (f HandlerFunc) Serve(ctx context.Context, s *Session, req *messages.Message) (any, error) {
	return f(ctx, s, req)
}

// Limits bound what one session may hold. Zero fields take the defaults.
type Limits struct {
	MaxInflight  int // concurrent client requests; more get an error (default 1024)
	MaxDataKeys  int // keys in the per-session data store (default 256)
	MaxDataBytes int // total bytes of keys and values in it (default 1 MiB)
	MaxKeyBytes  int // bytes of one key (default 256)
	// MaxStateBytes bounds the session's State as Config.Persist gets it,
	// encoded as JSON, the data store's values in base64 (0: no bound).
	// A PutData that would make it larger fails with ErrDataLimit. A
	// cluster sets it to what one of its durable writes carries.
	MaxStateBytes int

	// MaxEvents and MaxEventBytes bound the event log of a resumable
	// session (defaults 512 events, 1 MiB). Past them the oldest events are
	// evicted and can no longer be replayed.
	MaxEvents     int
	MaxEventBytes int

	// IdleTimeout closes a session that has received nothing for this long
	// and has no request running (0: never). MaxLifetime closes it this
	// long after it started, whatever it is doing (0: never).
	IdleTimeout time.Duration
	MaxLifetime time.Duration
}

func (l Limits) withDefaults() Limits {
	if l.MaxInflight <= 0 {
		l.MaxInflight = 1024
	}
	if l.MaxDataKeys <= 0 {
		l.MaxDataKeys = 256
	}
	if l.MaxDataBytes <= 0 {
		l.MaxDataBytes = 1 << 20
	}
	if l.MaxKeyBytes <= 0 {
		l.MaxKeyBytes = 256
	}
	if l.MaxEvents <= 0 {
		l.MaxEvents = 512
	}
	if l.MaxEventBytes <= 0 {
		l.MaxEventBytes = 1 << 20
	}
	return l
}

// Config is what every session of a server shares. It is read-only once
// sessions are spawned with it.
type Config struct {
	// Tracer, when set, makes a span for each handler run of a traced
	// request (internal/tracing).
	Tracer       *tracing.Tracer
	ServerInfo   messages.Implementation
	Capabilities messages.ServerCapabilities
	Instructions string
	Handler      Handler
	Limits       Limits
	// URLElicitations records the URL elicitations whose out-of-band step is
	// done (Session.ElicitURL waits on it); nil: ElicitURL fails.
	URLElicitations *URLElicitations
	// Logger receives the server-side log (never sent to clients). Nil
	// discards.
	Logger *slog.Logger
	// Observer is told what sessions do, for metrics; nil ignores it.
	Observer Observer
	// Streams carries the sessions' frames to the streams they are
	// addressed to (the node's stream registry, or the cluster). Required.
	Streams StreamSink
	// Acting, when set, returns the context a handler starting now runs
	// under, besides its request's: it ends when this node may no longer
	// act for its sessions (a cluster node's lease deadline), so that no
	// handler of a session runs on once another node may take it over.
	Acting func() context.Context
	// Go runs handlers off the mailbox (nil: a new goroutine each; the
	// root package's server reuses goroutines, see its
	// handler_goroutines.go).
	Go func(func())
	// Dispatcher processes the sessions' mailboxes (nil: protoactor's
	// default, a new goroutine per mailbox run).
	Dispatcher actor.Dispatcher
	// Persist, when set, makes the session's State durable after a
	// change of it: it is called on the actor and must not block, and it
	// calls done (on any goroutine) once the write has ended — nil when it
	// is durable. A session makes one write at a time, so states of one
	// session come in order; what waits on a change (initialize's answer,
	// PutData, …) waits for its write (see durable.go). A write that fails
	// closes the session for handover.
	Persist func(id string, st *State, done func(error))
	// LogEvent, when set, is given every event a resumable session logs
	// for Last-Event-ID resumption, on the actor, in order: it must not
	// block (a cluster appends it to a JetStream stream without waiting).
	LogEvent func(id string, e LoggedEvent)
	// Mark, when set with Persist, is called on the actor at every State
	// write, with the session's subscriptions, for what the server knows
	// of the catalog the session has been told of (its tool list, the
	// versions of the resources it subscribes to); the State keeps it
	// (State.Mark). CatchUp, when set, is called for a session restored
	// from a State, once it is open, with that mark, and returns what the
	// session must be told of what changed while it had no node (a change
	// broadcast then reached no one); the session sends it as it sends a
	// broadcast. Neither may block.
	Mark    func(subscriptions []string) map[string]string
	CatchUp func(mark map[string]string) []*messages.NotifyClient
	// OnOpen and OnClose are called on the actor when a session opens
	// (notifications/initialized) and when it closes. They must not block.
	OnOpen  func(r *Ref)
	OnClose func(r *Ref)

	// initResults holds the initialize result per protocol version,
	// encoded once (it depends on nothing else): jsontext.Value.
	initResults sync.Map
}

// initResult returns the encoded initialize result for version.
func (c *Config) initResult(version string) (jsontext.Value, error) {
	if r, ok := c.initResults.Load(version); ok {
		return r.(jsontext.Value), nil
	}
	b, err := messages.Marshal(&messages.InitializeResult{
		ProtocolVersion: version,
		Capabilities:    c.Capabilities,
		ServerInfo:      c.ServerInfo,
		Instructions:    c.Instructions,
	})
	if err != nil {
		return nil, err
	}
	c.initResults.Store(version, b)
	return b, nil
}

// Outcome says how a client request ended.
type Outcome string

// The outcomes of a request.
const (
	OutcomeOK        Outcome = "ok"        // a result
	OutcomeError     Outcome = "error"     // a JSON-RPC error, or a tool result with isError true
	OutcomeCancelled Outcome = "cancelled" // cancelled by the client: no response
)

// RequestReport is what an Observer is told of one client request.
type RequestReport struct {
	Method string
	// Tool is the tool name of a tools/call, as the client sent it (so
	// possibly one the server does not have); empty for other methods.
	Tool    string
	Outcome Outcome
	// Duration runs from the request reaching its session to its answer
	// (for a cancelled request, to the handler's return).
	Duration time.Duration
}

// Observer is told what sessions do. Its methods are called from session
// actors and handler goroutines, concurrently, and must not block.
type Observer interface {
	// RequestHandled reports a client request answered (or cancelled). It
	// is called before the answer is sent, so a client that has the
	// answer finds the request counted.
	RequestHandled(r RequestReport)
	// PendingCalls reports a change in the number of server-to-client
	// calls waiting for the client, across sessions.
	PendingCalls(delta int)
	// EventsReplayed reports stream events resent after Last-Event-ID.
	EventsReplayed(n int)
}

// StreamSink is where a session sends what it has for its streams: the node's
// stream registry in one process, the cluster's router across nodes. Its
// methods are called on the session actor and must not block.
type StreamSink interface {
	// DeliverStream hands ev to the stream it names, and reports whether
	// the stream took it. A stream that is gone, or whose client is not
	// keeping up, refuses it; the session then stops using the stream
	// (what it sent stays in its event log for the client to resume). A
	// stream on another node is reported as taking everything: if it turns
	// out to be gone, the session is sent messages.DetachStream.
	DeliverStream(ev messages.StreamEvent) bool
	// StreamGone reports whether the client of a stream is known to have
	// gone (a new GET may then take its place). Only a stream of this node
	// can tell; any other reports false.
	StreamGone(id messages.StreamID) bool
}
