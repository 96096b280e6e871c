package session

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/mcp-actors/mcp-actors/actors/dispatcher"
	"github.com/mcp-actors/mcp-actors/messages"
)

// lifecycle is where a session is in its life.
type lifecycle uint8

const (
	stateNew     lifecycle = iota // waiting for initialize
	statePending                  // initialize answered, waiting for notifications/initialized
	stateOpen                     // open for everything
	stateClosed                   // ended; the actor is stopping
)

// sessionActor owns one session's state. Every field is touched only in
// Receive, on the actor's goroutine.
type sessionActor struct {
	ref       *Ref
	principal string // who created the session; every client message must come from them
	cfg       *Config
	lim       Limits
	log       *slog.Logger

	state lifecycle
	info  *Info // set by initialize; immutable afterwards (handlers share it)

	// ctx is the context of the roots listeners' runs, made with the
	// first; cancel ends them when the session closes.
	ctx    context.Context
	cancel context.CancelFunc

	logRank  int                   // lowest level sent; from logging/setLevel
	logLevel messages.LoggingLevel // as the client set it ("" before)
	subs     map[string]struct{}   // subscribed resource URIs
	inflight map[messages.ID]*inflight
	// ranBefore are the requests that ran on the lost node when the
	// restored State was written (State.Running).
	ranBefore map[messages.ID]struct{}
	table     *dispatcher.Table
	streams   streamSet
	lifetime  *time.Timer // MaxLifetime; nil without one
	idle      *time.Timer // IdleTimeout's check; nil without one
	active    time.Time   // when the last message arrived, for IdleTimeout
	draining  *time.Timer // set while draining before a close
	pending   int         // server-to-client calls last reported to the Observer
	selfSend  func(any)   // posts to this actor from timers; set when started

	roots   rootsState
	data    dataStore
	durable durability // the State's writes (durable.go)
	// restored is the State a session taken over from a lost node starts
	// in; it is announced (Config.OnOpen) once the actor runs.
	restored *State
}

// inflight is one client request whose handler is running.
type inflight struct {
	cancel    context.CancelFunc
	stream    *stream // nil: the standalone stream (stdio)
	cancelled bool    // by the client: send no response
}

func newSessionActor(ref *Ref, cfg *Config, opts SpawnOptions) *sessionActor {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	a := &sessionActor{
		ref:       ref,
		principal: opts.Principal,
		cfg:       cfg,
		lim:       cfg.Limits.withDefaults(),
		log:       logger,
		inflight:  make(map[messages.ID]*inflight),
	}
	a.streams = newStreamSet(opts.Resumable, a.lim, cfg.Streams)
	a.streams.session = ref.id
	a.streams.obs = cfg.Observer
	if cfg.LogEvent != nil && opts.Resumable {
		logEvent, id := cfg.LogEvent, ref.id
		a.streams.logEvent = func(e LoggedEvent) { logEvent(id, e) }
	}
	a.table = dispatcher.NewTable(a.sendCallFrame)
	a.table.Hold() // no server-to-client request before the session opens
	if opts.Restore != nil {
		a.restore(opts.Restore)
	}
	return a
}

// Receive is the actor's mailbox loop body.
func (a *sessionActor) Receive(ctx actor.Context) {
	if a.cfg.Observer != nil {
		defer a.reportPending()
	}
	defer func() {
		// A panic would restart the actor with empty state; end the session
		// cleanly instead.
		if p := recover(); p != nil {
			a.log.Error("session actor panicked; closing the session", "session", LogID(a.ref.id), "panic", p, "stack", string(debug.Stack()))
			a.close(ctx, "internal error")
		}
	}()
	msg := ctx.Message()
	if a.idle != nil && activity(msg) {
		a.active = time.Now()
	}
	switch m := msg.(type) {
	case *messages.HandleRequest:
		if a.state == stateClosed {
			a.streams.signal(m.Stream, messages.SignalNotFound)
			return
		}
		a.handleRequest(m.Msg, m.Stream, m.Trace)
	case *messages.HandleNotification:
		if a.state != stateClosed {
			a.handleNotification(m.Msg)
		}
	case *messages.DeliverResponse:
		if a.state != stateClosed {
			a.table.HandleResponse(m.Msg)
		}
	case *requestDone:
		a.requestDone(m)
		if a.draining != nil && len(a.inflight) == 0 {
			a.close(ctx, "drained")
		}
	case dispatcher.Message:
		a.table.Receive(m)
	case *sendFrame:
		a.send(m.route, m.data)
	case *sendLog:
		a.sendLog(m)
	case *closeStream:
		if inf := a.inflight[m.route]; inf != nil {
			a.streams.closeStream(inf.stream)
		}
	case *messages.AttachStream:
		if a.state == stateClosed {
			a.streams.signal(m.Stream, messages.SignalNotFound)
			return
		}
		a.streams.attach(m.Stream, m.LastEventID)
	case *messages.DetachStream:
		a.streams.detach(m.Stream, a.inflight)
	case *messages.DeleteSession:
		if a.state != stateClosed {
			a.close(ctx, "deleted by the client")
		}
	case *messages.NotifyClient:
		a.notifyClient(m)
	case *getRoots, *storeRoots, *addRootsListener, *removeRootsListener, *rootsListenersDone:
		a.receiveRoots(m.(internalMessage))
	case *dataOp:
		if m.op == dataPut && a.lim.MaxStateBytes > 0 {
			if err := a.stateFits(m.key, m.value); err != nil {
				m.reply <- dataReply{err: err}
				return
			}
		}
		a.runDataOp(m)
	case *persisted:
		a.persisted(ctx, m.err)
	case *messages.CloseSession:
		if m.Handover {
			a.ref.handedOver.Store(true)
		}
		if m.Grace > 0 && len(a.inflight) > 0 {
			a.drain(m)
		} else {
			a.close(ctx, m.Reason)
		}
	case idleCheck:
		a.checkIdle(ctx)
	case *actor.Started:
		a.started(ctx)
	case *actor.Stopping, *actor.Restarting:
	case *actor.Stopped:
		a.close(nil, "stopped")
	default:
		a.log.Error("session actor: unexpected message dropped", "session", LogID(a.ref.id), "type", fmt.Sprintf("%T", m))
	}
}

// reportPending tells the Observer how the number of pending
// server-to-client calls changed.
func (a *sessionActor) reportPending() {
	if n := a.table.Pending(); n != a.pending {
		a.cfg.Observer.PendingCalls(n - a.pending)
		a.pending = n
	}
}

// activity reports whether msg counts as the session being in use (for
// IdleTimeout): not the session's own timers and writes.
func activity(msg any) bool {
	switch msg.(type) {
	case idleCheck, *persisted:
		return false
	}
	return true
}

// idleCheck is posted by the idle timer.
type idleCheck struct{}

// checkIdle closes a session that has received nothing for IdleTimeout
// and has nothing running; otherwise it sets the timer for the next check.
func (a *sessionActor) checkIdle(ctx actor.Context) {
	if a.state == stateClosed {
		return
	}
	left := a.lim.IdleTimeout - time.Since(a.active)
	if left <= 0 {
		if len(a.inflight) == 0 && a.table.Pending() == 0 {
			a.close(ctx, "idle timeout")
			return
		}
		left = a.lim.IdleTimeout // busy: look again later
	}
	a.refresh()
	a.idle.Reset(left)
}

// started arms the idle and lifetime limits.
func (a *sessionActor) started(ctx actor.Context) {
	// Timers post to ctx.Self() through the system's root: Ref's PID is set
	// by Spawn after the actor has started, so it is not the actor's to read.
	self, root := ctx.Self(), ctx.ActorSystem().Root
	ref := a.ref
	ref.pid.Store(self) // before anyone is told of the session (OnOpen)
	a.selfSend = func(m any) {
		if !ref.Closed() { // a timer that fires after the end sends no dead letter
			root.Send(self, m)
		}
	}
	if a.lim.IdleTimeout > 0 {
		// One timer, checked when it fires, rather than protoactor's
		// receive timeout, which stops and resets a timer around every
		// message.
		send := a.selfSend
		a.active = time.Now()
		a.idle = time.AfterFunc(a.lim.IdleTimeout, func() { send(idleCheck{}) })
	}
	if a.lim.MaxLifetime > 0 {
		send := a.selfSend
		a.lifetime = time.AfterFunc(a.lim.MaxLifetime, func() {
			send(&messages.CloseSession{Reason: "maximum lifetime reached"})
		})
	}
	if a.restored != nil {
		a.announce(a.restored)
		a.restored = nil
	}
}

// drain starts a graceful close: the client's pending answers are given up
// on, and the running handlers get m.Grace to finish.
func (a *sessionActor) drain(m *messages.CloseSession) {
	if a.state == stateClosed || a.draining != nil {
		return
	}
	a.table.Close(ErrSessionClosed)
	send, reason, handover := a.selfSend, m.Reason, m.Handover
	a.draining = time.AfterFunc(m.Grace, func() {
		send(&messages.CloseSession{Reason: reason + " (grace period over)", Handover: handover})
	})
}

// routeFor picks the stream for a frame a handler of request route sends
// (see the routing rule in streams.go); nil is the standalone stream.
func (a *sessionActor) routeFor(route messages.ID) *stream {
	if route.IsZero() {
		return nil
	}
	inf := a.inflight[route]
	if inf == nil || inf.stream == nil {
		return nil
	}
	if st := inf.stream; live(st) || (st.sse && !st.done) {
		return st
	}
	return nil
}

// send puts a non-response frame of request route on its stream.
func (a *sessionActor) send(route messages.ID, data []byte) {
	if a.state == stateClosed {
		return
	}
	a.streams.send(a.routeFor(route), data, false)
}

// sendCallFrame is the outbound table's Sender.
func (a *sessionActor) sendCallFrame(c *dispatcher.Call, frame []byte) {
	route, _ := c.Route.(messages.ID)
	a.send(route, frame)
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
	a.streams.send(nil, m.Data, false)
}

// endInflight answers every request still running with a JSON-RPC error:
// the session leaves this node (for handover) before they were answered,
// and the client may send them again, to whichever node has the session
// next.
func (a *sessionActor) endInflight(reason string) {
	for id, inf := range a.inflight {
		if inf.cancelled {
			continue
		}
		a.streams.send(inf.stream, messages.EncodeError(id, messages.Errorf(messages.CodeInternalError,
			"the session left this node before the request was answered (%s): send the request again", reason)), true)
	}
}

// close ends the session: pending calls fail, handlers are cancelled,
// streams close, and the actor stops once it has answered the messages
// already in its mailbox (as a session that does not exist: nothing
// posted to it is left waiting).
func (a *sessionActor) close(ctx actor.Context, reason string) {
	if a.state == stateClosed {
		return
	}
	a.state = stateClosed
	a.log.Debug("session closing", "session", a.ref.id, "reason", reason)
	if a.lifetime != nil {
		a.lifetime.Stop()
	}
	if a.idle != nil {
		a.idle.Stop()
	}
	if a.draining != nil {
		a.draining.Stop()
	}
	a.table.Close(ErrSessionClosed)
	a.failWrites()
	if a.cancel != nil {
		a.cancel()
	}
	if a.ref.HandedOver() {
		a.endInflight(reason)
	}
	a.streams.closeAll(a.inflight)
	for id, inf := range a.inflight {
		inf.cancel()
		delete(a.inflight, id)
	}
	if a.cfg.OnClose != nil {
		a.cfg.OnClose(a.ref) // before Done: whoever waits on it sees the session closed everywhere
	}
	a.ref.markClosed()
	if ctx != nil {
		ctx.Poison(ctx.Self())
	}
}
