package faults_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestReplicaLagReported pauses n3 (SIGSTOP) while clients write sessions
// of n1 and n2, reads mcp_cluster_store_replica_lag{store="sessions"} on
// n1 until it says a replica is behind, resumes n3 and reads it until it
// says none is.
//
// What the operator sees: the gauge (read from the store's leader, at
// most every 10 s) rises while a replica cannot keep up and falls back to
// 0 once it has caught up; McpActorsReplicaLagging pages when it stays up
// (deploy/prometheus). The clients' calls go on throughout.
func TestReplicaLagReported(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster and pauses a node")
	}
	const lag = `mcp_cluster_store_replica_lag{store="sessions"}`
	c := startCluster(t, faultLease)
	n1, n3 := c.nodes[0], c.nodes[2]
	h := &history{}
	cl := newClient(t, c, h)
	sessions := append(openSessions(t, cl, "a", 0, 2, callBound), openSessions(t, cl, "b", 1, 2, callBound)...)
	w := startWorkload(t, sessionLoops(c, sessions)...)
	v, err := n1.metric(t.Context(), lag)
	require.NoError(t, err, "the gauge is served")
	require.Zero(t, v, "no replica behind before the pause")

	n3.pause()
	behind, ok := waitUntil(t.Context(), 30*time.Second, func() bool {
		v, err := n1.metric(t.Context(), lag)
		return err == nil && v > 0
	})
	n3.resume()
	require.True(t, ok, "a replica behind is reported while n3 is paused")
	t.Logf("a replica behind reported %s after the pause", behind.Round(time.Millisecond))

	caught, ok := waitUntil(t.Context(), 60*time.Second, func() bool {
		v, err := n1.metric(t.Context(), lag)
		return err == nil && v == 0
	})
	require.True(t, ok, "no replica behind once n3 has caught up")
	t.Logf("caught up, as reported, %s after the resume", caught.Round(time.Millisecond))
	w.stop()
	requireClean(t, h)
}
