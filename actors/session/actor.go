package session

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/mcp-actors/mcp-actors/actors/dispatcher"
	"github.com/mcp-actors/mcp-actors/messages"
)

// lifecycle is where a session is in its life.
type lifecycle uint8

const (
	stateNew     lifecycle = iota // waiting for initialize
	statePending                  // initialized answered, waiting for notifications/initialized
	stateOpen                     // open for everything
	stateClosed                   // ended; the actor is stopping
)

// sessionActor owns one session's state. Every field is touched only in
// Receive, on the actor's goroutine.
type sessionActor struct {
	ref *Ref
	cfg *Config
	lim Limits
	log *slog.Logger

	state lifecycle
	info  *Info // set by initialize; immutable afterwards (handlers share it)

	// ctx is the parent of every handler's context; cancel ends them all.
	ctx    context.Context
	cancel context.CancelFunc

	logRank  int                 // lowest level sent; from logging/setLevel
	subs     map[string]struct{} // subscribed resource URIs
	inflight map[messages.ID]*inflight
	table    *dispatcher.Table

	stream  messages.Sink // the standalone stream, or nil
	backlog [][]byte      // frames for the standalone stream while none is attached

	roots rootsState
	data  dataStore
}

// inflight is one client request whose handler is running.
type inflight struct {
	cancel    context.CancelFunc
	sink      messages.Sink // nil: the standalone stream
	cancelled bool          // by the client: send no response
}

// maxBacklog bounds the frames kept for a standalone stream not yet
// attached; older ones are dropped beyond it.
const maxBacklog = 256

func newSessionActor(ref *Ref, cfg *Config) *sessionActor {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	a := &sessionActor{
		ref:      ref,
		cfg:      cfg,
		lim:      cfg.Limits.withDefaults(),
		log:      logger.With("session", ref.id),
		subs:     make(map[string]struct{}),
		inflight: make(map[messages.ID]*inflight),
	}
	a.ctx, a.cancel = context.WithCancel(context.Background())
	a.table = dispatcher.NewTable(a.sendCallFrame)
	a.table.Hold() // no server-to-client request before the session opens
	return a
}

// Receive is the actor's mailbox loop body.
func (a *sessionActor) Receive(ctx actor.Context) {
	defer func() {
		// A panic would restart the actor with empty state; end the session
		// cleanly instead.
		if p := recover(); p != nil {
			a.log.Error("session actor panicked; closing the session", "panic", p, "stack", string(debug.Stack()))
			a.close(ctx, "internal error")
		}
	}()
	switch m := ctx.Message().(type) {
	case *messages.HandleRequest:
		a.handleRequest(m.Msg, m.Sink)
	case *messages.HandleNotification:
		a.handleNotification(m.Msg)
	case *messages.DeliverResponse:
		a.table.HandleResponse(m.Msg)
	case *requestDone:
		a.requestDone(m)
	case dispatcher.Message:
		a.table.Receive(m)
	case *sendFrame:
		a.deliver(m.route, m.data)
	case *sendLog:
		a.sendLog(m)
	case *messages.AttachStream:
		a.attachStream(m.Sink)
	case *messages.DetachStream:
		if a.stream == m.Sink {
			a.stream = nil
		}
	case *messages.NotifyClient:
		a.notifyClient(m)
	case *getRoots, *storeRoots, *addRootsListener, *removeRootsListener, *rootsListenersDone:
		a.receiveRoots(m.(internalMessage))
	case *dataOp:
		a.data.apply(m, a.lim)
	case *messages.CloseSession:
		a.close(ctx, m.Reason)
	case *actor.Started, *actor.Stopping, *actor.Restarting:
	case *actor.Stopped:
		a.close(nil, "stopped")
	default:
		a.log.Error("session actor: unexpected message dropped", "type", fmt.Sprintf("%T", m))
	}
}

// attachStream makes sink the standalone stream and flushes the backlog.
func (a *sessionActor) attachStream(sink messages.Sink) {
	if a.state == stateClosed {
		sink.Close()
		return
	}
	if a.stream != nil && a.stream != sink {
		a.stream.Close()
	}
	a.stream = sink
	backlog := a.backlog
	a.backlog = nil
	for _, f := range backlog {
		sink.Deliver(messages.Frame{Data: f})
	}
}

// deliver sends data on the stream of request route, or on the standalone
// stream when the request has none or is gone.
func (a *sessionActor) deliver(route messages.ID, data []byte) {
	if a.state == stateClosed {
		return
	}
	if !route.IsZero() {
		if inf := a.inflight[route]; inf != nil && inf.sink != nil {
			inf.sink.Deliver(messages.Frame{Data: data})
			return
		}
	}
	if a.stream != nil {
		a.stream.Deliver(messages.Frame{Data: data})
		return
	}
	if len(a.backlog) >= maxBacklog {
		a.log.Warn("standalone stream backlog full; dropping the oldest frame")
		a.backlog = a.backlog[1:]
	}
	a.backlog = append(a.backlog, data)
}

// sendCallFrame is the dispatcher's Sender.
func (a *sessionActor) sendCallFrame(c *dispatcher.Call, frame []byte) {
	route, _ := c.Route.(messages.ID)
	a.deliver(route, frame)
}

// notifyClient sends a server-wide notification (list changed, resource
// updated) if the session is open and, for a resource, subscribed.
func (a *sessionActor) notifyClient(m *messages.NotifyClient) {
	if a.state != stateOpen {
		return
	}
	if m.URI != "" {
		if _, ok := a.subs[m.URI]; !ok {
			return
		}
	}
	a.deliver(messages.ID{}, m.Data)
}

// close ends the session: pending calls fail, handlers are cancelled,
// streams close, and the actor stops.
func (a *sessionActor) close(ctx actor.Context, reason string) {
	if a.state == stateClosed {
		return
	}
	a.state = stateClosed
	a.log.Debug("session closing", "reason", reason)
	a.table.Close(ErrSessionClosed)
	a.cancel()
	for id, inf := range a.inflight {
		inf.cancel()
		if inf.sink != nil {
			inf.sink.Close()
		}
		delete(a.inflight, id)
	}
	if a.stream != nil {
		a.stream.Close()
		a.stream = nil
	}
	a.backlog = nil
	close(a.ref.done)
	if a.cfg.OnClose != nil {
		a.cfg.OnClose(a.ref)
	}
	if ctx != nil {
		ctx.Stop(ctx.Self())
	}
}
