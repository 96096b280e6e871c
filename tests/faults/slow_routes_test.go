package faults_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSlowRoutes delays every byte to and from n1, the owner of the
// clients' sessions, on its routes — first by a tenth of its lease
// margin, then by about the margin (a lease renewal's answer then comes a
// margin and more after it was sent) — while clients read and write the
// sessions through all three nodes, then black-holes n1's route
// connections (TCP open, nothing forwarded: the TCP-level black hole,
// beside the network one of the namespace tests) for a lease and more,
// and heals.
//
// What the client sees: while the routes are slow, every call is answered
// (later, through n2 and n3) or fails, never a value out of order; a
// renewal answered late still counts from when it was sent, so n1 never
// acts past its key. While the routes are held, n1 stops acting at its
// deadline and another node takes its sessions over. Every call ends
// within its bound, and each session's values, reads included, stay
// linearizable.
func TestSlowRoutes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster and slows its routes")
	}
	c := startCluster(t, faultLease)
	h := &history{}
	cl := newClient(t, c, h)
	sessions := openSessions(t, cl, "s", 0, counterSessions, callBound)
	w := startWorkload(t, sessionLoops(c, sessions)...)
	start := time.Now()
	_, ok := waitUntil(t.Context(), 30*time.Second, func() bool { return everyAnswered(h, sessions, start, 3) })
	require.True(t, ok, "the sessions count before the fault: %s", summary(h.snapshot()))

	margin := faultLease / 5
	for _, d := range []time.Duration{margin / 10, margin} {
		c.proxies.delay("n1", d)
		hold(t, 2*faultLease)
	}
	c.proxies.blackhole("n1")
	hold(t, faultLease+failoverSlack)
	c.proxies.heal()
	healedAt := time.Now()
	hold(t, runOn)
	w.stop()
	for _, s := range sessions {
		assert.Positive(t, answeredSince(h, healedAt)[s.id], "session %s is served after the heal", s.name)
	}
	requireClean(t, h)
}
