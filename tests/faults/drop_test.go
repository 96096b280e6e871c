package faults_test

import (
	"bytes"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Bounds of the drop tests.
const (
	// ackBound is how long the node holding a client's stream waits for
	// the owner to acknowledge a routed request (cluster/acks.go).
	ackBound = 2 * time.Second
	// dropSlack is what a request whose acknowledgement never comes may
	// take beyond ackBound to end: the holder looks every 100 ms and then
	// reads the owner's lease once (one KV get) before it ends the
	// request; the rest is room for three -race servers on two shared
	// cores.
	dropSlack = 2 * time.Second
	// slowSeconds is how long the test_slow calls of TestDropStreamEvent
	// run: 20 progress notifications, one each 100 ms, then "done".
	slowSeconds = 2
)

// TestDropRoutedRequest drops, on the route from n2 to n1, the one NATS
// message that carries a test_echo call of a session owned by n1 whose
// POST went to n2 (subject mcpx.<cluster>.node.n1.session); the routes
// stay up and n1 keeps its lease.
//
// What the client sees: the POST ends with a JSON-RPC error (-32603, "the
// session's node (n1) did not take the request in time; send it again")
// about two seconds after it was sent — n2 waited ackBound for n1's
// acknowledgement, found n1's lease alive, and ended the request — within
// ackBound + dropSlack (the time is logged). The next call, through the
// same node, is answered with its text. Nothing else is answered twice
// or goes missing (the history check).
func TestDropRoutedRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	c := startCluster(t, faultLease)
	h := &history{}
	cl := newClient(t, c, h)
	s := openSessions(t, cl, "s", 0, 1, callBound)[0]
	echo := func(text string) op {
		s.callWith(t.Context(), 1, "test_echo", map[string]any{"text": text}, callBound)
		return lastOp(h)
	}

	before := echo("before")
	require.True(t, before.ok(), "a call routed n2→n1 before the fault: %s", before)

	d := c.proxies.dropNext("n2", "n1", sessionSubject("n1"), 1, nil)
	lost := echo("lost")
	took := lost.end.Sub(lost.start)
	t.Logf("the dropped request: %s, after %s", lost, took.Round(time.Millisecond))
	require.Len(t, d.dropped(), 1, "the request was dropped on its way to n1")
	assert.Equal(t, failed, lost.outcome, "the request whose message was dropped")
	assert.Contains(t, lost.err, "JSON-RPC error -32603", "it ends with a JSON-RPC error")
	assert.Contains(t, lost.err, "did not take the request in time")
	assert.LessOrEqual(t, took, ackBound+dropSlack, "it ends within the acknowledgement bound + %s", dropSlack)
	assert.GreaterOrEqual(t, took, ackBound, "it ends because no acknowledgement came, not for another reason")

	after := echo("after")
	assert.True(t, after.ok(), "the next call is answered: %s", after)
	assert.Equal(t, "after", after.value)
	requireClean(t, h)
	assert.Zero(t, c.proxies.count().unparsed, "%s", c.proxies.count())
}

// TestDropRoutedRequestOwnerRestarts drops, on the route from an edge
// node to an owner, the message that carries a test_echo call of a
// session the owner has, whose POST went to the edge — as NATS drops one
// that reaches a node just as it stops listening — then kills the owner
// and starts it again at once (same ID, data directory and route
// address), before the edge's wait for the acknowledgement ends: the
// owner's next run answers the edge's probe. Neither leads the leases'
// storage (whose election, were the owner its leader, could outlast the
// survivors' leases: TestKillStorageLeader's case, not this one).
//
// What the client sees: the call is answered with its text. The run that
// answers the probe says how long it has been up: less than the time
// since the request was sent, so the run the request was sent to is gone
// without a word of it, and the request is delivered again, to the new
// run (cluster/acks.go, startedAfter). Without that reading, the call
// ends "the session's node (n1) did not take the request in time" — an
// owner that answers a probe looks like one that lost the request
// between the nodes, or hangs. Nothing is answered twice or goes missing
// (the history check).
func TestDropRoutedRequestOwnerRestarts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster and restarts a node")
	}
	c := startCluster(t, faultLease)
	leader, ok := leasesLeader(t.Context(), c.nodes)
	require.True(t, ok, "a node reports that it leads the leases' storage")
	owner, edge := (leader+1)%3, (leader+2)%3
	o, e := c.nodes[owner], c.nodes[edge]
	t.Logf("owner %s, edge %s (%s leads the leases' storage)", o.id, e.id, c.nodes[leader].id)
	h := &history{}
	cl := newClient(t, c, h)
	s := openSessions(t, cl, "s", owner, 1, callBound)[0]
	s.callWith(t.Context(), edge, "test_echo", map[string]any{"text": "before"}, callBound)
	require.True(t, lastOp(h).ok(), "a call routed %s→%s before the fault: %s", e.id, o.id, lastOp(h))

	d := c.proxies.dropNext(e.id, o.id, sessionSubject(o.id), 1, nil)
	var call sync.WaitGroup
	call.Go(func() {
		s.callWith(t.Context(), edge, "test_echo", map[string]any{"text": "lost"}, callBound)
	})
	t.Cleanup(call.Wait)
	_, dropped := waitUntil(t.Context(), callBound, func() bool { return len(d.dropped()) == 1 })
	require.True(t, dropped, "the request was dropped on its way to %s", o.id)
	o.kill()
	o.restart()
	up := time.Since(d.dropped()[0].at)
	t.Logf("%s's next run listens %s after the request was dropped (%s probes it %s after it sent it)", o.id, up.Round(time.Millisecond), e.id, ackBound)
	call.Wait()

	lost := lastOp(h)
	t.Logf("the dropped request: %s, after %s", lost, lost.end.Sub(lost.start).Round(time.Millisecond))
	require.True(t, lost.ok(), "the request is delivered again to n1's next run and answered: %s", lost)
	assert.Equal(t, "lost", lost.value)
	c.waitReady()
	s.callWith(t.Context(), edge, "test_echo", map[string]any{"text": "after"}, callBound)
	assert.True(t, lastOp(h).ok(), "the next call is answered: %s", lastOp(h))
	requireClean(t, h)
}

// TestDropStreamEvent drops, on the route from n1 to n2, one stream event
// of a test_slow call (2 s, progress every 100 ms) of a session owned by
// n1 whose POST went to n2 (subject mcpx.<cluster>.node.n2.stream): first
// a progress notification, then, on the next call, the final frame — the
// response.
//
// What the client sees, a progress notification lost: 19 of the 20
// progress notifications, then the result "done", on time; the request
// was acknowledged by the next event.
//
// The final frame lost: the owner has answered and forgotten the
// request; the holder, n2, has had it acknowledged by its first progress
// notification and waits on; the client has its progress and then only
// keep-alive comments, until the owner's digests of the requests it still
// runs for n2 (every 2 s, after the frames it sent there) leave it out
// twice in a row: then the request ends with a JSON-RPC error (-32603,
// "the answer to this request was lost between nodes"), 4 to 6 s after
// its answer was due.
//
// Either way the next call is answered.
func TestDropStreamEvent(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	c := startCluster(t, faultLease)
	h := &history{}
	cl := newClient(t, c, h)
	s := openSessions(t, cl, "s", 0, 1, callBound)[0]
	slow := func(bound time.Duration) op {
		s.callWith(t.Context(), 1, "test_slow", map[string]any{"seconds": slowSeconds}, bound)
		return lastOp(h)
	}
	next := func() {
		s.callWith(t.Context(), 1, "test_echo", map[string]any{"text": "next"}, callBound)
		o := lastOp(h)
		assert.True(t, o.ok(), "the next call is answered: %s", o)
	}

	t.Run("a progress notification", func(t *testing.T) {
		d := c.proxies.dropNext("n1", "n2", streamSubject("n2"), 1, isProgress)
		o := slow(callBound)
		t.Logf("the call: %s after %s, %d progress notifications", o, o.end.Sub(o.start).Round(time.Millisecond), o.progress)
		require.Len(t, d.dropped(), 1, "a progress notification was dropped on its way to n2")
		assert.True(t, o.ok(), "the call is answered")
		assert.Equal(t, "done", o.value)
		assert.Equal(t, slowSeconds*10-1, o.progress, "every progress notification but the one dropped")
		next()
	})

	t.Run("the final frame", func(t *testing.T) {
		// The owner's digests of what it still runs come every 2 s; two
		// in a row without the request end it (docs/cluster.md, "Every
		// routed request ends"): 4 to 6 s after the answer was due.
		bound := slowSeconds*time.Second + 8*time.Second
		d := c.proxies.dropNext("n1", "n2", streamSubject("n2"), 1, isResult)
		o := slow(bound)
		t.Logf("the call: %s after %s, %d progress notifications", o, o.end.Sub(o.start).Round(time.Millisecond), o.progress)
		require.Len(t, d.dropped(), 1, "the response was dropped on its way to n2")
		assert.NotEqual(t, unanswered, o.outcome, "the call ends within %s although its answer was lost", bound)
		next()
	})

	requireClean(t, h)
	assert.Zero(t, c.proxies.count().unparsed, "%s", c.proxies.count())
}

// isProgress picks a stream event that carries a progress notification.
func isProgress(payload []byte) bool {
	return bytes.Contains(payload, []byte(`"notifications/progress"`))
}

// isResult picks a stream event that carries a response with a result.
func isResult(payload []byte) bool { return bytes.Contains(payload, []byte(`"result"`)) }

// lastOp is the last request of a history (of a test whose one client
// calls one at a time).
func lastOp(h *history) op {
	ops := h.snapshot()
	return ops[len(ops)-1]
}

// TestDropOwnerToEdge cuts, on the route from n1 to n2, everything n1
// sends to the streams n2 holds (subject mcpx.<cluster>.node.n2.stream),
// once a long call of a session owned by n1, whose POST went to n2, has
// been acknowledged by its first progress notification: its frames, its
// answer and n1's digests of what it runs for n2 are lost, while n1 keeps
// its lease and the link from n2 to n1 works.
//
// What the client sees: the first progress notification, then only
// keep-alive comments, until n2, having heard no digest from n1 for 6 s,
// ends the request with a JSON-RPC error (-32603, "the session's node (n1)
// has not been heard from …; send the request again"), 6 to 8 s after the
// cut — not at its client's bound. Once the cut ends, the next call is
// answered.
func TestDropOwnerToEdge(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	c := startCluster(t, faultLease)
	h := &history{}
	cl := newClient(t, c, h)
	s := openSessions(t, cl, "s", 0, 1, callBound)[0]

	var cutting atomic.Bool
	var passed atomic.Int64
	cutting.Store(true)
	d := c.proxies.dropNext("n1", "n2", streamSubject("n2"), 1<<30, func(payload []byte) bool {
		if !cutting.Load() {
			return false
		}
		// The first progress notification passes: it acknowledges the
		// request. Everything after it is lost.
		return !(isProgress(payload) && passed.Add(1) == 1)
	})
	s.callWith(t.Context(), 1, "test_slow", map[string]any{"seconds": 20}, callBound)
	o := lastOp(h)
	cutting.Store(false)
	took := o.end.Sub(o.start)
	t.Logf("the call: %s after %s, %d progress notifications; %d messages dropped", o, took.Round(time.Millisecond), o.progress, len(d.dropped()))
	assert.Equal(t, failed, o.outcome, "the call ends with an error")
	assert.Contains(t, o.err, "has not been heard from")
	assert.Less(t, took, 12*time.Second, "it ends once the owner has been silent for 6 s, not at its bound")
	assert.Equal(t, 1, o.progress)

	s.callWith(t.Context(), 1, "test_echo", map[string]any{"text": "next"}, callBound)
	next := lastOp(h)
	assert.True(t, next.ok(), "the next call is answered: %s", next)
	requireClean(t, h)
}
