package faults_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBlackHoleOwner cuts n1, the owner of the clients' sessions, from its
// peers — its cluster link down: what it sends and what is sent to it
// vanish, nothing is reset — for longer than its lease plus the failover
// bound, while the clients go on calling test_counter and
// test_counter_get round-robin through all three nodes, n1 included (its
// client link stays up: an owner cut off from its quorum while its
// clients keep calling it); a probe session of n1's is called through n2
// and n3 only. Then the link comes back and the clients run on.
//
// What the client sees: calls through n1 are answered until its lease may
// have lapsed, then end with an error (n1 cannot renew it, and must stop
// acting for its sessions); calls through n2 and n3 wait or fail until
// one of them takes the sessions over, within the lease plus a few
// seconds of the cut — the probe is served there within that bound (the
// failover time is logged); once the link is back, every session is
// served again. Every call ends within its bound, and each session's
// values never repeat or step back: at no time do two nodes answer for
// one session.
func TestBlackHoleOwner(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster in network namespaces and cuts a link")
	}
	r := blackHole(t, faultLease+failoverSlack+2*time.Second)
	bound := faultLease + failoverSlack
	failover, served := firstServedElsewhere(r.h, r.probe, r.cutAt, r.healedAt)
	if served {
		t.Logf("failover: the probe session was served by n2 or n3 %s after the cut (lease %s)", failover.Round(time.Millisecond), faultLease)
		assert.LessOrEqual(t, failover, bound, "failover within the lease + %s", failoverSlack)
	} else {
		t.Errorf("the probe session was not served by n2 or n3 during the %s cut (bound: lease %s + %s)", r.healedAt.Sub(r.cutAt).Round(time.Millisecond), faultLease, failoverSlack)
	}
}

// TestBlackHoleHealAtLease is TestBlackHoleOwner with the link back as
// soon as another node has taken a session over and the lease has passed,
// a second past it at the soonest: the sharpest moment, when n1 may not
// have noticed its lapse yet as its peers come back (TestPartitionCut with
// a black hole instead of closed routes).
//
// What the client sees is what TestBlackHoleOwner says, but for the
// probe, which the heal may beat: n1 never answers for a session from the
// lease it lost, and after the heal one node answers for each session.
func TestBlackHoleHealAtLease(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster in network namespaces and cuts a link")
	}
	blackHole(t, faultLease+time.Second)
}

// blackHoleRun is what blackHole did, for its test's own checks.
type blackHoleRun struct {
	h               *history
	probe           *session // a session of n1's called through n2 and n3 only
	cutAt, healedAt time.Time
}

// blackHole runs a black-hole test: sessions owned by n1 called through
// every node, and a probe session of n1's called through n2 and n3; n1's
// cluster link down until another node has taken a session over (the
// failover bound at most) and for cut at least; healed; the clients run
// on. Every session must be served after the heal, and the history must
// be clean.
func blackHole(t *testing.T, cut time.Duration) blackHoleRun {
	c := startNetCluster(t, faultLease)
	h := &history{}
	cl := newClient(t, c.cluster, h)
	sessions := openSessions(t, cl, "s", 0, counterSessions, callBound)
	probe := openSessions(t, cl, "probe", 0, 1, callBound)[0]
	all := append(slices.Clone(sessions), probe)
	loops := sessionLoops(c.cluster, sessions)
	for i := range loops {
		loops[i].tools, loops[i].toolArgs = holdMix, holdArgs
	}
	w := startWorkload(t, append(loops, loop{s: probe, nodes: []int{1, 2}, bound: callBound})...)

	start := time.Now()
	_, ok := waitUntil(t.Context(), 30*time.Second, func() bool { return everyAnswered(h, all, start, 3) })
	require.True(t, ok, "the sessions count before the cut: %s", summary(h.snapshot()))

	before := c.takeovers(t.Context(), "n1")
	c.isolate("n1")
	cutAt := time.Now()
	bound := faultLease + failoverSlack
	took, moved := waitUntil(t.Context(), bound, func() bool { return c.takeovers(t.Context(), "n1") > before })
	if moved {
		t.Logf("n2 or n3 took a session over %s after the cut (lease %s)", took.Round(time.Millisecond), faultLease)
	} else {
		t.Errorf("no session of n1 was taken over within %s of the cut (lease %s + %s)", bound, faultLease, failoverSlack)
	}
	hold(t, time.Until(cutAt.Add(cut)))
	c.heal()
	healedAt := time.Now()
	t.Logf("healed after %s", healedAt.Sub(cutAt).Round(time.Millisecond))

	hold(t, runOn)
	w.stop()
	t.Logf("after the heal: %s", summary(opsSince(h, healedAt)))
	if d, ok := firstAnswerVia(h, "n1", healedAt); ok {
		t.Logf("n1 answered again %s after the heal", d.Round(time.Millisecond))
	} else {
		t.Logf("n1 answered nothing in the %s after the heal", runOn)
	}
	for _, s := range all {
		assert.Positive(t, answeredSince(h, healedAt)[s.id], "session %s is served again after the heal", s.name)
	}
	requireClean(t, h, loggedRuns(t, c.nodes...)...)
	return blackHoleRun{h: h, probe: probe, cutAt: cutAt, healedAt: healedAt}
}

// holdMix is counterMix with test_hold (holdArgs: 0.5 s) now and then: a
// run on the cut-off owner is cancelled at its deadline, before another
// node may start one for the same session (the check reads the runs from
// the answers and from the nodes' logs).
var (
	holdMix  = append(slices.Clone(counterMix), holdTool)
	holdArgs = map[string]map[string]any{holdTool: {"seconds": 0.5}}
)

// opsSince returns the requests of h that started at or after from.
func opsSince(h *history, from time.Time) []op {
	var out []op
	for _, o := range h.snapshot() {
		if !o.start.Before(from) {
			out = append(out, o)
		}
	}
	return out
}

// firstAnswerVia returns how long after from the first call sent through
// node that started at or after from was answered.
func firstAnswerVia(h *history, node string, from time.Time) (time.Duration, bool) {
	var first time.Time
	for _, o := range opsSince(h, from) {
		if o.node == node && o.ok() && (first.IsZero() || o.end.Before(first)) {
			first = o.end
		}
	}
	return first.Sub(from), !first.IsZero()
}
