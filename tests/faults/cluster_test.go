package faults_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/internal/loopback"
)

// cluster is three `mcp-actors serve` processes (n1, n2, n3) whose routes
// all cross the route proxies, each with its own data dir, the cluster's
// name and secret and a short lease.
type cluster struct {
	t       *testing.T
	nodes   []*node
	proxies *routeProxies
	lease   time.Duration
	extra   []string // every node's serve arguments besides the cluster's
}

// clusterSecret is every node's --cluster-secret.
const clusterSecret = "faults-secret"

// clusterName is every node's --cluster-name: the subjects the nodes use
// on NATS are named under it (sessionSubject, streamSubject).
const clusterName = "faults"

// sessionSubject is the subject of the actor messages for node's
// sessions (cluster/subjects.go): what another node routes to it.
func sessionSubject(node string) string { return "mcpx." + clusterName + ".node." + node + ".session" }

// streamSubject is the subject of the stream events for the streams node
// holds (cluster/subjects.go): what an owner sends the node that holds
// its client's stream.
func streamSubject(node string) string { return "mcpx." + clusterName + ".node." + node + ".stream" }

// startCluster starts the proxies and the three nodes, and waits until
// every node's /readyz says ready. At the end of t every node gets SIGTERM
// at once, then the proxies stop.
func startCluster(t *testing.T, lease time.Duration) *cluster {
	t.Helper()
	return startClusterOf(t, 3, lease)
}

// startClusterOf is startCluster with n nodes (n1 … nN), each with the
// serve arguments extra besides the cluster's.
func startClusterOf(t *testing.T, n int, lease time.Duration, extra ...string) *cluster {
	t.Helper()
	var ids []string
	for i := 1; i <= n; i++ {
		ids = append(ids, fmt.Sprintf("n%d", i))
	}
	return startNamedCluster(t, ids, lease, extra...)
}

// startNamedCluster is startClusterOf with the nodes named ids.
func startNamedCluster(t *testing.T, ids []string, lease time.Duration, extra ...string) *cluster {
	t.Helper()
	listen := map[string]string{}
	for i, port := range freePorts(t, len(ids)) {
		listen[ids[i]] = fmt.Sprintf("127.0.0.1:%d", port)
	}
	c := &cluster{t: t, lease: lease, proxies: startRouteProxies(t, listen), extra: extra}
	var routes []string
	for _, id := range ids {
		routes = append(routes, "nats-route://"+c.proxies.addr(id))
	}
	for _, id := range ids {
		c.nodes = append(c.nodes, startNode(t, id, c.nodeArgs(id, listen[id], routes)...))
	}
	t.Cleanup(c.stopAll) // before each node's own cleanup, after the test's
	c.waitReady()
	return c
}

// nodeArgs is node id's serve arguments: its route port listen, routes to
// the nodes routes names, and the cluster's.
func (c *cluster) nodeArgs(id, listen string, routes []string) []string {
	return append([]string{
		"--node-id", id, "--data-dir", c.t.TempDir(),
		"--cluster-listen", listen, "--cluster-advertise", c.proxies.addr(id),
		"--routes", strings.Join(routes, ","), "--cluster-name", clusterName, "--cluster-secret", clusterSecret,
		"--lease-ttl", c.lease.String()}, c.extra...)
}

// addNode starts a new node, id, behind a proxy of its own, with routes to
// the running nodes and itself (as an operator adds a node: the others'
// --routes stay as they are, and NATS tells them of it), waits until it is
// ready and returns it. A client made before sees it only once told
// (client.nodes).
func (c *cluster) addNode(id string) *node {
	c.t.Helper()
	listen := fmt.Sprintf("127.0.0.1:%d", freePorts(c.t, 1)[0])
	c.proxies.add(c.t, id, listen)
	var routes []string
	for _, n := range c.nodes {
		if !n.killed.Load() {
			routes = append(routes, "nats-route://"+c.proxies.addr(n.id))
		}
	}
	routes = append(routes, "nats-route://"+c.proxies.addr(id))
	n := startNode(c.t, id, c.nodeArgs(id, listen, routes)...)
	c.t.Cleanup(c.stopAll) // every node at once, before n's own cleanup
	c.nodes = append(c.nodes, n)
	n.waitReady()
	return n
}

// waitReady waits until every running node's /readyz answers 200.
func (c *cluster) waitReady() {
	c.t.Helper()
	for _, n := range c.nodes {
		n.waitReady()
	}
}

// stopAll stops the cluster as an operator would: SIGTERM to every node
// still running, all at once (one at a time, the last node left has no
// JetStream quorum and its shutdown waits for a lease renewal that cannot
// succeed); each must exit with status 0 within stopTimeout.
func (c *cluster) stopAll() {
	var running []*node
	for _, n := range c.nodes {
		if !n.killed.Load() && n.signalStop() {
			running = append(running, n)
		}
	}
	deadline := time.Now().Add(stopTimeout)
	for _, n := range running {
		n.awaitExit(deadline)
	}
}

// byID returns the node with ID id.
func (c *cluster) byID(id string) *node {
	for _, n := range c.nodes {
		if n.id == id {
			return n
		}
	}
	c.t.Fatalf("no node %s", id)
	return nil
}

// takeovers returns the sum of the takeovers the nodes but except report
// (nodes that do not answer count nothing).
func (c *cluster) takeovers(ctx context.Context, except string) float64 {
	var sum float64
	for _, n := range c.nodes {
		if n.id == except {
			continue
		}
		if v, err := n.metric(ctx, takeoversMetric); err == nil {
			sum += v
		}
	}
	return sum
}

// freePorts returns n distinct loopback ports free right now, outside the
// ephemeral range (another test's connection cannot take one meanwhile, or
// while a node restarts on it).
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	ports, err := loopback.Ports(n)
	require.NoError(t, err)
	return ports
}
