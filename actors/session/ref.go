package session

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/mcp-actors/mcp-actors/actors/dispatcher"
	"github.com/mcp-actors/mcp-actors/messages"
)

// Ref is the address of one session actor in this process. The node's
// router and the session's own handlers hold it to send the session
// messages (transports reach sessions through a router, by ID); it holds
// no session state.
type Ref struct {
	id         string
	principal  string
	pid        atomic.Pointer[actor.PID] // set once the actor runs
	root       *actor.RootContext
	closedCtx  context.Context // cancelled by the actor when the session has closed
	closed     atomic.Bool     // set with closedCtx: Closed reads it without making its channel
	markClosed context.CancelFunc
	client     *dispatcher.Client
	info       atomic.Pointer[Info] // set once by the actor at initialize
	handedOver atomic.Bool          // closed with CloseSession.Handover
	// urlElicitations is the server's URL elicitation registry
	// (Config.URLElicitations).
	urlElicitations *URLElicitations
}

// HandedOver reports whether the session was closed to be taken over by
// another node (CloseSession.Handover) rather than ended.
func (r *Ref) HandedOver() bool { return r.handedOver.Load() }

// Info returns what the session learnt at initialize, or nil before.
func (r *Ref) Info() *Info { return r.info.Load() }

// ID returns the session ID.
func (r *Ref) ID() string { return r.id }

// Principal returns who created the session ("" when unauthenticated).
// Every request for the session must come from the same principal.
func (r *Ref) Principal() string { return r.principal }

// PID returns the actor's process ID.
func (r *Ref) PID() *actor.PID { return r.pid.Load() }

// Send delivers m to the session's mailbox. It never blocks. After the
// session has closed, messages are dropped.
func (r *Ref) Send(m messages.ActorMessage) { r.post(m) }

// Done is closed when the session has closed.
func (r *Ref) Done() <-chan struct{} { return r.closedCtx.Done() }

// Closed reports whether the session has closed.
func (r *Ref) Closed() bool { return r.closed.Load() }

func (r *Ref) post(m any) {
	if r.Closed() {
		return
	}
	r.root.Send(r.pid.Load(), m)
}

// SpawnOptions describe one session.
type SpawnOptions struct {
	// Principal is who created the session; see Ref.Principal.
	Principal string
	// Resumable makes the session keep an event log so that a client can
	// resume a stream with Last-Event-ID (Streamable HTTP).
	Resumable bool
	// Restore, when set, starts the session in that state rather than new:
	// the session was running on a node that was lost (see State).
	Restore *State
}

// Spawn starts a session actor with the given ID. The session is new: it
// answers initialize and ping until initialized. Frames not tied to a
// request go to the stream attached with messages.AttachStream; every
// frame goes through cfg.Streams.
func Spawn(root *actor.RootContext, id string, cfg *Config, opts SpawnOptions) (*Ref, error) {
	if cfg.Streams == nil {
		return nil, errors.New("session: Config.Streams is required")
	}
	r := &Ref{id: id, principal: opts.Principal, root: root, urlElicitations: cfg.URLElicitations}
	var cancel context.CancelFunc
	r.closedCtx, cancel = context.WithCancel(context.Background())
	r.markClosed = func() { r.closed.Store(true); cancel() }
	r.client = dispatcher.NewClient(func(m dispatcher.Message) { r.post(m) }, r.closedCtx, ErrSessionClosed)
	var popts []actor.PropsOption
	if cfg.Dispatcher != nil {
		popts = append(popts, actor.WithDispatcher(cfg.Dispatcher))
	}
	props := actor.PropsFromProducer(func() actor.Actor { return newSessionActor(r, cfg, opts) }, popts...)
	// A unique name: a session started again on this node (restored after
	// its last actor closed for handover) must not wait for the last
	// actor's name to be freed.
	r.pid.Store(root.SpawnPrefix(props, "mcp-session/"))
	return r, nil
}

// LogID is how a session appears in logs above debug level: a short hash
// of its ID, never the ID itself (a bearer secret when the server
// authenticates no one).
func LogID(id string) string {
	h := sha256.Sum256([]byte(id))
	return hex.EncodeToString(h[:6])
}
