package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/mcp-actors/mcp-actors/actors/session"
)

// Persist writes a session's State into its directory record
// (session.Config.Persist), over the record's last revision this node
// knows, and calls done once JetStream has acknowledged the write (nil),
// refused it because another node took the session over (ErrFenced), or
// could not take it (the error). It does not block: the session calls it
// on its actor, one write at a time, and answers what waits on the write
// (initialize, PutData, …) when done is called, on this goroutine when
// the write cannot start, on another one otherwise. A node on its own
// keeps nothing durable: done(nil) at once.
func (r *relay) Persist(id string, st *session.State, done func(error)) {
	if r.node.Standalone() {
		done(nil)
		return
	}
	e := r.entryOf(id)
	switch {
	case e == nil || e.Owner != r.node.ID():
		done(ErrFenced)
		return
	case !r.node.acting():
		done(fmt.Errorf("%w: %w", errStorage, errLeaseLapsed))
		return
	case r.node.cutOff():
		done(fmt.Errorf("%w: this node has no route to the others", errStorage))
		return
	}
	rec := &record{V: recordVersion, Session: id, Owner: e.Owner, Epoch: e.Epoch, Principal: e.Principal, State: st}
	b, err := rec.encode()
	if err != nil {
		done(fmt.Errorf("cluster: encoding the state of a session: %w", err))
		return
	}
	if !r.node.bucketsUp() {
		done(fmt.Errorf("%w: %w", errStorage, ErrNotReady))
		return
	}
	w := &stateWrite{id: id, e: e, msg: r.recordMsg(id, b), opts: r.recordOpts(e.rev), start: time.Now()}
	// Published off the session's goroutine: PublishMsgAsync waits when
	// too many acknowledgements are pending, and the session must not.
	if !r.goBackground(func() { done(r.publishState(w)) }) {
		done(fmt.Errorf("%w: the node is closing", errStorage))
	}
}

// publishState publishes state write w and waits for its outcome
// (awaitWrite).
func (r *relay) publishState(w *stateWrite) error {
	ack, err := r.node.js.PublishMsgAsync(w.msg, w.opts...)
	if err != nil {
		return fmt.Errorf("%w: %w", errStorage, err)
	}
	return r.awaitWrite(w, ack)
}

// stateWrite is one write of a session's record over the revision e.rev.
type stateWrite struct {
	id    string
	e     *entry
	msg   *nats.Msg
	opts  []jetstream.PublishOpt
	start time.Time
	tries int // publications after the first
}

// awaitWrite waits for the acknowledgement of state write w: nil once it
// is durable (and the entry's revision moved on), ErrFenced when another
// node took the session over meanwhile. A write that storage did not take
// in writeAckTimeout (a stream electing its leader after a node loss) is
// published again — the same compare-and-swap, so at most one lands —
// while this node still acts, reaches a quorum of the others, and within
// a lease; one that lands after its acknowledgement was lost is recognised
// when the next one is refused (landed). A node that loses every route,
// its lease, or its quorum meanwhile stops waiting at once.
func (r *relay) awaitWrite(w *stateWrite, ack jetstream.PubAckFuture) error {
	t := time.NewTimer(writeAckTimeout)
	defer t.Stop()
	check := time.NewTicker(writeAckTimeout / 10)
	defer check.Stop()
	for {
		var failed error
		select {
		case a := <-ack.Ok():
			if w.e.rev == 0 {
				r.node.dir.added(len(w.msg.Data) + len(w.msg.Subject) + recordOverhead)
			}
			r.wrote(w.id, w.e, a.Sequence)
			return nil
		case err := <-ack.Err():
			if isWrongRevision(err) {
				if w.tries > 0 && r.landed(w) {
					return nil
				}
				r.node.log.Warn("a session's state write was refused: another node took it over", "session", session.LogID(w.id), "epoch", w.e.Epoch)
				return ErrFenced
			}
			if isStoreFull(err) { // answered 503, but waiting does not make room
				r.node.directoryFull()
				return fmt.Errorf("%w: %w", errStorage, errDirectoryFull)
			}
			if !transient(err) {
				return fmt.Errorf("%w: %w", errStorage, err)
			}
			failed = err
		case <-t.C:
			failed = fmt.Errorf("the write was not acknowledged within %s", writeAckTimeout)
		case <-r.ctx.Done():
			return fmt.Errorf("%w: the node is closing", errStorage)
		case <-check.C:
			if r.node.cutOff() || !r.node.acting() {
				return fmt.Errorf("%w: this node lost its routes or its lease while it waited", errStorage)
			}
			continue
		}
		if !r.mayRewrite(w) {
			return fmt.Errorf("%w: %w", errStorage, failed)
		}
		w.tries++
		next, err := r.node.js.PublishMsgAsync(w.msg, w.opts...)
		if err != nil {
			return fmt.Errorf("%w: %w", errStorage, err)
		}
		ack = next
		t.Reset(writeAckTimeout)
	}
}

// mayRewrite reports whether state write w, not taken in time, may be
// published again: this node acts and reaches a quorum of the others (so
// storage is electing a leader and answers within seconds), and the write
// began less than a lease ago.
func (r *relay) mayRewrite(w *stateWrite) bool {
	return r.node.acting() && !r.node.cutOff() && r.node.reachesQuorum() &&
		time.Since(w.start) < r.node.leaseTTL()
}

// landed reports whether state write w, published again and refused on
// its revision, was refused because an earlier publication of it landed:
// the record is then this node's, at w's epoch, past w's revision (only
// this node writes at its epoch, one write at a time). The entry's
// revision moves on to it.
func (r *relay) landed(w *stateWrite) bool {
	ctx, cancel := context.WithTimeout(r.ctx, 2*storageOpTimeout)
	defer cancel()
	kv := r.node.kv(func() jetstream.KeyValue { return r.node.sessions })
	if kv == nil {
		return false
	}
	rec, rev, err := r.readRecord(ctx, kv, w.id)
	if err != nil || rec.Owner != r.node.ID() || rec.Epoch != w.e.Epoch || rev <= w.e.rev {
		return false
	}
	r.wrote(w.id, w.e, rev)
	return true
}

// recordOverhead is what JetStream adds to a record's size: its headers
// (the expected revision, the TTL) and its own framing.
const recordOverhead = 128

// writeAckTimeout bounds the wait for a state write's acknowledgement: a
// replicated write takes milliseconds; one that takes a second has no
// quorum behind it, and what waits on it (a handler's PutData) is better
// told so soon.
const writeAckTimeout = time.Second

// wrote records that this node wrote revision rev of session id's record
// over e: the next write expects it.
func (r *relay) wrote(id string, e *entry, rev uint64) {
	next := *e
	next.rev = rev
	r.dir.CompareAndSwap(id, e, &next)
}

// IsFenced reports whether err says the session was taken over by another
// node (its owner must give it up), rather than that storage failed.
func IsFenced(err error) bool { return errors.Is(err, ErrFenced) }
