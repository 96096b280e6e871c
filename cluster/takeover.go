package cluster

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/mcp-actors/mcp-actors/actors/router"
	"github.com/mcp-actors/mcp-actors/actors/session"
	"github.com/mcp-actors/mcp-actors/messages"
)

// Owner loss. A session is owned by one node at a time: its directory
// record (owner, epoch, principal, State) says which, and is changed only
// by a compare-and-swap on its revision. When a message for the session
// finds no owner answering — its node died, hangs, is cut off, or shut
// down and handed its sessions over — the node that received it looks at
// the owner's lease (through the lease bucket's leader): once it has
// lapsed (or was given up), it takes the session over (epoch + 1) and
// starts it again from the record's State; the message is then delivered
// here. A node that still holds its lease but does not have the session
// (it restarted, or closed the session for handover) starts it again
// itself.
//
//	Deliver(id) ──▶ owner answers? ──no / not in time──▶ lease of owner alive? ──no──▶ CAS owner=me, epoch+1 ──▶ Restore(State) ──▶ deliver here
//	                                                             └──yes──▶ ErrOwnerBusy (503: try again)

// ErrOwnerBusy is returned for a session whose owner holds its lease but
// does not answer: it may be overloaded or cut off; the session is not
// taken over from a live node.
var ErrOwnerBusy = errors.New("cluster: the session's node holds its lease but does not answer")

// locate finds who owns session id now that the node thought to own it
// (suspect) did not have it or did not answer: it returns the owner, after
// taking the session over here when the owner's lease has lapsed (or the
// directory names this node), or ErrSessionNotFound when the directory
// has no such session. Lookups of one session at once share one answer.
// A node that does not hold its own lease answers at once: it can neither
// take a session over nor trust what it last knew.
func (r *relay) locate(ctx context.Context, id, suspect string) (string, error) {
	return r.lookup(ctx, id, suspect, lookupHint{})
}

// lookupHint is what the sender of a message knows of why suspect did
// not take it.
type lookupHint struct {
	// released: suspect said it released the session at this epoch
	// (handover.go): while the directory still names suspect at that
	// epoch, the session is taken over at once, with no wait for
	// suspect's lease.
	released uint64
	// gone: nothing listened on suspect's subject, so nothing got the
	// message there; should suspect answer again (a restart's new run)
	// before its lease lapses, the message goes to it.
	gone bool
}

// lookup is locate, with what the sender knows of suspect.
func (r *relay) lookup(ctx context.Context, id, suspect string, hint lookupHint) (string, error) {
	if r.node.Standalone() {
		return "", router.ErrSessionNotFound
	}
	if r.isUnknown(id) {
		return "", router.ErrSessionNotFound
	}
	if !r.node.acting() {
		return "", fmt.Errorf("%w: %w", errStorage, errLeaseLapsed)
	}
	if r.node.cutOff() {
		// Cut off from the others, this node can neither read the
		// directory nor write it: it says so at once.
		return "", fmt.Errorf("%w: this node has no route to the others", ErrOwnerBusy)
	}
	// The lookup is shared: it runs on the router's context, bounded (the
	// wait for a lapse and the retries), so that one caller that gives up
	// does not end it for the others; each caller waits as long as its own
	// context lets it.
	key := id + "\x00" + suspect + "\x00" + strconv.FormatUint(hint.released, 10) + strconv.FormatBool(hint.gone)
	ch := r.lookups.DoChan(key, func() (any, error) {
		lctx, cancel := context.WithTimeout(r.ctx, 2*r.node.leaseTTL()+deliverTimeout)
		defer cancel()
		return r.locateOnce(lctx, id, suspect, hint)
	})
	select {
	case res := <-ch:
		if res.Err != nil {
			return "", res.Err
		}
		return res.Val.(string), nil
	case <-ctx.Done():
		return "", fmt.Errorf("%w: %w", errStorage, ctx.Err())
	}
}

func (r *relay) locateOnce(ctx context.Context, id, suspect string, hint lookupHint) (string, error) {
	if err := r.node.waitBuckets(ctx); err != nil {
		return "", err
	}
	kv := r.node.kv(func() jetstream.KeyValue { return r.node.sessions })
	me := r.node.ID()
	var b backoff
	for range 16 {
		if r.draining.Load() {
			return "", ErrOwnerBusy // shutting down: another node takes it once the lease is given up
		}
		rec, rev, err := r.readRecord(ctx, kv, id)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			r.rememberUnknown(id)
			return "", router.ErrSessionNotFound
		}
		if err != nil {
			return "", err
		}
		if rec.Owner != me {
			if rec.Owner != suspect {
				r.dir.Store(id, &entry{Session: id, Owner: rec.Owner, Epoch: rec.Epoch, Principal: rec.Principal, known: true})
				return rec.Owner, nil // it moved: route there
			}
			// A node cut off from the others cannot write the directory:
			// it takes nothing over, and says so at once.
			if r.node.cutOff() {
				return "", fmt.Errorf("%w: this node has no route to the others", ErrOwnerBusy)
			}
			// Released by its owner at this epoch: the owner never runs
			// it again, and the swap below is on this very record.
			if hint.released == 0 || rec.Epoch != hint.released {
				err := r.awaitLapse(ctx, rec.Owner, hint.gone)
				if errors.Is(err, errOwnerBack) {
					return rec.Owner, nil // route there again
				}
				if err != nil {
					return "", err
				}
			}
		}
		// The run this start belongs to: if the node gives its sessions
		// up before the session has started, it was not among them, and
		// is closed here (below).
		gen := r.node.lease.gen.Load()
		if !r.node.acting() {
			return "", fmt.Errorf("%w: %w", errStorage, errLeaseLapsed)
		}
		// Take it over, or start it again here (this node restarted, or
		// gave it up when its lease lapsed): either way a new epoch, by a
		// compare-and-swap on the record, so that of the nodes that try
		// at once one does, and whatever an earlier owner — another node,
		// or this one's earlier run — still had in flight is refused.
		next := *rec
		next.Owner, next.Epoch, next.V = me, rec.Epoch+1, recordVersion
		rev, err = r.swapRecord(ctx, kv, &next, rev)
		if errors.Is(err, jetstream.ErrKeyExists) {
			continue // someone else changed it: look again
		}
		if err != nil {
			if r.storageRetry(ctx, &b, err) {
				continue
			}
			return "", fmt.Errorf("%w: taking a session over: %w", errStorage, err)
		}
		e := &entry{Session: id, Owner: me, Epoch: next.Epoch, Principal: next.Principal, rev: rev, known: true}
		r.dir.Store(id, e)
		// The new epoch goes into the event log before it is read: an
		// append of an earlier owner that lands after it is ignored by
		// this restore and every later one (events.go).
		marker, err := r.markEpoch(ctx, id, next.Epoch)
		if err != nil {
			r.dir.CompareAndDelete(id, e)
			return "", fmt.Errorf("%w: marking the session's event log: %w", errStorage, err)
		}
		if err := r.restore(ctx, e, next.State, marker); err != nil {
			return "", err
		}
		if r.node.lease.gen.Load() != gen {
			// The lease lapsed while the session started: it may be
			// another node's by now. Give it up as the others were.
			r.closeForHandover(id, "this node's lease lapsed")
			return "", fmt.Errorf("%w: %w", errStorage, errLeaseLapsed)
		}
		if rec.Owner != me {
			r.stats.takeovers.Add(1)
			r.node.log.Info("took a session over", "session", session.LogID(id), "from", rec.Owner, "epoch", next.Epoch)
		}
		return me, nil
	}
	return "", fmt.Errorf("cluster: session %s changes owner too often to take over", session.LogID(id))
}

// closeForHandover closes this node's copy of session id without removing
// it from the directory.
func (r *relay) closeForHandover(id, why string) {
	if ref, ok := r.local.Session(id); ok {
		ref.Send(&messages.CloseSession{Reason: why, Handover: true})
	}
}

// storageOpTimeout bounds one read or write of a bucket that is tried
// again on failure: after a node loss a bucket may be electing a leader,
// and a request sent meanwhile may never be answered.
const storageOpTimeout = 2 * time.Second

// backoff spaces the tries of a storage operation that failed with a
// transient error: 50 ms, doubling up to a second.
type backoff struct{ next time.Duration }

// retry reports whether an operation that failed with err may be tried
// again, after waiting its turn: err is transient and ctx is not done.
func (b *backoff) retry(ctx context.Context, err error) bool {
	if ctx.Err() != nil || !transient(err) {
		return false
	}
	b.next = min(max(2*b.next, 50*time.Millisecond), time.Second)
	return sleepCtx(ctx, b.next)
}

// transient reports whether a storage error may pass by itself: a stream
// electing its leader after a node loss, a timeout.
func transient(err error) bool {
	if errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, nats.ErrTimeout) || errors.Is(err, nats.ErrNoResponders) {
		return true
	}
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.Code == 503 && !isStoreFull(err) // full stays full
}

// errOwnerBack is awaitLapse's word that the owner answers again: it
// restarted (its new run holds the lease), or came back from a pause.
var errOwnerBack = errors.New("cluster: the session's node answers again")

// awaitLapse waits, up to a lease TTL and a half, for the lease of owner
// — which does not answer on its subject, or not in time: it died, hangs,
// is cut off, or shut down — to lapse surely (Node.lapsed), so that the
// message that found it gone can be delivered after a takeover instead of
// failing. ErrOwnerBusy if it does not; with probe (nothing got the
// message there), errOwnerBack if, meanwhile, the owner answers on its
// subject again (a restart's new run, which holds the lease again: the
// message goes to it).
func (r *relay) awaitLapse(ctx context.Context, owner string, probe bool) error {
	ttl := r.node.leaseTTL()
	deadline := time.Now().Add(ttl + ttl/2)
	for {
		lapsed, err := r.node.lapsed(ctx, owner)
		if err != nil {
			return fmt.Errorf("%w: reading the leases: %w", errStorage, err)
		}
		if lapsed {
			return nil
		}
		if time.Now().After(deadline) {
			return ErrOwnerBusy
		}
		t := time.NewTimer(ttl / 8)
		if probe && r.answersProbe(owner, min(probeTimeout, ttl/8)) {
			t.Stop()
			return errOwnerBack
		}
		select {
		case <-ctx.Done():
			t.Stop()
			return ErrOwnerBusy
		case <-t.C:
		}
	}
}

// restore starts session e here from its State (nil: the record was
// written before initialize's State, which never happens: it starts as
// new), with its event log read through its epoch marker (the sequence
// marker).
func (r *relay) restore(ctx context.Context, e *entry, st *session.State, marker uint64) error {
	if st == nil {
		st = &session.State{}
	}
	st.Principal = e.Principal
	events, err := r.loadEvents(ctx, e.Session, marker)
	if err != nil {
		// The session matters more than what it could replay.
		r.node.log.Warn("the session's event log could not be read whole", "session", session.LogID(e.Session), "err", err)
	}
	st.Events = events
	r.stats.restored.Add(int64(len(events)))
	return r.local.Restore(e.Session, router.OpenOptions{Principal: e.Principal, Resumable: true, Restore: st})
}

// unknownTTL is how long a session ID the directory does not hold is
// remembered as unknown; maxUnknown bounds how many are (beyond, the
// memory starts afresh). A made-up ID costs one directory read a minute.
const (
	unknownTTL = time.Minute
	maxUnknown = 100000
)

// rememberUnknown remembers that the directory has no session id. IDs
// are made by Open, at random, so one the directory does not hold never
// appears in it later.
func (r *relay) rememberUnknown(id string) {
	if r.nUnknown.Add(1) > maxUnknown {
		r.unknown.Clear()
		r.nUnknown.Store(1)
	}
	r.unknown.Store(id, time.Now())
}

// isUnknown reports whether session id was lately found not to exist.
func (r *relay) isUnknown(id string) bool {
	v, ok := r.unknown.Load(id)
	if !ok {
		return false
	}
	if time.Since(v.(time.Time)) > unknownTTL {
		r.unknown.CompareAndDelete(id, v)
		return false
	}
	return true
}
