package faults_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLeasesLostWhileOwnerRuns: four nodes, three replicas (more nodes
// than replicas). The owner of the clients' sessions is the node that
// holds no replica of the leases (the admin status says which); it is cut
// from its routes (closed, refused) while the three others are killed and
// started again at once: every replica of the leases restarts (a bucket
// kept in memory, as clusters made before 0.2 keep it, loses every key
// then; on disk the keys come back, the owner's expiring a TTL after its
// last renewal), and the restarted nodes have never seen the bucket's
// contents. The owner cannot renew its lease, but it
// still holds its sessions and its clients still call it; the restarted
// nodes find it silent and look at its lease.
//
// What the client sees: calls through the owner are answered until its deadline
// (a fifth of a lease before its key could have expired, counted from its
// last renewal before the cut), then end with errors. A restarted node
// that finds its key missing finds it so in a bucket whose contents it has
// not seen for a lease, so it waits a lease before it takes the sessions
// over — after the owner stopped acting. (Seen here: the restarted nodes
// do not become ready before the cut ends — their storage waits for the
// fourth server — so nobody acts for the sessions until the heal, and
// the calls through them fail with 503 meanwhile.) After the heal every
// session is served again. At no time do two nodes answer for a session:
// each session's values, reads included, stay linearizable.
func TestLeasesLostWhileOwnerRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a four-node cluster, cuts a node and restarts the others")
	}
	c := startClusterOf(t, 4, leaderLease, "--replicas", "3", "--admin-token-file", adminTokenFile(t))
	// The owner is the node that holds no replica of the leases: the
	// others hold all three.
	held := leaseReplicas(t, c.nodes[0])
	require.Len(t, held, 3, "the leases' replicas")
	o := slices.IndexFunc(c.nodes, func(n *node) bool { return !slices.Contains(held, n.id) })
	require.GreaterOrEqual(t, o, 0)
	owner := c.nodes[o]
	var others []int
	for i := range c.nodes {
		if i != o {
			others = append(others, i)
		}
	}
	t.Logf("the leases are on %v; %s owns the sessions", held, owner.id)

	h := &history{}
	cl := newClient(t, c, h)
	sessions := openSessions(t, cl, "s", o, counterSessions, callBound)
	var loops []loop
	for k, s := range sessions {
		// Through the owner, and through another. A call through a
		// restarted node just before the heal can wait out a lookup that
		// began during the cut (up to a TTL and a half for the owner's
		// lease, then its retries): seen to take just over 30 s under
		// -race on two loaded cores, so each call gets three leases.
		loops = append(loops, loop{s: s, nodes: []int{o, others[k%3]}, bound: 3 * leaderLease})
	}
	w := startWorkload(t, loops...)
	start := time.Now()
	_, ok := waitUntil(t.Context(), 30*time.Second, func() bool { return everyAnswered(h, sessions, start, 3) })
	require.True(t, ok, "the sessions count before the fault: %s", summary(h.snapshot()))

	c.proxies.cut(owner.id)
	faultAt := time.Now()
	for _, i := range others {
		c.nodes[i].kill()
	}
	for _, i := range others {
		c.nodes[i].restart()
	}
	t.Logf("%s cut off; the others restarted, the leases with them", owner.id)
	took, moved := waitUntil(t.Context(), leaderLease+failoverSlack, func() bool { return c.takeovers(t.Context(), owner.id) > 0 })
	if moved {
		t.Logf("a restarted node took a session over %s after the fault (lease %s)", took.Round(time.Millisecond), leaderLease)
	}
	hold(t, time.Until(faultAt.Add(leaderLease+failoverSlack)))
	c.proxies.heal()
	healedAt := time.Now()
	t.Logf("healed after %s", healedAt.Sub(faultAt).Round(time.Millisecond))
	c.waitReady()
	t.Logf("every node ready %s after the heal", time.Since(healedAt).Round(time.Millisecond))
	// Every session is served again: a call that was waiting on a lookup
	// begun during the cut may take its bound first.
	_, served := waitUntil(t.Context(), callBound+failoverSlack, func() bool { return everyAnswered(h, sessions, healedAt, 1) })
	w.stop()
	if !moved {
		t.Logf("no session was taken over during the cut")
	}
	if served {
		t.Logf("every session served again %s after the heal", time.Since(healedAt).Round(time.Millisecond))
	}
	for _, s := range sessions {
		assert.Positive(t, answeredSince(h, healedAt)[s.id], "session %s is served after the heal", s.name)
	}
	requireClean(t, h)
}

// adminToken is the admin path's token of the nodes that serve it.
const adminToken = "faults-admin-token-0123456789"

// leaseReplicas returns the nodes that hold a replica of the leases, as n
// sees them (mcp-actors admin status: GET /admin/cluster).
func leaseReplicas(t *testing.T, n *node) []string {
	t.Helper()
	reps := storeReplicas(t, n)["leases"]
	require.NotEmpty(t, reps, "no leases store in the admin status")
	var out []string
	for _, r := range reps {
		out = append(out, r.node)
	}
	return out
}
