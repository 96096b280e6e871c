package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/mcp-actors/mcp-actors/messages"
)

// A planned stop costs no call. A node that shuts down (Drain, then its
// sessions closed for handover) still holds its lease until every session
// has closed, so another node cannot take its sessions over by the lease
// alone; meanwhile the draining node:
//
//   - holds a routed request for a session still closing (its handlers
//     finishing) instead of delivering it, which the session would refuse,
//     and tells its sender to wait (statusHeld, with how long);
//   - answers, once the session has closed, every routed message for it —
//     held or new — with statusReleased and the epoch it released: the
//     sender takes the session over at once (lookupHint.released), no wait
//     for a lease, and delivers the message there. Safe, because a
//     draining node never starts a session again (locate refuses), and the
//     takeover is a compare-and-swap on that epoch's record: a message that
//     reaches a node later finds the new owner.
//
// A node that has just started does not act for its sessions until it
// has its lease (under a second): a routed message arriving meanwhile is
// held the same way and looked into once the lease is taken, instead of
// being refused.
//
//	sender ──request──▶ draining owner: session closing ──▶ held ──(session closed)──▶ released(epoch)
//	   ◀── held(wait) ──┘                                                                  │
//	   ◀────────────────────────────────────────────────────────────────────────────────────┘
//	sender: CAS owner=me, epoch+1 (no lease wait) ──▶ deliver here

// Delivery outcomes of a planned handover (a reply's Mcp-Status).
const (
	statusHeld     = "held"     // the owner holds the request: wait Mcp-Hold before looking
	statusReleased = "released" // the owner closed the session for handover at epoch Mcp-Epoch
)

// Headers of the handover's replies.
const (
	headerHold  = "Mcp-Hold"  // how long the sender waits for the outcome, in milliseconds
	headerEpoch = "Mcp-Epoch" // the epoch the session was released at
)

// startHold bounds how long a node that has just started holds a routed
// message until it has its lease.
const startHold = 5 * time.Second

// heldError is an owner's word that it holds the request for up to wait.
type heldError struct{ wait time.Duration }

func (e *heldError) Error() string {
	return fmt.Sprintf("cluster: the session's node holds the request (up to %s)", e.wait)
}

// releasedError is an owner's word that it closed the session for
// handover at epoch and will not run it again.
type releasedError struct{ epoch uint64 }

func (e *releasedError) Error() string {
	return fmt.Sprintf("cluster: the session's node handed it over (epoch %d)", e.epoch)
}

// handover is the draining node's side: the requests it holds and the
// sessions it released.
type handover struct {
	// gate is read-held across a routed delivery to a session, and taken
	// by Drain: a delivery under way when the node starts draining ends
	// first, so that the request it posts is in the session's mailbox
	// before the close the server sends next. Only the delivery workers
	// take it, never from a session's mailbox.
	gate     sync.RWMutex
	draining bool      // under gate
	until    time.Time // when the drain's grace ends: the held wait (under gate)

	mu       sync.Mutex
	held     map[string][]*nats.Msg // session → routed requests held while it closes
	released map[string]uint64      // session → the epoch it was released at
}

// Drain makes this node take no session over from now on (it is shutting
// down and hands its own over), and hold the routed requests for its
// sessions from now on, until they close (for up to grace). A routed
// delivery under way ends first.
func (r *relay) Drain(grace time.Duration) {
	r.draining.Store(true)
	h := &r.handover
	h.mu.Lock()
	if h.held == nil {
		h.held, h.released = map[string][]*nats.Msg{}, map[string]uint64{}
	}
	h.mu.Unlock()
	h.gate.Lock()
	defer h.gate.Unlock()
	if !h.draining {
		h.draining, h.until = true, time.Now().Add(grace)
	}
}

// handing answers a routed message for session id on a draining node,
// and reports whether it did: released sessions are answered so; a
// request for a session still closing is held. h.gate is read-held.
func (r *relay) handing(msg *nats.Msg, id string, isRequest bool) bool {
	h := &r.handover
	if !h.draining {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if epoch, ok := h.released[id]; ok {
		r.respondReleased(msg, epoch)
		return true
	}
	// HandedOver runs before the session leaves the registry: one here
	// is released later, and answers what is held for it then.
	if _, here := r.local.Session(id); !here || !isRequest {
		return false
	}
	h.held[id] = append(h.held[id], msg)
	r.stats.held.Add(1)
	r.respondHeld(msg, time.Until(h.until))
	return true
}

// HandedOver notes that session id is closing for handover: call it
// before the session leaves the local registry. On a draining node it is
// released: the requests held for it, and every message for it from now
// on, are answered statusReleased with its epoch.
func (r *relay) HandedOver(id string) {
	if !r.draining.Load() {
		return
	}
	e := r.entryOf(id)
	written := e != nil && e.rev != 0 && e.Owner == r.node.ID()
	h := &r.handover
	h.mu.Lock()
	if h.held == nil {
		h.mu.Unlock()
		return
	}
	held := h.held[id]
	delete(h.held, id)
	if written {
		h.released[id] = e.Epoch
	}
	h.mu.Unlock()
	for _, msg := range held {
		if written {
			r.respondReleased(msg, e.Epoch)
		} else { // no record: nobody can take it over
			r.respondStatus(msg, statusNotFound, "")
		}
	}
}

// respondHeld tells the sender of a request sent without waiting that it
// is held for up to wait: it waits that long (and ackBound more) before
// it looks into the owner. A plain delivery's sender waits anyway.
func (r *relay) respondHeld(msg *nats.Msg, wait time.Duration) {
	if msg.Reply == "" || msg.Header.Get(headerOp) != opAsync {
		return
	}
	reply := nats.NewMsg(msg.Reply)
	reply.Header.Set(headerStatus, statusHeld)
	reply.Header.Set(headerHold, strconv.FormatInt(max(wait, 0).Milliseconds(), 10))
	_ = msg.RespondMsg(reply)
}

// respondReleased tells the sender of msg that its session was released
// at epoch.
func (r *relay) respondReleased(msg *nats.Msg, epoch uint64) {
	r.stats.released.Add(1)
	if msg.Reply == "" {
		return
	}
	reply := nats.NewMsg(msg.Reply)
	reply.Header.Set(headerStatus, statusReleased)
	reply.Header.Set(headerEpoch, strconv.FormatUint(epoch, 10))
	_ = msg.RespondMsg(reply)
}

// respondStatus answers msg with a delivery outcome, whatever it is.
func (r *relay) respondStatus(msg *nats.Msg, status, why string) {
	if msg.Reply == "" {
		return
	}
	reply := nats.NewMsg(msg.Reply)
	reply.Header.Set(headerStatus, status)
	reply.Data = []byte(why)
	_ = msg.RespondMsg(reply)
}

// handoverErr reads a handover's reply (statusHeld, statusReleased); nil
// for any other.
func handoverErr(reply *nats.Msg) error {
	switch reply.Header.Get(headerStatus) {
	case statusHeld:
		ms, _ := strconv.ParseInt(reply.Header.Get(headerHold), 10, 64)
		return &heldError{wait: time.Duration(ms) * time.Millisecond}
	case statusReleased:
		epoch, err := strconv.ParseUint(reply.Header.Get(headerEpoch), 10, 64)
		if err != nil || epoch == 0 {
			return fmt.Errorf("cluster: a release without an epoch (%q)", reply.Header.Get(headerEpoch))
		}
		return &releasedError{epoch: epoch}
	}
	return nil
}

// holdLonger extends the wait for the owner's acknowledgement of the
// request of stream sid by wait: its owner holds it (heldError).
func (r *relay) holdLonger(sid messages.StreamID, rs *remoteStream, wait time.Duration) {
	if rs.req == nil || rs.redelivering {
		return
	}
	next := *rs
	next.sent, next.ackBound = time.Now(), wait+ackBound
	r.remote.CompareAndSwap(sid, rs, &next)
}

// holdStarting holds routed message d on a node that has not taken its
// first lease yet: its sender is told to wait, and the message is looked
// into once the lease is taken (deliverAfterLookup). False when the
// lookup queue is full.
func (r *relay) holdStarting(d delivery) bool {
	select {
	case r.lookupJobs <- d:
		if _, isRequest := d.m.(*messages.HandleRequest); isRequest {
			r.respondHeld(d.msg, startHold)
		}
		return true
	default:
		return false
	}
}

// awaitFirstLease waits, up to startHold, until this node has taken its
// lease once (a node that has just started), and reports whether it has.
func (r *relay) awaitFirstLease(ctx context.Context) bool {
	if r.node.Started() {
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, startHold)
	defer cancel()
	select {
	case <-r.node.firstLease:
		return true
	case <-r.node.stop:
		return false
	case <-ctx.Done():
		return r.node.Started()
	}
}

// statusGone answers a routed message a closing node took but did not
// deliver: nothing ran it; the sender looks into the session as for an
// owner nobody listens for (errOwnerGone).
const statusGone = "gone"

// drainSubscription bounds how long Close waits for the messages the
// sessions' subscription has taken to be handed to the workers.
const drainSubscription = 2 * time.Second

// drainSessions ends sub, the subscription to this node's sessions'
// messages, as Close begins: the interest goes, and the messages NATS has
// already handed this process go through onSession as usual (and are
// delivered, held or answered), instead of being dropped unanswered with
// the subscription — their senders would wait for an acknowledgement that
// never comes, and might ask this node's next run about them.
func (r *relay) drainSessions(sub *nats.Subscription) {
	closed := sub.StatusChanged(nats.SubscriptionClosed)
	if err := sub.Drain(); err != nil {
		return
	}
	t := time.NewTimer(drainSubscription)
	defer t.Stop()
	select {
	case <-closed:
	case <-t.C:
		r.node.log.Warn("the sessions' subscription did not drain in time; closing it", "bound", drainSubscription)
	}
}

// answerLeftovers answers the routed messages the workers left when Close
// stopped them: released sessions so, the others statusGone.
func (r *relay) answerLeftovers() {
	answer := func(d delivery) {
		r.handover.mu.Lock()
		epoch, released := r.handover.released[d.id]
		r.handover.mu.Unlock()
		if released {
			r.respondReleased(d.msg, epoch)
			return
		}
		r.respondStatus(d.msg, statusGone, "this node is closing")
	}
	for _, inbox := range append(slices.Clone(r.inboxes), r.lookupJobs) {
		for more := true; more; {
			select {
			case d := <-inbox:
				answer(d)
			default:
				more = false
			}
		}
	}
}

// errHandingOver refuses a request of this node's own client while it
// drains (503: the client retries on another node).
var errHandingOver = errors.New("cluster: this node is handing its sessions over to the others")

// errHandedOver is deliverHere's word that a draining node answered the
// message itself: held, or released.
var errHandedOver = errors.New("cluster: answered by the handover")

// Draining reports whether Drain has taken effect: from now on, routed
// requests for this node's sessions are held or answered released.
func (r *relay) Draining() bool {
	r.handover.gate.RLock()
	defer r.handover.gate.RUnlock()
	return r.handover.draining
}
