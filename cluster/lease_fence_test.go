package cluster

import (
	"context"
	"encoding/json/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/actors/session"
)

// The lease's own mechanisms, each with a test that fails without it
// (tests/faults/README.md keeps the table).

// slowLeases is a node's lease bucket whose renewals land at once but
// whose answers come delay late; it notes when each renewal was sent (on
// the node's clock).
type slowLeases struct {
	jetstream.KeyValue
	n     *Node
	delay time.Duration

	mu    sync.Mutex
	calls []instant
}

func (s *slowLeases) Update(ctx context.Context, key string, value []byte, rev uint64) (uint64, error) {
	s.mu.Lock()
	s.calls = append(s.calls, s.n.now())
	s.mu.Unlock()
	r, err := s.KeyValue.Update(ctx, key, value, rev)
	t := time.NewTimer(s.delay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	return r, err
}

func (s *slowLeases) last() (instant, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.calls) == 0 {
		return instant{}, 0
	}
	return s.calls[len(s.calls)-1], len(s.calls)
}

// TestLeaseDeadlineFromSend: the deadline counts from when the renewal
// was sent, not from when its answer came: a renewal answered late
// (its key was stored at once) leaves the node no more than TTL − margin
// from the send. Counted from the answer, the node would act for as long
// as the answer took past its key's expiry.
func TestLeaseDeadlineFromSend(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	const ttl = 4 * time.Second
	_, nodes := startEventLog(t, Options{ClusterName: "fromsend", LeaseTTL: ttl})
	n1 := nodes[0]
	require.Eventually(t, n1.Acting, 10*time.Second, 10*time.Millisecond)
	slow := &slowLeases{KeyValue: n1.kv(func() jetstream.KeyValue { return n1.nodes }), n: n1, delay: 700 * time.Millisecond}
	n1.mu.Lock()
	n1.nodes = slow
	n1.mu.Unlock()

	renewals := n1.renewals.Load()
	require.Eventually(t, func() bool { return n1.renewals.Load() >= renewals+2 }, 10*time.Second, 10*time.Millisecond, "renewed, late")
	sent, calls := slow.last()
	require.Positive(t, calls)
	d := n1.deadline()
	limit := sent.add(ttl - leaseMargin(ttl))
	assert.LessOrEqual(t, d.mono, limit.mono, "the deadline is at most TTL − margin after the renewal was sent (%s past it)", d.mono-limit.mono)
	assert.LessOrEqual(t, d.wall, limit.wall)
	assert.Greater(t, d.mono, limit.mono-100*time.Millisecond, "and no earlier than the send before it")
}

// TestLeaseTTLFromBucket: a node told another --lease-ttl than the one the
// lease bucket expires keys by uses the bucket's. With its own (longer),
// it would act on after its key expired.
func TestLeaseTTLFromBucket(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	const ttl = 2 * time.Second
	ctx, nodes := startEventLog(t, Options{ClusterName: "bucketttl", LeaseTTL: ttl})
	o := nodes[2].opts
	nodes[2].Close()
	o.LeaseTTL = 10 * time.Second // a rolling change of --lease-ttl
	n3, err := Start(ctx, o)
	require.NoError(t, err)
	t.Cleanup(n3.Close)
	require.NoError(t, n3.WaitReady(ctx))
	assert.Equal(t, ttl, n3.leaseTTL(), "the bucket's TTL")
	d, renewed := n3.deadline(), time.Duration(n3.lease.renewed.Load())
	assert.LessOrEqual(t, d.mono-renewed, ttl-leaseMargin(ttl), "the deadline follows the bucket's TTL")
}

// TestLeaseOfAnotherRun: a node whose key holds another run's boot — a
// second process started with its node ID — does not take the key over:
// it gives its sessions up and waits, not ready, saying why, until that
// key is gone; then it takes a new lease. Taking it over, the two would
// take the key from each other in turn and both act.
func TestLeaseOfAnotherRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	const ttl = 2 * time.Second
	ctx, nodes := startEventLog(t, Options{ClusterName: "samenode", LeaseTTL: ttl})
	n1 := nodes[0]
	require.Eventually(t, n1.Acting, 10*time.Second, 10*time.Millisecond)
	lapses := make(chan struct{}, 4)
	n1.onLapsed(func() { signal(lapses) })

	// The other process writes n1's key, and renews it for a while.
	kv := nodes[1].kv(func() jetstream.KeyValue { return nodes[1].nodes })
	other, err := json.Marshal(leaseRecord{V: leaseVersion, Node: "n1", Boot: "0ther", Started: time.Now()})
	require.NoError(t, err)
	put := func() { _, err := kv.Put(ctx, "n1", other); require.NoError(t, err) }
	put()
	select {
	case <-lapses:
	case <-time.After(10 * time.Second):
		t.Fatal("n1 did not give its sessions up when its key was another run's")
	}
	until := time.Now().Add(2 * ttl)
	tick := time.NewTicker(ttl / 4)
	defer tick.Stop()
	for time.Now().Before(until) {
		assert.False(t, n1.Acting(), "n1 does not act while another run holds its key")
		put()
		<-tick.C
	}
	err = n1.Ready()
	require.ErrorIs(t, err, errLeaseHeld, "n1 says why it is not ready")
	assert.Contains(t, err.Error(), "0ther")

	// The other run stops renewing: its key expires, and n1 acts again.
	require.Eventually(t, n1.Acting, 4*ttl, 20*time.Millisecond, "n1 takes a new lease once the other's is gone")
}

// TestMissingLeaseKey: a lease key that is missing because the bucket lost
// its contents (every replica of the in-memory leases restarted) is not a
// lapse until a TTL has passed: its node still acts until its next renewal
// finds the key gone. A key deleted by anyone but its node is not a lapse
// either; one its node gave up (Close) is, at once.
func TestMissingLeaseKey(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	const ttl = 3 * time.Second
	ctx, nodes := startEventLog(t, Options{ClusterName: "missing", LeaseTTL: ttl})
	n1, n2 := nodes[0], nodes[1]
	require.Eventually(t, func() bool {
		n2.leases.mu.Lock()
		defer n2.leases.mu.Unlock()
		return n2.leases.inc != "" && n2.now().mono-n2.leases.incSince >= ttl
	}, 4*ttl, 20*time.Millisecond, "n2 has seen the bucket's incarnation for a TTL")
	lapsed, err := n2.lapsed(ctx, "n1")
	require.NoError(t, err)
	require.False(t, lapsed)

	// Deleted by someone else: n1 acts until its next renewal finds it.
	kv := n2.kv(func() jetstream.KeyValue { return n2.nodes })
	require.NoError(t, kv.Delete(ctx, "n1"))
	lapsed, err = n2.lapsed(ctx, "n1")
	require.NoError(t, err)
	assert.False(t, lapsed, "a key deleted by another than its node is no lapse")

	// The bucket loses everything at once, as when every replica restarts.
	require.Eventually(t, n1.Acting, 2*ttl, 10*time.Millisecond)
	require.NoError(t, n2.leaseStream().Purge(ctx))
	start := n2.now().mono
	lapsed, err = n2.lapsed(ctx, "n1")
	require.NoError(t, err)
	assert.False(t, lapsed, "a key missing from a bucket that lost its contents is no lapse yet")
	// Until a TTL has passed, or n1's key is back, n1 never reads as lapsed.
	for n2.now().mono-start < ttl-200*time.Millisecond {
		lapsed, err = n2.lapsed(ctx, "n1")
		require.NoError(t, err)
		if lapsed {
			t.Fatalf("n1 read as lapsed %s after the bucket lost its contents (TTL %s)", n2.now().mono-start, ttl)
		}
		if !sleepCtx(ctx, 50*time.Millisecond) {
			t.Fatal(ctx.Err())
		}
	}

	// Given up by its node: a lapse at once.
	require.Eventually(t, func() bool { l, err := n2.lapsed(ctx, "n3"); return err == nil && !l }, 2*ttl, 20*time.Millisecond)
	nodes[2].Close()
	lapsed, err = n2.lapsed(ctx, "n3")
	require.NoError(t, err)
	assert.True(t, lapsed, "a key its node gave up is a lapse")
}

// TestSuspendFences: a host suspended and resumed reads a wall clock that
// moved on while its monotonic clock did not: the node stops acting at
// once, and the watchdog gives its sessions up. Measured on the monotonic
// clock alone, it would act on for as long as it was suspended.
func TestSuspendFences(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	const ttl = 3 * time.Second
	clock := &testClock{base: time.Now()}
	_, nodes := startEventLog(t, Options{ClusterName: "suspend", LeaseTTL: ttl}, func(i int, o *Options) {
		if i == 0 {
			o.Clock = clock
		}
	})
	n1 := nodes[0]
	require.Eventually(t, n1.Acting, 10*time.Second, 10*time.Millisecond)
	lapses := make(chan struct{}, 4)
	n1.onLapsed(func() { signal(lapses) })
	ctx := n1.LeaseContext()

	clock.suspend(ttl) // as a node's clock reads after a suspend of a TTL
	assert.False(t, n1.Acting(), "not acting at once")
	select {
	case <-lapses:
	case <-time.After(time.Second):
		t.Fatal("the sessions were not given up")
	}
	select {
	case <-ctx.Done():
		assert.ErrorIs(t, context.Cause(ctx), errLeaseLapsed)
	default:
		t.Fatal("the handlers' context did not end")
	}
}

// TestGiveUpAtDeadline: when renewals fail (storage unreachable for the
// node), the node gives its sessions up and ends its handlers' context at
// its deadline — within a watchdog tick of it — not a margin later.
func TestGiveUpAtDeadline(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	const ttl = 3 * time.Second
	_, nodes := startEventLog(t, Options{ClusterName: "deadline", LeaseTTL: ttl})
	n1 := nodes[0]
	require.Eventually(t, n1.Acting, 10*time.Second, 10*time.Millisecond)
	ctx := n1.LeaseContext()
	n1.mu.Lock()
	n1.nodes = refusingLeases{n1.nodes}
	n1.mu.Unlock()
	d := n1.deadline()
	select {
	case <-ctx.Done():
	case <-time.After(2 * ttl):
		t.Fatal("the handlers' context did not end")
	}
	late := n1.now().mono - d.mono
	assert.Less(t, late, 2*fenceTick(ttl)+50*time.Millisecond, "ended within a tick of the deadline (%s after it)", late)
	assert.Less(t, late, leaseMargin(ttl), "well before the key may expire")
}

// TestRenewalRetriedAtOnce: a renewal that fails (the lease bucket
// electing a leader answers "no response from stream" at once) is tried
// again within a second, not at the next regular turn: three failures in
// a row leave the node acting, on its first lease run. Renewing only every
// TTL/4, the fourth try would come a whole TTL after the last success,
// past the deadline (TTL − margin), and the node would give its sessions up.
func TestRenewalRetriedAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	const ttl = 4 * time.Second
	_, nodes := startEventLog(t, Options{ClusterName: "retried", LeaseTTL: ttl})
	n1 := nodes[0]
	require.Eventually(t, n1.Acting, 10*time.Second, 10*time.Millisecond)
	run := n1.LeaseContext()
	failing := &electingLeases{KeyValue: n1.kv(func() jetstream.KeyValue { return n1.nodes }), fail: 3}
	n1.mu.Lock()
	n1.nodes = failing
	n1.mu.Unlock()
	failures := n1.renewFailures.Load()

	require.Eventually(t, func() bool { return n1.renewFailures.Load()-failures == 3 }, 2*ttl, 10*time.Millisecond, "three renewals failed")
	renewals := n1.renewals.Load()
	require.Eventually(t, func() bool { return n1.renewals.Load() > renewals }, 2*ttl, 10*time.Millisecond, "renewed after the failures")
	assert.NoError(t, run.Err(), "the lease run goes on: the node never gave its sessions up")
	assert.True(t, n1.Acting())
}

// electingLeases is a lease bucket whose next fail renewals are refused
// at once, as while its stream elects a leader.
type electingLeases struct {
	jetstream.KeyValue
	mu   sync.Mutex
	fail int
}

func (e *electingLeases) Update(ctx context.Context, key string, value []byte, rev uint64) (uint64, error) {
	e.mu.Lock()
	refuse := e.fail > 0
	e.fail--
	e.mu.Unlock()
	if refuse {
		return 0, jetstream.ErrNoStreamResponse
	}
	return e.KeyValue.Update(ctx, key, value, rev)
}

// refusingLeases is a lease bucket that takes no write: a node cut off
// from its storage.
type refusingLeases struct{ jetstream.KeyValue }

func (refusingLeases) Update(context.Context, string, []byte, uint64) (uint64, error) {
	return 0, context.DeadlineExceeded
}

func (refusingLeases) Create(context.Context, string, []byte, ...jetstream.KVCreateOpt) (uint64, error) {
	return 0, context.DeadlineExceeded
}

// testClock is a Clock whose wall reading a test moves on.
type testClock struct {
	base time.Time
	mu   sync.Mutex
	skew time.Duration
}

func (c *testClock) Now() (time.Duration, time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	return now.Sub(c.base), now.Add(c.skew)
}

func (c *testClock) suspend(d time.Duration) {
	c.mu.Lock()
	c.skew += d
	c.mu.Unlock()
}

// TestFenceOnAppends: an event a session logged that reaches the event
// log's writer after its node's deadline is not appended: the session may
// be another node's by now.
func TestFenceOnAppends(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	const ttl = 3 * time.Second
	clock := &testClock{base: time.Now()}
	ctx, nodes := startEventLog(t, Options{ClusterName: "appends", LeaseTTL: ttl, EventDelay: -1}, func(i int, o *Options) {
		if i == 0 {
			o.Clock = clock
		}
	})
	n1 := nodes[0]
	require.Eventually(t, n1.Acting, 10*time.Second, 10*time.Millisecond)
	writer, reader := &relay{node: n1}, &relay{node: nodes[2]}
	event := func(seq uint64) session.LoggedEvent {
		return session.LoggedEvent{Stream: "1", Seq: seq, Data: []byte(`{"n":` + strconv.FormatUint(seq, 10) + `}`)}
	}
	writer.LogEvent("n1.a", event(1))
	readBack(t, ctx, reader, "n1.a", 1)

	n1.mu.Lock()
	n1.nodes = refusingLeases{n1.nodes}
	n1.mu.Unlock()
	clock.suspend(ttl)
	require.False(t, n1.Acting())
	failures := n1.asyncFailures.Load()
	writer.LogEvent("n1.a", event(2))
	require.Eventually(t, func() bool { return n1.asyncFailures.Load() > failures }, 10*time.Second, 10*time.Millisecond, "the append is refused")
	got, err := reader.loadEvents(ctx, "n1.a", 0)
	require.NoError(t, err)
	assert.Len(t, got, 1, "nothing appended past the deadline")
}
