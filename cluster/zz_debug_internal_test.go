package cluster

import (
	"context"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

func TestZZDebugLost(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var addrs []string
	var routes []string
	for i := 0; i < 3; i++ {
		l, _ := net.Listen("tcp", "127.0.0.1:0")
		addrs = append(addrs, l.Addr().String())
		l.Close()
		routes = append(routes, "nats-route://"+addrs[i])
	}
	start := func(i int) *Node {
		id := []string{"n1", "n2", "n3"}[i]
		n, err := Start(ctx, Options{NodeID: id, ClusterName: "dbg", DataDir: filepath.Join(dir, id), ClusterListen: addrs[i], Routes: routes, Secret: "dbg-secret-123", LeaseTTL: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	nodes := []*Node{start(0), start(1), start(2)}
	for _, n := range nodes {
		if err := n.WaitReady(ctx); err != nil {
			t.Fatal(err)
		}
	}
	t.Log("all ready")
	nodes[2].Kill()
	nodes[1].Close()
	t.Log("n3 killed, n2 closed")
	nodes[1] = start(1)
	t0 := time.Now()
	for k := 0; k < 30; k++ {
		time.Sleep(time.Second)
		for _, n := range nodes[:2] {
			c0 := time.Now()
			jsz, _ := n.ns.Jsz(&server.JSzOptions{})
			r := n.Ready()
			took := time.Since(c0)
			if jsz.Meta != nil {
				t.Logf("%s %s peers=%v leader=%q size=%d ready=%v (took %s)", time.Since(t0).Round(time.Second), n.opts.NodeID, n.Peers(), jsz.Meta.Leader, jsz.Meta.Size, r, took)
			}
		}
	}
	nodes[0].Close()
	nodes[1].Close()
}
