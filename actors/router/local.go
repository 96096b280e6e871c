package router

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/mcp-actors/mcp-actors/actors/session"
	"github.com/mcp-actors/mcp-actors/messages"
)

// SpawnFunc starts the session actor of a new session with the given ID.
type SpawnFunc func(id string, o OpenOptions) (*session.Ref, error)

// Local is the Router of one process: every session lives here, so
// delivering is a map lookup and a send to the actor's mailbox, and a
// frame is a map lookup and a call to the stream's Receiver.
type Local struct {
	streams     *Streams
	spawn       SpawnFunc
	maxSessions int64

	sessions  sync.Map // session ID → *entry
	count     atomic.Int64
	draining  atomic.Bool
	newID     func() string // NewSessionID unless SetSessionIDs says otherwise
	restoring sync.Mutex    // one Restore at a time
	admit     func() error  // nil, or what SetAdmission gave
}

// entry is one live session.
type entry struct {
	ref       *session.Ref
	principal string

	// closed is set by SessionClosed, on the actor, before the actor lets
	// go of its mailbox; see Deliver.
	closed  atomic.Bool
	deleted atomic.Bool // deleted by its client: Lookup says not found
}

// NewLocal returns the router of a process that holds at most maxSessions
// sessions (<= 0: no limit), spawning them with spawn. Pass its
// SessionClosed to the sessions' Config.OnClose, and the router itself as
// their Config.Streams.
func NewLocal(streams *Streams, maxSessions int, spawn SpawnFunc) *Local {
	return &Local{streams: streams, spawn: spawn, maxSessions: int64(maxSessions), newID: NewSessionID}
}

// SetSessionIDs makes Open name sessions with fn (a cluster names the
// owning node in them). Call it before the first Open.
func (l *Local) SetSessionIDs(fn func() string) { l.newID = fn }

// SetAdmission makes Open ask admit first: an error refuses the session
// with ErrMemoryFull and that reason. Call it before the first Open.
// Restores are not asked: the session exists, and refusing it here sends
// its client to another node no less full.
func (l *Local) SetAdmission(admit func() error) { l.admit = admit }

// Open implements Router.
func (l *Local) Open(_ context.Context, o OpenOptions) (string, error) {
	if l.draining.Load() {
		return "", ErrDraining
	}
	if l.admit != nil {
		if err := l.admit(); err != nil {
			return "", fmt.Errorf("%w (%v)", ErrMemoryFull, err)
		}
	}
	if n := l.count.Add(1); l.maxSessions > 0 && n > l.maxSessions {
		l.count.Add(-1)
		return "", ErrTooManySessions
	}
	id := l.newID()
	ref, err := l.spawn(id, o)
	if err != nil {
		l.count.Add(-1)
		return "", err
	}
	l.sessions.Store(id, &entry{ref: ref, principal: o.Principal})
	if l.draining.Load() {
		// Drain began while the session started, and may have missed it
		// when it closed the others: close it here.
		ref.Send(&messages.CloseSession{Reason: "node draining"})
		<-ref.Done()
		return "", ErrDraining
	}
	return id, nil
}

// Restore starts session id here again from st (it was running on a node
// that was lost, or here before a restart or a handover), unless it is
// here and live already. It counts against the session limit but not
// against draining: the session exists already. Restores are serial: of
// concurrent restores of one session, one starts it and the others find
// it.
func (l *Local) Restore(id string, o OpenOptions) error {
	l.restoring.Lock()
	defer l.restoring.Unlock()
	old := l.entry(id)
	if old != nil && !old.closed.Load() {
		return nil
	}
	if n := l.count.Add(1); l.maxSessions > 0 && n > l.maxSessions {
		l.count.Add(-1)
		return ErrTooManySessions
	}
	ref, err := l.spawn(id, o)
	if err != nil {
		l.count.Add(-1)
		return err
	}
	e := &entry{ref: ref, principal: o.Principal}
	if old == nil {
		l.sessions.Store(id, e)
	} else if l.sessions.CompareAndSwap(id, old, e) {
		l.count.Add(-1) // the closing run's, which SessionClosed will not find
	} else {
		l.sessions.Store(id, e) // SessionClosed removed the closing run meanwhile
	}
	return nil
}

// Check implements Router.
func (l *Local) Check(ctx context.Context, id string) error {
	_, err := l.Lookup(ctx, id)
	return err
}

// Lookup returns what is known of session id, or ErrSessionNotFound.
func (l *Local) Lookup(_ context.Context, id string) (Registered, error) {
	e := l.entry(id)
	if e == nil || e.deleted.Load() {
		return Registered{}, ErrSessionNotFound
	}
	m := Registered{Principal: e.principal}
	if info := e.ref.Info(); info != nil {
		m.ProtocolVersion = info.ProtocolVersion
	}
	return m, nil
}

// Deliver implements Router.
func (l *Local) Deliver(_ context.Context, id string, m messages.ActorMessage) error {
	e := l.entry(id)
	if e == nil {
		return ErrSessionNotFound
	}
	if e.closed.Load() {
		return ErrSessionNotFound
	}
	if p, ok := principalOf(m); ok && p != e.principal {
		return ErrOtherPrincipal
	}
	// The actor may run m on this goroutine (its mailbox is processed by
	// whoever posts to an idle one), and may close meanwhile.
	e.ref.Send(m)
	if _, ok := m.(*messages.DeleteSession); ok {
		e.deleted.Store(true) // the session is closing: refuse it from now on
	}
	if e.closed.Load() {
		// The session closed around the send, and m may have arrived after
		// its actor stopped, unseen. Whatever waits on m's stream is told
		// the session is gone; a stream the session answered has ended
		// already (it ends its streams before it is marked closed) and
		// refuses this.
		if sid := streamOf(m); !sid.IsZero() {
			l.streams.Deliver(messages.StreamEvent{Stream: sid, Session: id, Signal: messages.SignalNotFound})
		}
	}
	return nil
}

// DeliverStream implements Router and session.StreamSink.
func (l *Local) DeliverStream(ev messages.StreamEvent) bool { return l.streams.Deliver(ev) }

// StreamGone implements Router and session.StreamSink.
func (l *Local) StreamGone(id messages.StreamID) bool { return l.streams.Gone(id) }

// Streams implements Router.
func (l *Local) Streams() *Streams { return l.streams }

// SessionClosed forgets a session that has ended; sessions call it from
// their actor (session.Config.OnClose).
func (l *Local) SessionClosed(ref *session.Ref) {
	e := l.entry(ref.ID())
	if e == nil || e.ref != ref {
		return
	}
	e.closed.Store(true)
	if l.sessions.CompareAndDelete(ref.ID(), e) {
		l.count.Add(-1)
	}
}

// Drain makes Open fail with ErrDraining from now on.
func (l *Local) Drain() { l.draining.Store(true) }

// Draining reports whether Drain was called.
func (l *Local) Draining() bool { return l.draining.Load() }

// Session returns the live session with the given ID.
func (l *Local) Session(id string) (*session.Ref, bool) {
	if e := l.entry(id); e != nil {
		return e.ref, true
	}
	return nil, false
}

// Each calls fn with every live session until it returns false.
func (l *Local) Each(fn func(*session.Ref) bool) {
	l.sessions.Range(func(_, v any) bool { return fn(v.(*entry).ref) })
}

// Len returns the number of live sessions.
func (l *Local) Len() int { return int(l.count.Load()) }

// streamOf returns the stream that waits on m's answer, if any.
// principalOf returns the principal of a message from a client: the one
// place a session's principal is checked (Deliver), on the node it runs on.
func principalOf(m messages.ActorMessage) (string, bool) {
	switch m := m.(type) {
	case *messages.HandleRequest:
		return m.Principal, true
	case *messages.HandleNotification:
		return m.Principal, true
	case *messages.DeliverResponse:
		return m.Principal, true
	case *messages.AttachStream:
		return m.Principal, true
	case *messages.DeleteSession:
		return m.Principal, true
	}
	return "", false
}

func streamOf(m messages.ActorMessage) messages.StreamID {
	switch m := m.(type) {
	case *messages.HandleRequest:
		return m.Stream
	case *messages.AttachStream:
		return m.Stream
	}
	return messages.StreamID{}
}

func (l *Local) entry(id string) *entry {
	if v, ok := l.sessions.Load(id); ok {
		return v.(*entry)
	}
	return nil
}

// NewSessionID returns 128 random bits as URL-safe base64 (visible ASCII).
func NewSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(b[:])
}
