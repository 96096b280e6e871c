package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/mcp-actors/mcp-actors/actors/router"
	"github.com/mcp-actors/mcp-actors/actors/session"
)

// Owner loss. A session is owned by one node at a time: the directory
// entry (owner, epoch, principal) says which, and is changed only by a
// compare-and-swap on its revision. The owner keeps the session's State
// durable beside it (<session>.state) after every change. When a message
// for the session finds no owner answering — its node died, or shut down
// and handed its sessions over — the node that received it looks at the
// owner's lease: once it has lapsed (or was given up), it takes the
// session over (epoch + 1) and starts it again from its State; the
// message is then delivered here. A node that still holds a lease but
// lost the session (it restarted) starts it again itself.
//
//	Deliver(id) ──▶ owner answers? ──no──▶ lease of owner alive? ──no──▶ CAS owner=me, epoch+1 ──▶ Restore(State) ──▶ deliver here
//	                                                   └──yes──▶ ErrOwnerBusy (try again)

// ErrOwnerBusy is returned for a session whose owner holds its lease but
// does not answer: it may be overloaded or cut off; the session is not
// taken over from a live node.
var ErrOwnerBusy = errors.New("cluster: the session's node holds its lease but does not answer")

// stateKey is the directory key of session id's State.
func stateKey(id string) string { return id + ".state" }

// Persist keeps a session's State durable (session.Config.Persist): written
// without waiting, in order. A node on its own keeps none.
func (r *Router) Persist(id string, st *session.State) {
	if r.node.Standalone() {
		return
	}
	b, err := json.Marshal(st)
	if err != nil {
		r.node.log.Error("encoding a session's state failed", "session", id, "err", err)
		return
	}
	m := &nats.Msg{Subject: r.node.subj.key("sessions", stateKey(id)), Data: b}
	r.node.writeAsync(m, slog.LevelWarn, "writing a session's state", id)
}

// recover finds who owns session id now that the node thought to own it
// (suspect; "" for this one) did not have it: it returns the owner, after
// taking the session over here when the owner's lease has lapsed (or the
// directory names this node), or ErrSessionNotFound when the directory
// has no such session.
func (r *Router) recover(ctx context.Context, id, suspect string) (string, error) {
	if r.node.Standalone() {
		return "", router.ErrSessionNotFound
	}
	if _, ok := ctx.Deadline(); !ok {
		// A request's own context has no deadline: bound the wait for a
		// lapse and the retries, so that the client gets an answer.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 2*r.node.opts.LeaseTTL+deliverTimeout)
		defer cancel()
	}
	if err := r.node.waitBuckets(ctx); err != nil {
		return "", err
	}
	kv := r.node.kv(func() jetstream.KeyValue { return r.node.sessions })
	// After a node loss the directory's stream may be electing a new
	// leader for a few seconds: reads and writes fail meanwhile, and are
	// tried again.
	var b backoff
	retry := func(err error) bool { return b.retry(ctx, err) }
	for attempt := 0; attempt < 64; attempt++ {
		if r.draining.Load() {
			return "", ErrOwnerBusy // shutting down: another node takes it once the lease is given up
		}
		kve, err := kv.Get(ctx, id)
		if err != nil && retry(err) {
			continue
		}
		if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrInvalidKey) {
			return "", router.ErrSessionNotFound
		}
		if err != nil {
			return "", fmt.Errorf("cluster: reading the session directory: %w", err)
		}
		var e entry
		if err := json.Unmarshal(kve.Value(), &e); err != nil || e.Session != id {
			return "", fmt.Errorf("cluster: directory entry of %s cannot be read", id)
		}
		if e.Owner != r.node.ID() {
			if e.Owner != suspect {
				e.known = true
				r.dir.Store(id, &e) // it moved: route there
				return e.Owner, nil
			}
			// A node cut off from the others sees a stale copy of the
			// leases and cannot write the directory: it takes nothing
			// over, and says so at once.
			if r.node.cutOff() {
				return "", fmt.Errorf("%w: this node has no route to the others", ErrOwnerBusy)
			}
			if err := r.awaitLapse(ctx, e.Owner); err != nil {
				return "", err
			}
		}
		// Take it over: a compare-and-swap on the entry, so that of the
		// nodes that try at once, one does.
		next := e
		next.Owner, next.Epoch = r.node.ID(), e.Epoch+1
		b, _ := json.Marshal(&next)
		if _, err := kv.Update(ctx, id, b, kve.Revision()); err != nil {
			if errors.Is(err, jetstream.ErrKeyExists) || retry(err) {
				continue // someone else changed it, or storage was away: look again
			}
			return "", fmt.Errorf("cluster: taking session %s over: %w", id, err)
		}
		err = r.restore(ctx, kv, &next)
		for err != nil && retry(err) {
			err = r.restore(ctx, kv, &next)
		}
		if err != nil {
			return "", err
		}
		next.known = true
		r.dir.Store(id, &next)
		r.stats.takeovers.Add(1)
		r.node.log.Info("took a session over", "session", id, "from", e.Owner, "epoch", next.Epoch)
		return r.node.ID(), nil
	}
	return "", fmt.Errorf("cluster: session %s changes owner too often to take over", id)
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
	select {
	case <-ctx.Done():
		return false
	case <-time.After(b.next):
		return true
	}
}

// transient reports whether a storage error may pass by itself: a stream
// electing its leader after a node loss, a timeout.
func transient(err error) bool {
	if errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, nats.ErrTimeout) || errors.Is(err, nats.ErrNoResponders) {
		return true
	}
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.Code == 503
}

// awaitLapse waits, up to a lease TTL and a half, for the lease of owner
// — which answers no more on its subject: it died, or shut down — to
// lapse, so that the message that found it gone can be delivered after a
// takeover instead of failing. ErrOwnerBusy if it does not.
func (r *Router) awaitLapse(ctx context.Context, owner string) error {
	ttl := r.node.opts.LeaseTTL
	deadline := time.Now().Add(ttl + ttl/2)
	for {
		alive, err := r.node.Alive(ctx, owner)
		if err != nil {
			return fmt.Errorf("cluster: reading the leases: %w", err)
		}
		if !alive {
			return nil
		}
		if time.Now().After(deadline) {
			return ErrOwnerBusy
		}
		select {
		case <-ctx.Done():
			return ErrOwnerBusy
		case <-time.After(ttl / 8):
		}
	}
}

// restore starts session e here from its State.
func (r *Router) restore(ctx context.Context, kv jetstream.KeyValue, e *entry) error {
	var st session.State
	kve, err := kv.Get(ctx, stateKey(e.Session))
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		// Opened but its state never written: it starts as new.
	case err != nil:
		return fmt.Errorf("cluster: reading the state of session %s: %w", e.Session, err)
	default:
		if err := json.Unmarshal(kve.Value(), &st); err != nil {
			return fmt.Errorf("cluster: the state of session %s cannot be read: %w", e.Session, err)
		}
	}
	st.Principal = e.Principal
	events, err := r.loadEvents(ctx, e.Session)
	if err != nil {
		// The session matters more than what it could replay.
		r.node.log.Warn("the session's event log could not be read whole", "session", e.Session, "err", err)
	}
	st.Events = events
	r.stats.restored.Add(int64(len(events)))
	return r.local.Restore(e.Session, router.OpenOptions{Principal: e.Principal, Resumable: true, Restore: &st})
}
