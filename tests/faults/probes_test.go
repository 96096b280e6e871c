package faults_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProbes: the three probes say three things. Liveness (/healthz) is
// 200 whenever the process serves HTTP, whatever the cluster's state (a
// restart would cure none of it). Startup (/startupz) is 503 with what
// the node waits for until it has been ready once, then 200 for good.
// Readiness (/readyz) is 200 while the node can serve: a node alone of
// three waits; a node whose two peers are killed has no route to another
// node and is not ready (it opens and takes over no session) — while its
// startup probe stays 200 and its liveness probe 200. (A node whose
// renewals fail while it keeps its routes stays ready until its deadline:
// TestKillStorageLeader.)
func TestProbes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster one node at a time and kills two")
	}
	ids := []string{"n1", "n2", "n3"}
	listen := map[string]string{}
	for i, port := range freePorts(t, len(ids)) {
		listen[ids[i]] = fmt.Sprintf("127.0.0.1:%d", port)
	}
	c := &cluster{t: t, lease: faultLease, proxies: startRouteProxies(t, listen)}
	var routes []string
	for _, id := range ids {
		routes = append(routes, "nats-route://"+c.proxies.addr(id))
	}
	t.Cleanup(c.stopAll)
	start := func(id string) *node {
		n := startNode(t, id, c.nodeArgs(id, listen[id], routes)...)
		c.nodes = append(c.nodes, n)
		return n
	}
	probe := func(n *node, path string) (int, string) {
		code, body, err := n.get(t.Context(), path)
		if err != nil {
			return 0, err.Error()
		}
		return code, strings.TrimSpace(body)
	}

	n1 := start("n1")
	_, ok := waitUntil(t.Context(), 30*time.Second, func() bool {
		code, body := probe(n1, "/startupz")
		return code == http.StatusServiceUnavailable && strings.Contains(body, "waiting for 1 more node to join")
	})
	code, body := probe(n1, "/startupz")
	require.True(t, ok, "alone, /startupz says what n1 waits for: %d %s", code, body)
	code, body = probe(n1, "/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, code, "alone, not ready: %s", body)
	code, _ = probe(n1, "/healthz")
	assert.Equal(t, http.StatusOK, code, "alone, alive")

	start("n2")
	start("n3")
	c.waitReady()
	for _, n := range c.nodes {
		code, body := probe(n, "/startupz")
		assert.Equal(t, http.StatusOK, code, "%s started: %s", n.id, body)
	}

	c.nodes[1].kill()
	c.nodes[2].kill()
	var states []string
	took, ok := waitUntil(t.Context(), 3*faultLease, func() bool {
		code, body := probe(n1, "/readyz")
		if len(states) == 0 || states[len(states)-1] != fmt.Sprintf("%d %s", code, body) {
			states = append(states, fmt.Sprintf("%d %s", code, body))
		}
		return code == http.StatusServiceUnavailable
	})
	require.True(t, ok, "n1 alone, cut off from every peer, is not ready: %v", states)
	t.Logf("n1 not ready %s after its peers were killed: %v", took.Round(100*time.Millisecond), states)
	for _, path := range []string{"/startupz", "/healthz"} {
		code, body := probe(n1, path)
		assert.Equal(t, http.StatusOK, code, "%s stays 200 when the node is not ready: %s", path, body)
	}
}
