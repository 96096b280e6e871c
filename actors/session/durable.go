package session

import (
	"errors"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// The session's durable State (Config.Persist). A cluster writes it into
// the session's directory record, one write at a time: each write expects
// the record's revision the last one left. A change made while a write is
// in flight is written next, together with every other change made
// meanwhile, in one write. What the client is told depends on the write
// that covers it: initialize, logging/setLevel, resources/(un)subscribe
// and the data store answer once their change is durable, and a read of
// the data store once what it read is.
//
//	change ──persist(then)──▶ writing? ──no──▶ Config.Persist(State, done) ──done──▶ persisted: then(err) ──▶ dirty? write again
//	                              └──yes──▶ dirty = true; then waits for the next write
//
// A write that fails leaves the State in memory ahead of what storage may
// hold (the write may or may not have landed), so the session does not go
// on from memory: it closes for handover, and its next message starts it
// again from storage, on this node or on the one that took it over.

// ErrNotDurable wraps the reason a change could not be made durable: the
// session's node lost its storage, or the session was taken over by
// another node. The change may or may not have been stored.
var ErrNotDurable = errors.New("session: the change could not be stored")

// persisted reports how a write of the State ended.
type persisted struct{ err error }

func (*persisted) sessionMessage() {}

// durability is the session actor's bookkeeping of its State's writes.
type durability struct {
	writing    bool          // a write is in flight
	dirty      bool          // the State changed since the write in flight was made
	afterWrite []func(error) // wait on the write in flight
	afterNext  []func(error) // wait on the next write
	written    time.Time     // when the last write was made
}

// persist makes the session's State durable, after a change, and calls
// then (when not nil) on the actor once the write covering the change has
// ended. Without Config.Persist, then runs at once.
func (a *sessionActor) persist(then func(error)) {
	switch {
	case a.cfg.Persist == nil:
		if then != nil {
			then(nil)
		}
	case a.state == stateClosed:
		if then != nil {
			then(ErrSessionClosed)
		}
	case a.durable.writing:
		a.durable.dirty = true
		if then != nil {
			a.durable.afterNext = append(a.durable.afterNext, then)
		}
	default:
		var waiting []func(error)
		if then != nil {
			waiting = []func(error){then}
		}
		a.write(waiting)
	}
}

// afterDurable calls then once what the session holds now is durable: at
// once when no write is in flight.
func (a *sessionActor) afterDurable(then func(error)) {
	switch d := &a.durable; {
	case !d.writing:
		then(nil)
	case d.dirty:
		d.afterNext = append(d.afterNext, then)
	default:
		d.afterWrite = append(d.afterWrite, then)
	}
}

// write hands the State to Config.Persist; waiting are called when it
// ends.
func (a *sessionActor) write(waiting []func(error)) {
	d := &a.durable
	d.writing, d.dirty, d.afterWrite, d.written = true, false, waiting, time.Now()
	send := a.selfSend
	a.cfg.Persist(a.ref.id, a.snapshot(), func(err error) { send(&persisted{err: err}) })
}

// persisted ends the write in flight: its waiters are told, and what
// changed meanwhile is written next. A write that failed closes the
// session for handover.
func (a *sessionActor) persisted(ctx actor.Context, err error) {
	d := &a.durable
	if !d.writing {
		return
	}
	waiting := d.afterWrite
	d.writing, d.afterWrite = false, nil
	if err != nil {
		err = fmt.Errorf("%w: %w", ErrNotDurable, err)
		waiting = append(waiting, d.afterNext...)
		d.afterNext = nil
	}
	for _, fn := range waiting {
		fn(err)
	}
	if err != nil {
		a.log.Warn("a session's state could not be stored: it closes, and starts again from storage at its next message", "session", LogID(a.ref.id), "err", err)
		a.ref.handedOver.Store(true)
		a.close(ctx, "its state could not be stored")
		return
	}
	if d.dirty {
		next := d.afterNext
		d.afterNext = nil
		a.write(next)
	}
}

// failWrites tells every waiter that the session closed (close).
func (a *sessionActor) failWrites() {
	d := &a.durable
	waiting := append(d.afterWrite, d.afterNext...)
	d.afterWrite, d.afterNext, d.writing, d.dirty = nil, nil, false, false
	for _, fn := range waiting {
		fn(ErrSessionClosed)
	}
}

// refresh writes the State again when the session has been in use since
// its last write, and that write is older than half the idle timeout: a
// cluster lets a record expire after twice the idle timeout unwritten (the
// session's node died and nobody touched it again), so a session in use
// keeps its record.
func (a *sessionActor) refresh() {
	d := &a.durable
	if a.cfg.Persist == nil || a.info == nil || d.writing || d.written.IsZero() {
		return
	}
	if a.active.After(d.written) && time.Since(d.written) > a.lim.IdleTimeout/2 {
		a.persist(nil)
	}
}
