package cluster

import (
	"context"
	json "encoding/json/v2"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// The node's lease, and fencing. Each node holds one key in the lease
// bucket (nodes/<id>), which expires the lease TTL after it was last
// written. Other nodes take a node's sessions over only once that key is
// surely gone (lease_read.go). The node itself acts for its sessions —
// delivers their messages, runs their handlers, sends their frames,
// appends their events, writes their state — only while its lease is
// surely alive as the others see it:
//
//	deadline = time the last successful renewal was sent + TTL − margin
//
// on both of the node's clocks (clock.go). The key was stored after the
// renewal was sent, so it expires after deadline + margin: however late
// the others look, the node has stopped acting margin before they can see
// the key gone. Renewals are a compare-and-swap on the key's last
// revision, so one that succeeds proves the key never expired in between
// (an expired key has no revision to match): the node goes on with its
// sessions. The deadline is two atomic words, read on every delivery:
// fencing costs no storage read per message.
//
// At the deadline the node gives its sessions up (closes them for
// handover) and cancels every handler they run (the lease's context, the
// parent of each handler's): a watchdog looks every fenceTick. A renewal
// that fails on the revision means the key expired: the node gives its
// sessions up, if it has not yet, before it takes a new lease and acts
// again. A key of another run of this node ID (another process, or an
// earlier one within the TTL) is never taken: the node waits until it is
// gone, so two processes under one node ID never both act.
//
//	maintain ──every TTL/4──▶ CAS nodes/<id> (rev) ──ok──▶ deadline = sent+TTL−margin
//	                                  ├──wrong revision──▶ give every session up ──▶ create the key again (not over another run's)
//	                                  └──no answer──▶ again 50 ms later, doubling to 1 s, until one lands; or the deadline passes
//	watchdog ──every fenceTick──▶ deadline passed? ──▶ give every session up, cancel their handlers

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

// leaseState is the node's lease. The maintain goroutine owns rev and
// sent; mu orders a give-up with a renewal that lets the node act again;
// the rest is atomic.
type leaseState struct {
	ttl     atomic.Int64 // the lease TTL in ns: Options.LeaseTTL, or the bucket's (buckets.go)
	dMono   atomic.Int64 // the deadline, monotonic ns (clock.go)
	dWall   atomic.Int64 // the deadline, wall Unix ns
	healthy atomic.Bool  // the last renewal succeeded
	renewed atomic.Int64 // monotonic ns: when the last successful renewal was sent (0: none yet)
	gen     atomic.Uint64
	run     atomic.Pointer[leaseRun] // the current run: its context is the handlers' parent

	rev  uint64  // revision of the node's last lease write (0: none)
	sent instant // when the last successful renewal was sent

	mu sync.Mutex // orders give-up with the start of a new run
}

// leaseRun is one stretch of time in which the node acts: from a renewal
// after which it acts to its deadline. Its context ends at the give-up.
type leaseRun struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	given  bool // under leaseState.mu: the sessions were given up
}

func newLeaseRun() *leaseRun {
	ctx, cancel := context.WithCancelCause(context.Background())
	return &leaseRun{ctx: ctx, cancel: cancel}
}

// leaseMargin is how long before its lease may lapse, as others see it, a
// node stops acting: a fifth of the TTL, at least 200 ms. It must cover,
// together, the difference between the clocks' rates over a TTL, the
// offset between the wall clocks of the NATS servers that store and expire
// the key, and a pause of the node's process between a fence check and
// the act it allows (docs/cluster.md, "Clock assumptions").
func leaseMargin(ttl time.Duration) time.Duration { return max(ttl/5, 200*time.Millisecond) }

// fenceTick is how often the watchdog looks at the deadline: a small part
// of the margin, so that handlers are cancelled well before another node
// may take their sessions over.
func fenceTick(ttl time.Duration) time.Duration { return min(leaseMargin(ttl)/4, 100*time.Millisecond) }

// leaseTTL returns the lease TTL the node uses.
func (n *Node) leaseTTL() time.Duration { return time.Duration(n.lease.ttl.Load()) }

// deadline returns the node's current deadline.
func (n *Node) deadline() instant {
	return instant{mono: time.Duration(n.lease.dMono.Load()), wall: n.lease.dWall.Load()}
}

// acting reports whether this node may act for its sessions now: its
// lease is surely alive as every other node sees it.
func (n *Node) acting() bool { return n.now().before(n.deadline()) }

// Acting reports whether this node may act for its sessions now (see
// acting); false while its lease may have lapsed.
func (n *Node) Acting() bool { return n.acting() }

// LeaseContext returns a context that ends when this node may no longer
// act for its sessions: at its lease deadline, or at once if it does not
// act now. A session's handlers run under it (session.Config.Acting).
func (n *Node) LeaseContext() context.Context {
	if run := n.lease.run.Load(); run != nil {
		return run.ctx
	}
	return expired
}

// expired is a context that has ended: the lease context of a node that
// has not acted yet.
var expired = func() context.Context {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errLeaseLapsed)
	return ctx
}()

// startBuckets creates (or opens) the buckets, trying again until they
// exist; false if the node stopped first. It waits, without asking, while
// the embedded server's storage cannot create them yet (storageWait), and
// leaves their creation to the storage leader's node for a while
// (creates). created says whether this node was the one to create them.
func (n *Node) startBuckets() (ok, created bool) {
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
			create := n.creates(canSince)
			err := n.createBuckets(create, timeout)
			if err == nil {
				return true, create
			}
			n.setErr(err)
			n.log.Debug("creating the buckets: not yet", "err", err)
			switch {
			case errors.Is(err, errCreatorFirst), errors.As(err, new(storeWaitError)):
				wait = 100 * time.Millisecond
			case errors.Is(err, context.DeadlineExceeded):
				timeout = min(timeout*3/2, maxBucketTimeout)
			default:
				wait, backoff = backoff, min(2*backoff, time.Second)
			}
		}
		select {
		case <-n.stop:
			return false, false
		case <-time.After(wait):
		}
	}
}

// maintain creates the buckets (retrying until JetStream can), then keeps
// the lease renewed until Close; the watchdog keeps the deadline.
func (n *Node) maintain() {
	defer n.stopped.Done()
	ok, created := n.startBuckets()
	if !ok {
		return
	}
	n.stopped.Add(2)
	go n.watchdog()
	go n.boundStores(created)
	wait := time.NewTimer(n.leaseTTL() / 4)
	defer wait.Stop()
	var short shortWatch
	var retry renewRetry
	for {
		renewed := n.renew()
		n.shortOfReplicas(&short, time.Now())
		if renewed {
			n.readDirectory()
		}
		wait.Reset(retry.after(renewed, n.leaseTTL()/4))
		select {
		case <-n.stop:
			return
		case <-wait.C:
		}
	}
}

// renewRetry spaces the renewals after one failed: the first again 50 ms
// later, doubling up to a second (never more than the regular spacing),
// until one succeeds. A renewal fails mostly while the lease bucket elects
// a leader (a node lost, or back after a partition, whose raft term makes
// the leaders step down); the node renews as soon as the new leader
// answers, instead of at its next regular turn, up to a quarter TTL later,
// which may be past its deadline.
type renewRetry struct{ next time.Duration }

// after returns how long to wait before the next renewal, given whether
// the last one succeeded and the regular spacing every.
func (r *renewRetry) after(renewed bool, every time.Duration) time.Duration {
	if renewed {
		r.next = 0
		return every
	}
	r.next = min(max(2*r.next, 50*time.Millisecond), time.Second, every)
	return r.next
}

// watchdog gives the sessions up once the deadline has passed, until the
// node stops. It looks every fenceTick, on the node's clock, so a deadline
// that passed while the host was suspended is seen at the first look
// after it resumes.
func (n *Node) watchdog() {
	defer n.stopped.Done()
	tick := time.NewTicker(fenceTick(n.leaseTTL()))
	defer tick.Stop()
	for {
		select {
		case <-n.stop:
			return
		case <-tick.C:
		}
		if !n.acting() {
			n.giveUp("the lease deadline passed", true)
		}
	}
}

// renew renews the lease once, or takes a new one, and reports whether it
// did. On the maintain goroutine.
func (n *Node) renew() bool {
	l := &n.lease
	ttl := n.leaseTTL()
	kv := n.kv(func() jetstream.KeyValue { return n.nodes })
	ctx, cancel := context.WithTimeout(n.ctx, min(ttl/2, storageOpTimeout))
	defer cancel()
	rec := leaseRecord{V: leaseVersion, Node: n.opts.NodeID, Boot: n.boot, Started: n.started}
	if count := n.sessionCount.Load(); count != nil {
		c := (*count)()
		rec.Sessions = &c
	}
	b, _ := json.Marshal(rec)
	sent := n.now()
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
				// The next one asks again; the deadline passes all the
				// same if none succeeds.
				err = rerr
			case own:
				// An earlier renewal that seemed to fail had landed: the
				// key never expired. Renew over the revision it left.
				sent = n.now()
				rev, err = kv.Update(ctx, n.opts.NodeID, b, l.rev)
			}
		}
		if isWrongRevision(err) {
			// The key expired (or was removed): others may own this
			// node's sessions now. Give them up before acting again.
			n.giveUp("the lease expired", false)
			l.rev = 0
			sent = n.now()
			rev, err = n.createLease(ctx, kv, b)
		}
	}
	if err != nil && n.ctx.Err() != nil {
		return false // the node stops
	}
	if err != nil {
		n.renewFailures.Add(1)
		first := l.healthy.Swap(false)
		n.setErr(fmt.Errorf("renewing the lease: %w", err))
		switch {
		case first && n.settled.Load() && !errors.Is(err, errLeaseHeld):
			n.log.Warn("renewing the lease failed; trying again until it lands", "err", err)
		case n.settled.Load() && !errors.Is(err, errLeaseHeld):
			n.log.Debug("renewing the lease failed again", "err", err)
		default:
			n.log.Debug("taking the lease failed; trying again", "err", err)
		}
		return false
	}
	n.renewals.Add(1)
	l.rev, l.sent = rev, sent
	n.extend(sent.add(ttl - leaseMargin(ttl)))
	l.renewed.Store(int64(sent.mono))
	if !l.healthy.Swap(true) && n.settled.Load() {
		n.log.Info("renewed the lease again")
	}
	n.mu.Lock()
	n.ready, n.lastErr = true, nil
	n.mu.Unlock()
	n.settled.Store(true)
	n.firstOnce.Do(func() { close(n.firstLease) })
	n.observeIncarnation(ctx)
	return true
}

// extend makes d the node's deadline after a successful renewal. A run
// whose sessions were given up is over: a new one starts, with a new
// context for the handlers to come.
func (n *Node) extend(d instant) {
	l := &n.lease
	l.mu.Lock()
	defer l.mu.Unlock()
	if run := l.run.Load(); run == nil || run.given {
		l.run.Store(newLeaseRun())
	}
	l.dMono.Store(int64(d.mono))
	l.dWall.Store(d.wall)
}

// errLeaseHeld reports a lease key of this node ID written by another
// process (or an earlier run of this one): the node waits until it is
// gone.
var errLeaseHeld = errors.New("another process holds this node ID's lease")

// ownWrite reports whether the node's lease key holds a write of this run
// of the node newer than the revision it knows (a renewal whose answer was
// lost), and makes that revision the one the next renewal expects. Only
// this run writes its boot into the key, and a renewal lands only over the
// revision before it: the key was never gone. A key that is gone is not
// its write; a key that cannot be read is an error: nothing is known.
func (n *Node) ownWrite(ctx context.Context, kv jetstream.KeyValue) (bool, error) {
	e, err := kv.Get(ctx, n.opts.NodeID)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
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

// createLease writes the node's lease key anew. A key this run wrote (a
// creation whose answer was lost) is taken as it is; a key of another run
// of this node ID — another process started with the same --node-id, or
// this node's earlier run, which crashed less than a TTL ago — is not:
// errLeaseHeld until it is gone, so that two processes never act under
// one node ID at once.
func (n *Node) createLease(ctx context.Context, kv jetstream.KeyValue, b []byte) (uint64, error) {
	rev, err := kv.Create(ctx, n.opts.NodeID, b)
	if !isWrongRevision(err) {
		return rev, err
	}
	e, err := kv.Get(ctx, n.opts.NodeID)
	if err != nil {
		return 0, err
	}
	var rec leaseRecord
	if err := json.Unmarshal(e.Value(), &rec); err != nil || rec.Boot != n.boot {
		return 0, fmt.Errorf("%w (boot %s, started %s): this node waits until it lapses, at most %s after that process last renewed it",
			errLeaseHeld, rec.Boot, rec.Started.Format(time.RFC3339), n.leaseTTL())
	}
	return kv.Update(ctx, n.opts.NodeID, b, e.Revision())
}

// giveUp closes every session of this node for handover and cancels their
// handlers, once per run: others may own them now. It runs before the node
// acts again (extend starts a new run under the same lock), so every
// session of the lapsed run is told to close before any message can reach
// it under the new one. (A session a restore started after the give-up
// is closed by the restore itself: takeover.go.) With ifPassed (the
// watchdog's), it gives up only if the deadline has still passed under
// the lock: a renewal may have extended it since the watchdog looked.
func (n *Node) giveUp(why string, ifPassed bool) {
	l := &n.lease
	l.mu.Lock()
	defer l.mu.Unlock()
	if ifPassed && n.acting() {
		return
	}
	if !n.endRun(errLeaseLapsed) {
		return
	}
	n.mu.Lock()
	fn := n.onLapse
	n.mu.Unlock()
	n.log.Warn("this node's lease lapsed: it gives its sessions up", "why", why)
	if fn != nil {
		fn()
	}
}

// endRun ends the current run, if it has not ended: the node acts no more
// (its deadline is zero) and its handlers' context ends with cause. It
// reports whether it ended it. Under lease.mu.
func (n *Node) endRun(cause error) bool {
	l := &n.lease
	run := l.run.Load()
	l.dMono.Store(0)
	l.dWall.Store(0)
	if run == nil || run.given {
		return false
	}
	run.given = true
	l.gen.Add(1)
	run.cancel(cause)
	return true
}

// stopActing makes the node act no more, for good: it is closing.
func (n *Node) stopActing(cause error) {
	l := &n.lease
	l.mu.Lock()
	defer l.mu.Unlock()
	n.endRun(cause)
	l.run.Store(&leaseRun{ctx: expired, given: true})
}

// errNodeClosed ends the handlers of a node that closes.
var errNodeClosed = errors.New("this node is closing")

// onLapsed sets what runs when this node's lease lapses while it runs:
// other nodes may have taken its sessions over, so it must give them up.
// fn must not block.
func (n *Node) onLapsed(fn func()) {
	n.mu.Lock()
	n.onLapse = fn
	n.mu.Unlock()
}

// errLeaseLapsed is why a node does not act for its sessions: its lease
// may have lapsed.
var errLeaseLapsed = errors.New("this node's lease may have lapsed: it cannot act for its sessions until it renews it")
