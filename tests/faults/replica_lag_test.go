package faults_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestReplicaLagReported pauses n3 (SIGSTOP) while clients write sessions
// of n1 and n2 through n1 and n2, reads mcp_cluster_store_replica_lag{store="sessions"} on
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
	// Writes through n1 and n2 only: a call through the paused n3 would
	// hold its session's client for the whole pause.
	var loops []loop
	for k, s := range sessions {
		loops = append(loops, loop{s: s, nodes: []int{k % 2, (k + 1) % 2}, bound: callBound, tool: counterTool})
	}
	w := startWorkload(t, loops...)
	_, err := n1.metric(t.Context(), lag)
	require.NoError(t, err, "the gauge is served")

	// Behind means more than the writes in flight at any moment (a
	// replica of a cluster under writes is often one or two behind).
	const behind, current = 20, 2
	var v float64
	n3.pause()
	took, ok := waitUntil(t.Context(), 30*time.Second, func() bool {
		v, err = n1.metric(t.Context(), lag)
		return err == nil && v > behind
	})
	n3.resume()
	require.True(t, ok, "a replica behind is reported while n3 is paused (last read %v)", v)
	t.Logf("a replica %v operations behind reported %s after the pause", v, took.Round(time.Millisecond))

	took, ok = waitUntil(t.Context(), 60*time.Second, func() bool {
		v, err = n1.metric(t.Context(), lag)
		return err == nil && v <= current
	})
	require.True(t, ok, "no replica behind once n3 has caught up (last read %v)", v)
	t.Logf("caught up, as reported (%v), %s after the resume", v, took.Round(time.Millisecond))
	w.stop()
	requireClean(t, h)
}
