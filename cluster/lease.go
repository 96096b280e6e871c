package cluster

import (
	"context"
	json "encoding/json/v2"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// The node's lease, and fencing. Each node holds one key in the lease
// bucket (nodes/<id>), which expires LeaseTTL after it was last written.
// Other nodes take a node's sessions over only once that key is gone. The
// node itself acts for its sessions — delivers their messages, sends their
// handlers' frames, writes their state — only while its lease is surely
// alive as the others see it:
//
//	deadline = time the last successful renewal was sent + LeaseTTL − margin
//
// (monotonic clock). The key was stored after the renewal was sent, so it
// expires after deadline + margin: however late the others look, the node
// has stopped acting margin before they can see the key gone. Renewals are a
// compare-and-swap on the key's last revision, so one that succeeds proves
// the key never expired in between (an expired key has no revision to
// match): the node goes on with its sessions. One that fails on the
// revision means the key expired and others may own its sessions now: the
// node gives them all up (closes them for handover) before it takes a new
// lease and acts again. The deadline is one atomic word, read on every
// delivery: fencing costs no storage read per message.
//
//	maintain ──every TTL/4──▶ CAS nodes/<id> (rev) ──ok──▶ deadline = sent+TTL−margin
//	                                  ├──wrong revision──▶ give every session up ──▶ create the key again
//	                                  └──no answer──▶ deadline passes: acting() false; at sent+TTL, give up

// leaseRecord is what a node's lease key holds.
type leaseRecord struct {
	V       int       `json:"v"` // leaseVersion (absent, 0: written by v0.1.0, the same format)
	Node    string    `json:"node"`
	Boot    string    `json:"boot"` // this process's boot
	Started time.Time `json:"started"`
	// Sessions is how many sessions the node had open at its renewal
	// (CountSessions), for the admin view; absent when it cannot tell.
	Sessions *int `json:"sessions,omitempty"`
}

// leaseVersion is the format of a lease record.
const leaseVersion = 1

// leaseState is the node's lease. The maintain goroutine owns every field
// but deadline, which any goroutine reads.
type leaseState struct {
	base     time.Time     // origin of the monotonic times below
	deadline atomic.Int64  // since base, in ns: the node acts until then
	healthy  atomic.Bool   // the last renewal succeeded
	renewed  atomic.Int64  // since base, in ns: when the last successful renewal was sent (0: none yet)
	gen      atomic.Uint64 // lapses since the node started

	rev    uint64        // revision of the node's last lease write (0: none)
	sentOK time.Duration // since base: when the last successful renewal was sent
	given  bool          // the sessions were given up since the last lapse
}

// leaseMargin is how long before its lease may lapse, as others see it, a
// node stops acting: a fifth of the TTL, at least 200 ms. It covers the
// difference between clocks' rates and the time a renewal spends in flight.
func leaseMargin(ttl time.Duration) time.Duration { return max(ttl/5, 200*time.Millisecond) }

// since returns the time since the lease's origin (monotonic).
func (n *Node) since() time.Duration { return time.Since(n.lease.base) }

// acting reports whether this node may act for its sessions now: its
// lease is surely alive as every other node sees it.
func (n *Node) acting() bool { return n.since() < time.Duration(n.lease.deadline.Load()) }

// Acting reports whether this node may act for its sessions now (see
// acting); false while its lease may have lapsed.
func (n *Node) Acting() bool { return n.acting() }

// startBuckets creates (or opens) the buckets, trying again until they
// exist; false if the node stopped first. It waits, without asking, while
// the embedded server's storage cannot create them yet (storageWait), and
// leaves their creation to the storage leader's node for a while
// (creates).
func (n *Node) startBuckets() bool {
	backoff, timeout := 100*time.Millisecond, bucketTimeout
	var canSince time.Time // when storageWait first said nothing
	for {
		wait := 50 * time.Millisecond
		if w := n.storageWait(); w != "" {
			canSince = time.Time{}
			n.log.Debug("storage not ready yet", "state", w)
		} else {
			if canSince.IsZero() {
				canSince = time.Now()
			}
			err := n.createBuckets(n.creates(canSince), timeout)
			if err == nil {
				return true
			}
			n.setErr(err)
			n.log.Debug("creating the buckets: not yet", "err", err)
			switch {
			case errors.Is(err, errCreatorFirst):
				wait = 100 * time.Millisecond
			case errors.Is(err, context.DeadlineExceeded):
				timeout = min(timeout*3/2, maxBucketTimeout)
			default:
				wait, backoff = backoff, min(2*backoff, time.Second)
			}
		}
		select {
		case <-n.stop:
			return false
		case <-time.After(wait):
		}
	}
}

// maintain creates the buckets (retrying until JetStream can), then keeps
// the lease renewed until Close.
func (n *Node) maintain() {
	defer n.stopped.Done()
	if !n.startBuckets() {
		return
	}
	tick := time.NewTicker(n.opts.LeaseTTL / 4)
	defer tick.Stop()
	for {
		n.renew()
		// Renewals fail while storage has no quorum; once the lease may
		// have expired, the sessions are given up at once rather than at
		// the next tick.
		lapse := time.NewTimer(max(n.lease.sentOK+n.opts.LeaseTTL-n.since(), 0))
		if n.lease.rev == 0 || n.lease.given {
			lapse.Stop()
		}
		select {
		case <-n.stop:
			lapse.Stop()
			return
		case <-tick.C:
		case <-lapse.C:
			n.giveUp("the lease was not renewed for " + n.opts.LeaseTTL.String())
		}
		lapse.Stop()
	}
}

// renew renews the lease once, or takes a new one. On the maintain
// goroutine.
func (n *Node) renew() {
	l := &n.lease
	ttl := n.opts.LeaseTTL
	if l.rev != 0 && !l.given && n.since() >= l.sentOK+ttl {
		// Not renewed for a whole TTL: the key may be gone, and others
		// may take the sessions over at any moment.
		n.giveUp("the lease was not renewed for " + ttl.String())
	}
	kv := n.kv(func() jetstream.KeyValue { return n.nodes })
	ctx, cancel := context.WithTimeout(n.ctx, min(ttl/2, storageOpTimeout))
	defer cancel()
	rec := leaseRecord{V: leaseVersion, Node: n.opts.NodeID, Boot: n.boot, Started: n.started}
	if count := n.sessionCount.Load(); count != nil {
		c := (*count)()
		rec.Sessions = &c
	}
	b, _ := json.Marshal(rec)
	sent := n.since()
	var rev uint64
	var err error
	if l.rev == 0 {
		rev, err = n.createLease(ctx, kv, b)
	} else {
		rev, err = kv.Update(ctx, n.opts.NodeID, b, l.rev)
		if isWrongRevision(err) {
			switch own, rerr := n.ownWrite(ctx, kv); {
			case rerr != nil:
				// Whose write it was cannot be read (the bucket may be
				// changing leader): not a lapse, a renewal that failed.
				// The next one asks again; a whole TTL without one gives
				// the sessions up all the same.
				err = rerr
			case own:
				// An earlier renewal that seemed to fail had landed: the
				// key never expired. Renew over the revision it left.
				sent = n.since()
				rev, err = kv.Update(ctx, n.opts.NodeID, b, l.rev)
			}
		}
		if isWrongRevision(err) {
			// The key expired (or was removed): others may own this
			// node's sessions now. Give them up before acting again.
			n.giveUp("the lease expired")
			l.rev = 0
			sent = n.since()
			rev, err = n.createLease(ctx, kv, b)
		}
	}
	if err != nil && n.ctx.Err() != nil {
		return // the node stops
	}
	if err != nil {
		n.renewFailures.Add(1)
		l.healthy.Store(false)
		n.setErr(fmt.Errorf("renewing the lease: %w", err))
		if n.settled.Load() {
			n.log.Warn("renewing the lease failed", "err", err)
		} else {
			n.log.Debug("taking the first lease failed; trying again", "err", err)
		}
		return
	}
	n.renewals.Add(1)
	l.rev, l.sentOK, l.given = rev, sent, false
	l.renewed.Store(int64(sent))
	l.deadline.Store(int64(sent + ttl - leaseMargin(ttl)))
	l.healthy.Store(true)
	n.mu.Lock()
	n.ready, n.lastErr = true, nil
	n.mu.Unlock()
	n.settled.Store(true)
}

// ownWrite reports whether the node's lease key holds a write of this run
// of the node newer than the revision it knows (a renewal whose answer was
// lost), and makes that revision the one the next renewal expects. Only
// this run writes its boot into the key, and a renewal lands only over the
// revision before it: the key was never gone. A key that is gone is not
// its write; a key that cannot be read is an error: nothing is known.
func (n *Node) ownWrite(ctx context.Context, kv jetstream.KeyValue) (bool, error) {
	e, err := kv.Get(ctx, n.opts.NodeID)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if e.Revision() <= n.lease.rev {
		return false, nil
	}
	var rec leaseRecord
	if json.Unmarshal(e.Value(), &rec) != nil || rec.Boot != n.boot {
		return false, nil
	}
	n.lease.rev = e.Revision()
	return true, nil
}

// createLease writes the node's lease key anew. A key left by an earlier
// run of this node (it restarted within the TTL) is taken as it is.
func (n *Node) createLease(ctx context.Context, kv jetstream.KeyValue, b []byte) (uint64, error) {
	rev, err := kv.Create(ctx, n.opts.NodeID, b)
	if !isWrongRevision(err) {
		return rev, err
	}
	e, err := kv.Get(ctx, n.opts.NodeID)
	if err != nil {
		return 0, err
	}
	return kv.Update(ctx, n.opts.NodeID, b, e.Revision())
}

// giveUp closes every session of this node for handover (once per lapse):
// others may own them now. It runs on the maintain goroutine before the
// node acts again, so every session of the lapsed lease is told to close
// before any message can reach it under the new one.
func (n *Node) giveUp(why string) {
	n.lease.given = true
	n.lease.deadline.Store(0)
	n.lease.gen.Add(1)
	n.mu.Lock()
	fn := n.onLapse
	n.mu.Unlock()
	n.log.Warn("this node's lease lapsed: it gives its sessions up", "why", why)
	if fn != nil {
		fn()
	}
}

// onLapsed sets what runs when this node's lease lapses while it runs:
// other nodes may have taken its sessions over, so it must give them up.
func (n *Node) onLapsed(fn func()) {
	n.mu.Lock()
	n.onLapse = fn
	n.mu.Unlock()
}

// errLeaseLapsed is why a node does not act for its sessions: its lease
// may have lapsed.
var errLeaseLapsed = errors.New("this node's lease may have lapsed: it cannot act for its sessions until it renews it")

// Alive reports whether node has a current lease; an error means the lease
// bucket could not be read before ctx ended. The lease bucket is read
// through its stream's leader (never a replica that may lag behind), each
// read bounded, and one that failed for a passing reason (the bucket
// electing a leader after a node loss) is tried again.
func (n *Node) Alive(ctx context.Context, node string) (bool, error) {
	kv := n.kv(func() jetstream.KeyValue { return n.nodes })
	if kv == nil {
		return false, ErrNotReady
	}
	var b backoff
	for {
		rctx, cancel := context.WithTimeout(ctx, storageOpTimeout)
		_, err := kv.Get(rctx, node)
		cancel()
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, jetstream.ErrKeyNotFound), errors.Is(err, jetstream.ErrKeyDeleted):
			return false, nil
		case !b.retry(ctx, err):
			return false, err
		}
	}
}

// Members returns the nodes with a current lease.
func (n *Node) Members(ctx context.Context) ([]string, error) {
	kv := n.kv(func() jetstream.KeyValue { return n.nodes })
	if kv == nil {
		return nil, ErrNotReady
	}
	keys, err := kv.Keys(ctx)
	if errors.Is(err, jetstream.ErrNoKeysFound) {
		return nil, nil
	}
	return keys, err
}
