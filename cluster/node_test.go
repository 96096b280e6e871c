package cluster_test

import (
	"context"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/cluster"
)

func TestSingleNode(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := cluster.Start(ctx, cluster.Options{NodeID: "solo", DataDir: t.TempDir()})
	require.NoError(t, err)
	defer n.Close()
	require.NoError(t, n.WaitReady(ctx))
	assert.Empty(t, n.ClientURL(), "no client port")
	assert.Empty(t, n.RouteURL(), "no route port")
	assertKV(t, ctx, n, n) // its own in-process connection is admitted
	members, err := n.Members(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"solo"}, members)
}

func TestThreeNodes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	nodes, err := cluster.StartLocal(ctx, 3, t.TempDir(), cluster.Options{ClusterName: "t3", LeaseTTL: 400 * time.Millisecond})
	require.NoError(t, err)
	defer func() {
		for _, n := range nodes {
			n.Close()
		}
	}()
	assert.Equal(t, []string{"n2", "n3"}, nodes[0].Peers(), "n1 is routed to the two others")
	assert.Equal(t, []string{"n1", "n3"}, nodes[1].Peers())
	members, err := nodes[0].Members(ctx)
	require.NoError(t, err)
	slices.Sort(members)
	assert.Equal(t, []string{"n1", "n2", "n3"}, members)

	// A node that dies loses its lease once the TTL lapses; one that
	// shuts down gives it up at once.
	nodes[2].Kill()
	require.Eventually(t, func() bool {
		alive, err := nodes[0].Alive(ctx, "n3")
		return err == nil && !alive
	}, 10*time.Second, 20*time.Millisecond, "the dead node's lease lapses")
	// The lease bucket may have lost its leader with n3: until another is
	// elected no lease is renewed or given up (the TTL here is far below
	// an election's few seconds). Wait until it has one again.
	js, err := jetstream.New(nodes[0].Conn())
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		wctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		s, err := js.Stream(wctx, "KV_mcpx_t3_nodes") // the bucket mcpx_<cluster>_nodes
		if err != nil {
			return false
		}
		info, err := s.Info(wctx)
		return err == nil && info.Cluster != nil && info.Cluster.Leader != "" && info.Cluster.Leader != "n3"
	}, 30*time.Second, 50*time.Millisecond, "the lease bucket has a leader after the loss of a node")
	require.Eventually(t, func() bool {
		alive, err := nodes[0].Alive(ctx, "n1")
		return err == nil && alive
	}, 10*time.Second, 20*time.Millisecond, "a live node keeps its lease")

	// Alone of three, n1 has no quorum: it cannot renew its lease, so it
	// stops acting for its sessions and says why it is not ready.
	nodes[1].Close()
	require.Eventually(t, func() bool { return !nodes[0].Acting() }, 10*time.Second, 20*time.Millisecond,
		"a node without quorum stops acting once its lease may have lapsed")
	assert.ErrorIs(t, nodes[0].Ready(), cluster.ErrNotReady)
}

func TestBadOptions(t *testing.T) {
	for _, o := range []cluster.Options{
		{ClusterName: "has.dot"},
		{NodeID: "a b"},
		{Routes: []string{"nats-route://127.0.0.1:1"}},
		{ClusterListen: "nowhere"},
		{ClusterAdvertise: "127.0.0.1:1"},
		{ClusterListen: "127.0.0.1:0", ClusterAdvertise: "nowhere"},
		{URLs: []string{"nats://127.0.0.1:4222"}, ClusterListen: "127.0.0.1:0"},
		{ClusterListen: "127.0.0.1:0", Routes: []string{"http://x"}},
		{LeaseTTL: time.Millisecond},
		// Routes authenticate: a secret, mutual TLS (three files), or both.
		{ClusterListen: "127.0.0.1:0"},
		{ClusterListen: "127.0.0.1:0", ClusterTLSCert: "c.pem", ClusterTLSKey: "k.pem"},
		{ClusterListen: "127.0.0.1:0", Secret: "s", ClusterCA: "ca.pem"},
		{ClusterTLSCert: "c.pem", ClusterTLSKey: "k.pem", ClusterCA: "ca.pem"},
		{ClusterListen: "127.0.0.1:0", ClusterTLSCert: "missing.pem", ClusterTLSKey: "missing.pem", ClusterCA: "missing.pem"},
		// JetStream syncs always or at a positive interval, on the
		// embedded server only.
		{URLs: []string{"nats://127.0.0.1:4222"}, SyncAlways: true},
		{URLs: []string{"nats://127.0.0.1:4222"}, SyncInterval: time.Second},
		{SyncInterval: -time.Second},
		{SyncAlways: true, SyncInterval: time.Second},
	} {
		_, err := cluster.Start(context.Background(), o)
		assert.ErrorIs(t, err, cluster.ErrInvalidOptions, "%+v", o)
	}
}

// TestStartInAnyOrder: three nodes started one after another, in an order
// other than their routes', each waiting for the next: until the last
// joins, /readyz's reason is a state that counts the nodes still to come
// (a majority of the replicas to run the storage; all of them for a new
// cluster's first storage leader), and then every node becomes ready.
func TestStartInAnyOrder(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	dir := t.TempDir()
	ids := []string{"n1", "n2", "n3"}
	addr := map[string]string{}
	var routes []string
	for _, id := range ids {
		addr[id] = freeAddr(t)
		routes = append(routes, "nats-route://"+addr[id])
	}
	start := func(id string) *cluster.Node {
		n, err := cluster.Start(ctx, cluster.Options{NodeID: id, ClusterName: "order", DataDir: filepath.Join(dir, id),
			ClusterListen: addr[id], Routes: routes, Secret: "order-secret"})
		require.NoError(t, err)
		return n
	}
	reason := func(n *cluster.Node) string {
		if err := n.Ready(); err != nil {
			return err.Error()
		}
		return "ready"
	}
	var nodes []*cluster.Node
	defer func() { closeAll(nodes) }()
	for i, id := range []string{"n3", "n1", "n2"} {
		nodes = append(nodes, start(id))
		if more := 2 - i; more > 0 {
			// Alone, a node has no majority of the replicas; with two, a
			// majority, but a new cluster's storage elects its first
			// leader with every node.
			want := map[int]string{
				2: "waiting for 1 more node to join (the storage keeps 3 replicas and runs on 2)",
				1: "electing the storage leader: 2 of its 3 nodes here (a new cluster waits for all)",
			}[more]
			for _, n := range nodes {
				require.Eventually(t, func() bool { return strings.Contains(reason(n), want) },
					30*time.Second, 20*time.Millisecond, "%s says %q, not %q", n.ID(), reason(n), want)
			}
		}
	}
	for _, n := range nodes {
		require.NoError(t, n.WaitReady(ctx), "%s", n.ID())
	}
}

// TestRoutesOnlySelf: a node whose routes name only itself says it waits
// for others, and is not ready.
func TestRoutesOnlySelf(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a := freeAddr(t)
	_, port, _ := net.SplitHostPort(a)
	n, err := cluster.Start(ctx, cluster.Options{NodeID: "alone", ClusterName: "self", DataDir: t.TempDir(),
		ClusterListen: a, Routes: []string{"nats-route://localhost:" + port}, Secret: "self-secret"})
	require.NoError(t, err)
	defer n.Close()
	err = n.Ready()
	require.ErrorIs(t, err, cluster.ErrNotReady)
	assert.Contains(t, err.Error(), "--routes names only this node")
}

// TestChangeReplicas: a cluster made with one replica of each store, whose
// node restarts with --replicas 3, keeps three of each from then on, with
// what they held.
func TestChangeReplicas(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	dir := t.TempDir()
	base := cluster.Options{ClusterName: "reps", Replicas: 1, Secret: "reps-secret"}
	nodes, err := cluster.StartLocal(ctx, 3, dir, base)
	require.NoError(t, err)
	defer func() { closeAll(nodes) }()
	js, err := jetstream.New(nodes[1].Conn())
	require.NoError(t, err)
	replicas := func(stream string) int {
		s, err := js.Stream(ctx, stream)
		require.NoError(t, err)
		info, err := s.Info(ctx)
		require.NoError(t, err)
		return info.Config.Replicas
	}
	stores := []string{"KV_mcpx_reps_sessions", "KV_mcpx_reps_nodes", "KV_mcpx_reps_catalog", "mcpx_reps_events"}
	for _, s := range stores {
		require.Equal(t, 1, replicas(s), s)
	}

	var routes []string
	for _, n := range nodes {
		routes = append(routes, n.RouteURL())
	}
	listen := strings.TrimPrefix(nodes[0].RouteURL(), "nats-route://")
	nodes[0].Close()
	o := base
	o.NodeID, o.DataDir, o.ClusterListen, o.Routes, o.Replicas = "n1", filepath.Join(dir, "n1"), listen, routes, 3
	n1, err := cluster.Start(ctx, o)
	require.NoError(t, err)
	nodes[0] = n1
	require.NoError(t, n1.WaitReady(ctx))
	for _, s := range stores {
		assert.Equal(t, 3, replicas(s), s)
	}
	// The new replicas catch up: each store has a leader and two current
	// replicas.
	current := func(stream string) bool {
		s, err := js.Stream(ctx, stream)
		if err != nil {
			return false
		}
		info, err := s.Info(ctx)
		if err != nil || info.Cluster == nil || info.Cluster.Leader == "" || len(info.Cluster.Replicas) != 2 {
			return false
		}
		for _, r := range info.Cluster.Replicas {
			if !r.Current || r.Lag != 0 {
				return false
			}
		}
		return true
	}
	for _, s := range stores {
		assert.Eventually(t, func() bool { return current(s) }, 60*time.Second, 100*time.Millisecond, "%s: a leader and two current replicas", s)
	}
}
