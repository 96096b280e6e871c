package faults_test

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// netCluster is a cluster whose three nodes each run in a network
// namespace of their own (network): routes flow over the cluster links,
// the test's clients reach each node's HTTP listener over its client link,
// and a fault takes links down — packets dropped, no connection reset.
//
//	clients (root namespace) ──client links──▶ n1 n2 n3 ◀──cluster links, one bridge──▶ each other
//
// No proxy stands between the nodes: each listens on its cluster address
// and dials the others' (--routes). The cluster's methods (byID,
// takeovers, waitReady, stopAll) apply, and newClient takes its cluster.
type netCluster struct {
	*cluster
	net *network
}

// routePort is every node's route port, on its cluster link.
const routePort = "6222"

// startNetCluster makes the network, starts the three nodes in it, and
// waits until every node's /readyz says ready. At the end of t the links
// come up first (a node cut off would wait for its quorum to shut down),
// then every node gets SIGTERM at once, then the network is removed.
func startNetCluster(t *testing.T, lease time.Duration) *netCluster {
	t.Helper()
	ids := []string{"n1", "n2", "n3"}
	nw := newNetwork(t, ids)
	c := &netCluster{cluster: &cluster{t: t, lease: lease}, net: nw}
	var routes []string
	for _, id := range ids {
		routes = append(routes, "nats-route://"+nw.clusterAddr(id)+":"+routePort)
	}
	for _, id := range ids {
		c.nodes = append(c.nodes, startNodeIn(t, nw.namespace(id), id,
			"--listen", nw.clientAddr(id)+":0", "--allowed-hosts", "*",
			"--node-id", id, "--data-dir", t.TempDir(),
			"--cluster-listen", nw.clusterAddr(id)+":"+routePort,
			"--routes", strings.Join(routes, ","), "--cluster-name", clusterName, "--cluster-secret", clusterSecret,
			"--lease-ttl", lease.String()))
	}
	t.Cleanup(c.stopAll) // before each node's own cleanup and the network's
	t.Cleanup(nw.heal)   // before stopAll
	c.waitReady()
	return c
}

// startNodeIn is startNode for a node in network namespace ns: `ip netns
// exec` runs the binary in it (and execs it: the process is the server's,
// for kill and pause).
func startNodeIn(t *testing.T, ns, id string, args ...string) *node {
	t.Helper()
	n := &node{t: t, id: id, args: args, wrap: []string{"ip", "netns", "exec", ns}}
	n.start()
	t.Cleanup(n.stop)
	return n
}

// isolate takes node id's cluster link down: it is cut from its peers
// while its clients still reach it.
func (c *netCluster) isolate(id string) { c.net.isolate(id) }

// blackhole takes both of node id's links down: nothing reaches it.
func (c *netCluster) blackhole(id string) { c.net.blackhole(id) }

// heal brings every link up.
func (c *netCluster) heal() { c.net.heal() }

// postMortem records what a stuck cluster looks like, for a failure's
// report: each namespace's links, addresses and sockets (ss), and then
// each running node's goroutines — SIGQUIT, which makes a Go program
// print them to its stderr (kept with the node's log) and exit.
func (c *netCluster) postMortem() {
	t := c.t
	for _, id := range c.net.ids {
		ns := c.net.namespace(id)
		var b strings.Builder
		for _, args := range [][]string{
			{"ip", "-br", "link"}, {"ip", "-br", "addr"}, {"ss", "-tanpi"},
		} {
			ctx, cancel := context.WithTimeout(context.Background(), ipTimeout)
			out, err := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", ns}, args...)...).CombinedOutput()
			cancel()
			fmt.Fprintf(&b, "$ %s\n%s", strings.Join(args, " "), out)
			if err != nil {
				fmt.Fprintf(&b, "(%v)\n", err)
			}
		}
		t.Logf("post-mortem of %s's namespace %s:\n%s", id, ns, b.String())
	}
	for _, n := range c.nodes {
		n.quit()
	}
}
