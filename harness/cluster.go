package harness

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/actors/router"
	"github.com/mcp-actors/mcp-actors/cluster"
	"github.com/mcp-actors/mcp-actors/internal/access"
)

// ClusterTimeout bounds how long NewCluster waits for a new cluster to be
// ready (its JetStream elects a leader first, which takes seconds).
const ClusterTimeout = 90 * time.Second

// Cluster is an in-process cluster of nodes for a test: real embedded NATS
// servers joined by routes on loopback ports, a server on each. Clients
// send each message through the node their picker chooses (round robin by
// default), so that a session opened on one node is served from all.
type Cluster struct {
	tb      testing.TB
	Nodes   []*cluster.Node
	Servers []*mcpactors.Server
}

// ClusterOption configures the nodes of NewCluster.
type ClusterOption func(*clusterConfig)

type clusterConfig struct {
	base cluster.Options
	each []cluster.LocalOption
}

// WithLeaseTTL gives every node the lease TTL d (default
// cluster.DefaultLeaseTTL): its sessions are taken over that long after
// it stops renewing its lease.
func WithLeaseTTL(d time.Duration) ClusterOption {
	return func(c *clusterConfig) { c.base.LeaseTTL = d }
}

// WithNodeOptions changes the options of node i (from 0) before it starts:
// a FaultClock of its own, say.
func WithNodeOptions(fn cluster.LocalOption) ClusterOption {
	return func(c *clusterConfig) { c.each = append(c.each, fn) }
}

// NewCluster starts n nodes, each with a server from newServer (which
// must register the same catalog on every call), joined into one cluster.
// Everything is stopped when the test ends.
func NewCluster(tb testing.TB, n int, newServer func(testing.TB) *mcpactors.Server, opts ...ClusterOption) *Cluster {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), ClusterTimeout)
	defer cancel()
	name := "h" + strings.NewReplacer("/", "-", " ", "-").Replace(filepath.Base(tb.Name()))
	if len(name) > 40 {
		name = name[:40]
	}
	var cfg clusterConfig
	for _, o := range opts {
		o(&cfg)
	}
	cfg.base.ClusterName = sanitize(name)
	nodes, err := cluster.StartLocal(ctx, n, tb.TempDir(), cfg.base, cfg.each...)
	if err != nil {
		tb.Fatalf("harness: starting a %d-node cluster: %v", n, err)
	}
	c := &Cluster{tb: tb, Nodes: nodes}
	tb.Cleanup(c.stop)
	for _, node := range nodes {
		srv := newServer(tb)
		if err := srv.JoinCluster(node); err != nil {
			tb.Fatalf("harness: node %s: %v", node.ID(), err)
		}
		c.Servers = append(c.Servers, srv)
	}
	return c
}

// stop closes the servers, then the nodes.
func (c *Cluster) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), DefaultTimeout)
	defer cancel()
	for _, srv := range c.Servers {
		if err := srv.Close(ctx); err != nil {
			c.tb.Errorf("harness: closing a server: %v", err)
		}
	}
	for _, n := range c.Nodes {
		n.Close()
	}
}

// routers returns every node's router.
func (c *Cluster) routers() []router.Router {
	rts := make([]router.Router, len(c.Servers))
	for i, s := range c.Servers {
		rts[i] = access.Router(s)
	}
	return rts
}

// Open opens a session (through the node the client's picker chooses for
// its first message) without sending anything.
func (c *Cluster) Open(opts ...Option) *Client {
	c.tb.Helper()
	cl, err := openVia(context.Background(), c.routers(), newConfig(opts))
	if err != nil {
		c.tb.Fatalf("harness: %v", err)
	}
	c.tb.Cleanup(cl.Close)
	return cl
}

// Connect opens a session and completes the handshake, as Harness.Connect
// does.
func (c *Cluster) Connect(opts ...Option) *Client {
	c.tb.Helper()
	cl := c.Open(opts...)
	if err := cl.Initialize(context.Background()); err != nil {
		c.tb.Fatalf("harness: %v", err)
	}
	return cl
}

// RunScenarios plays every scenario file matching pattern against the
// cluster, each on a fresh session whose messages go round robin over the
// nodes; with -update it rewrites them.
func (c *Cluster) RunScenarios(t *testing.T, pattern string) {
	t.Helper()
	eachScenario(t, pattern, func(t *testing.T, file string) {
		cl, err := openVia(context.Background(), c.routers(), newConfig(nil))
		if err != nil {
			t.Fatalf("harness: %v", err)
		}
		defer cl.Close()
		if err := runScenario(t, cl, file, *update, &actor{servers: c.Servers}); err != nil {
			t.Fatalf("harness: %v", err)
		}
	})
}

// sanitize keeps the characters a cluster name may have.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			return r
		}
		return '-'
	}, s)
}

// String names the cluster's nodes.
func (c *Cluster) String() string {
	ids := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		ids[i] = n.ID()
	}
	return fmt.Sprintf("cluster(%s)", strings.Join(ids, ","))
}
