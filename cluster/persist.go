package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/mcp-actors/mcp-actors/actors/session"
)

// Persist writes a session's State into its directory record
// (session.Config.Persist), over the record's last revision this node
// knows, and calls done once JetStream has acknowledged the write (nil),
// refused it because another node took the session over (ErrFenced), or
// could not take it (the error). It does not block: the session calls it
// on its actor, one write at a time, and answers what waits on the write
// (initialize, PutData, …) when done is called. A node on its own keeps
// nothing durable: done(nil) at once.
func (r *Router) Persist(id string, st *session.State, done func(error)) {
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
	b, err := json.Marshal(rec)
	if err != nil {
		done(fmt.Errorf("cluster: encoding the state of a session: %w", err))
		return
	}
	if !r.node.bucketsUp() {
		done(fmt.Errorf("%w: %w", errStorage, ErrNotReady))
		return
	}
	ack, err := r.node.js.PublishMsgAsync(r.recordMsg(id, b), r.recordOpts(e.rev)...)
	if err != nil {
		done(fmt.Errorf("%w: %w", errStorage, err))
		return
	}
	if !r.goBackground(func() { done(r.awaitWrite(id, e, ack)) }) {
		done(fmt.Errorf("%w: the node is closing", errStorage))
	}
}

// awaitWrite waits for the acknowledgement of a write of session id's
// record over e: nil once it is durable (and e's revision moved on),
// ErrFenced when another node took the session over meanwhile. A node
// that loses every route, or its lease, meanwhile stops waiting at once:
// no quorum can answer it.
func (r *Router) awaitWrite(id string, e *entry, ack jetstream.PubAckFuture) error {
	t := time.NewTimer(writeAckTimeout)
	defer t.Stop()
	check := time.NewTicker(writeAckTimeout / 10)
	defer check.Stop()
	for {
		select {
		case a := <-ack.Ok():
			r.wrote(id, e, a.Sequence)
			return nil
		case err := <-ack.Err():
			if isWrongRevision(err) {
				r.node.log.Warn("a session's state write was refused: another node took it over", "session", session.LogID(id), "epoch", e.Epoch)
				return ErrFenced
			}
			return fmt.Errorf("%w: %w", errStorage, err)
		case <-t.C:
			return fmt.Errorf("%w: the write was not acknowledged within %s", errStorage, writeAckTimeout)
		case <-r.ctx.Done():
			return fmt.Errorf("%w: the node is closing", errStorage)
		case <-check.C:
			if r.node.cutOff() || !r.node.acting() {
				return fmt.Errorf("%w: this node lost its routes or its lease while it waited", errStorage)
			}
		}
	}
}

// writeAckTimeout bounds the wait for a state write's acknowledgement: a
// replicated write takes milliseconds; one that takes a second has no
// quorum behind it, and what waits on it (a handler's PutData) is better
// told so soon.
const writeAckTimeout = time.Second

// wrote records that this node wrote revision rev of session id's record
// over e: the next write expects it.
func (r *Router) wrote(id string, e *entry, rev uint64) {
	next := *e
	next.rev = rev
	r.dir.CompareAndSwap(id, e, &next)
}

// IsFenced reports whether err says the session was taken over by another
// node (its owner must give it up), rather than that storage failed.
func IsFenced(err error) bool { return errors.Is(err, ErrFenced) }
