package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mcp-actors/mcp-actors/internal/loopback"
)

// StartLocal starts n nodes in this process, joined by routes on loopback
// ports, as a test or a harness needs: real embedded NATS servers with
// JetStream, stores under dataDir, node IDs "n1" … "nN". base gives the
// other options (cluster name, lease TTL, logger), and each changes the
// options of one node (a fault clock of its own, say) before it starts;
// without a secret or route TLS in base, the routes use a random secret.
// It returns once every node is ready (ctx bounds the wait: a new
// JetStream cluster takes seconds to elect its leader), or stops them all
// and returns why not.
func StartLocal(ctx context.Context, n int, dataDir string, base Options, each ...LocalOption) ([]*Node, error) {
	if n < 1 {
		return nil, fmt.Errorf("%w: a cluster of %d nodes", ErrInvalidOptions, n)
	}
	// A port checked free may be taken by another process before its node
	// listens on it: start again on other ports, from empty stores.
	for attempt := 1; ; attempt++ {
		nodes, err := startLocal(ctx, n, dataDir, base, each)
		if err == nil || !errors.Is(err, ErrServerStart) || attempt == startAttempts || ctx.Err() != nil {
			return nodes, err
		}
		for i := 1; i <= n; i++ {
			if err := os.RemoveAll(filepath.Join(dataDir, fmt.Sprintf("n%d", i))); err != nil {
				return nil, err
			}
		}
	}
}

// startAttempts bounds StartLocal's starts on fresh ports.
const startAttempts = 3

// LocalOption changes the options of node i (from 0) of StartLocal.
type LocalOption func(i int, o *Options)

func startLocal(ctx context.Context, n int, dataDir string, base Options, each []LocalOption) ([]*Node, error) {
	var nodes []*Node
	fail := func(err error) ([]*Node, error) {
		for _, nd := range nodes {
			nd.Close()
		}
		return nil, err
	}
	// Every node routes to all, itself included (a JetStream cluster needs
	// routes on every server), so the route ports are chosen first.
	var routes []string
	var addrs []string
	if n > 1 {
		if base.Secret == "" && !base.routeTLS() {
			base.Secret = randomID(16)
		}
		for range n {
			addr, err := loopback.Addr()
			if err != nil {
				return nil, err
			}
			addrs = append(addrs, addr)
			routes = append(routes, "nats-route://"+addr)
		}
	}
	for i := 1; i <= n; i++ {
		o := base
		o.NodeID = fmt.Sprintf("n%d", i)
		o.DataDir = filepath.Join(dataDir, o.NodeID)
		o.URLs = nil
		if n > 1 {
			o.ClusterListen = addrs[i-1]
			o.Routes = routes
			if o.Replicas == 0 {
				o.Replicas = min(3, n)
			}
		}
		for _, fn := range each {
			fn(i-1, &o)
		}
		nd, err := Start(ctx, o)
		if err != nil {
			return fail(err)
		}
		nodes = append(nodes, nd)
	}
	for _, nd := range nodes {
		if err := nd.WaitReady(ctx); err != nil {
			return fail(fmt.Errorf("node %s: %w", nd.ID(), err))
		}
	}
	return nodes, nil
}
