package cluster

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/time/rate"

	"github.com/mcp-actors/mcp-actors/internal/certfile"
)

// Node is this process's membership of a cluster: its NATS connection (to
// an embedded server, or to an existing deployment), the cluster's
// JetStream buckets, and its lease. Start one with Start; Close gives up
// the lease and stops the embedded server.
//
//	Start ──▶ embedded NATS server (routes, JetStream) or nats.Connect(URLs)
//	      ──▶ buckets: sessions (directory), nodes (leases), catalog   [retried until JetStream can]
//	      ──▶ lease: nodes/<id> renewed every LeaseTTL/4               [Ready once both are up]
type Node struct {
	opts Options
	log  *slog.Logger
	ns   *server.Server  // nil with URLs
	so   *server.Options // ns's options (a reload replaces them: routesecret.go)
	// natsLog is ns's logger; secrets, with Options.SecretFile, the
	// route secrets read from it (routesecret.go); routeCert, with route
	// TLS, the route certificate, read again when its files change.
	natsLog   natsLogger
	secrets   *routeSecrets
	routeCert *certfile.Reloader
	nc        *nats.Conn
	js        jetstream.JetStream
	subj      subjects

	stop    chan struct{}   // closed when the node stops (Close or Kill)
	ctx     context.Context // ends when the node stops: its own requests
	cancel  context.CancelFunc
	stopped sync.WaitGroup // maintain, the event writer and the secret watcher: Close and Kill wait for them
	closing sync.Once      // Close or Kill, whichever comes first
	up      chan struct{}  // closed once the buckets exist
	// firstLease is closed once the node has taken its lease the first
	// time (settled).
	firstLease chan struct{}
	firstOnce  sync.Once

	renewals, renewFailures atomic.Int64
	asyncFailures           atomic.Int64 // writes not waited for that failed
	natsErrors              atomic.Int64 // asynchronous NATS errors (slow consumers)
	dir                     directory    // the session directory's size (bounds.go)
	// At most one warning a second for each: a failing storage or a
	// flood of dropped messages is counted in full (metrics), logged in
	// samples.
	warnWrites, warnNATS, warnOwners rate.Sometimes

	evw          *eventLogWriter // writes the event log (eventlog.go)
	atomicEvents atomic.Bool     // the event log takes atomic batches

	settled      atomic.Bool                // the node has been ready once (embedded.go's log levels, the first lease's)
	sessionCount atomic.Pointer[func() int] // CountSessions
	boot         string                     // this process's run of the node: random
	started      time.Time                  // when it started
	clock        Clock                      // what the lease is measured by (clock.go)
	lease        leaseState
	leases       leaseView // what the node knows of the others' leases (lease_read.go)

	mu       sync.Mutex         // guards the fields below; only the Node's own methods take it
	sessions jetstream.KeyValue // session ID → directory record (directory.go)
	nodes    jetstream.KeyValue // node ID → lease (lease.go)
	// leasesStream is the lease bucket's stream, for reads of other
	// nodes' keys with their headers (lease_read.go).
	leasesStream jetstream.Stream
	catalog      jetstream.KeyValue // catalog item → state
	events       jetstream.Stream   // the sessions' event logs (events.go)
	ready        bool
	lastErr      error    // why the node is not ready, for /readyz
	onLapse      func()   // called when the lease lapses (lease.go)
	hooks        []func() // run once the buckets are up
}

// Start joins the cluster o describes. It returns once the NATS connection
// is up; the buckets and the lease follow in the background (a replicated
// bucket can be created only once JetStream has elected its leader, which
// takes seconds in a new cluster): Ready says when they are.
func Start(ctx context.Context, o Options) (*Node, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	n := &Node{opts: o, log: o.Logger, subj: newSubjects(o.ClusterName), stop: make(chan struct{}), up: make(chan struct{}), firstLease: make(chan struct{}),
		boot: randomID(8), started: time.Now(),
		warnWrites: rate.Sometimes{Interval: time.Second}, warnNATS: rate.Sometimes{Interval: time.Second},
		warnOwners: rate.Sometimes{Interval: time.Second}}
	n.clock = o.Clock
	if n.clock == nil {
		n.clock = systemClock{base: n.started}
	}
	n.lease.ttl.Store(int64(o.LeaseTTL))
	if len(o.URLs) == 0 {
		if err := n.startServer(ctx); err != nil {
			return nil, err
		}
	}
	if o.routesOnlySelf() {
		n.log.Warn("the routes name only this node: it waits for other nodes, and is not ready until one joins (list every node's route URL, or none for a node on its own)")
	}
	if err := n.connect(ctx); err != nil {
		n.shutdownServer()
		return nil, err
	}
	js, err := jetstream.New(n.nc, jetstream.WithPublishAsyncErrHandler(func(_ jetstream.JetStream, m *nats.Msg, err error) {
		n.asyncFailures.Add(1)
		if isWrongRevision(err) {
			return // a fenced write: its writer is told (persist.go)
		}
		n.warnWrites.Do(func() {
			n.log.Warn("a write to JetStream failed (counted in mcp_cluster_write_failures_total; logged at most once a second)", "err", err)
		})
	}))
	if err != nil {
		n.nc.Close()
		n.shutdownServer()
		return nil, fmt.Errorf("cluster: JetStream: %w", err)
	}
	n.js = js
	n.ctx, n.cancel = context.WithCancel(context.Background())
	n.evw = newEventWriter(n)
	n.stopped.Add(2)
	go n.maintain()
	go n.evw.run()
	if n.secrets != nil {
		n.stopped.Add(1)
		go n.watchSecrets()
	}
	return n, nil
}

// Standalone reports whether the node is alone by construction: an
// embedded server without routes. Nothing can take its sessions over, so
// it keeps no session directory.
func (n *Node) Standalone() bool { return len(n.opts.URLs) == 0 && len(n.opts.Routes) == 0 }

// External reports whether the node uses an existing NATS deployment
// (Options.URLs) rather than an embedded server: it leads no storage then.
func (n *Node) External() bool { return len(n.opts.URLs) > 0 }

// ID returns the node's ID.
func (n *Node) ID() string { return n.opts.NodeID }

// ClusterName returns the cluster's name.
func (n *Node) ClusterName() string { return n.opts.ClusterName }

// Conn returns the node's NATS connection.
func (n *Node) Conn() *nats.Conn { return n.nc }

// Logger returns the node's logger (its lines name the node).
func (n *Node) Logger() *slog.Logger { return n.log }

// RouteURL returns the embedded server's route URL ("" without one), for
// other nodes' Routes.
func (n *Node) RouteURL() string {
	if n.ns == nil || n.opts.ClusterListen == "" {
		return ""
	}
	addr := n.ns.ClusterAddr()
	if addr == nil {
		return ""
	}
	return "nats-route://" + addr.String()
}

// ClientURL returns the embedded server's client URL ("" when it has no
// client port).
func (n *Node) ClientURL() string {
	if n.ns == nil {
		return ""
	}
	if addr := n.ns.Addr(); addr != nil {
		return "nats://" + addr.String()
	}
	return ""
}

// Peers returns the names of the servers the embedded server has routes
// to (none without an embedded server).
func (n *Node) Peers() []string {
	return slices.Sorted(maps.Keys(n.routes()))
}

// routes returns the servers the embedded server has routes to, each with
// the shortest round trip NATS last measured on its pooled connections
// (-1 before any); nil without an embedded server.
func (n *Node) routes() map[string]time.Duration {
	if n.ns == nil {
		return nil
	}
	rz, err := n.ns.Routez(&server.RoutezOptions{})
	if err != nil {
		return nil
	}
	peers := map[string]time.Duration{}
	for _, r := range rz.Routes {
		rtt, err := time.ParseDuration(r.RTT)
		if err != nil {
			rtt = -1
		}
		if old, ok := peers[r.RemoteName]; !ok || old < 0 || (rtt >= 0 && rtt < old) {
			peers[r.RemoteName] = rtt
		}
	}
	return peers
}

// Close gives up the lease (so that other nodes may take this node's
// sessions over at once), closes the connection and stops the embedded
// server. The node stops acting first: its lease's context ends.
func (n *Node) Close() {
	n.closing.Do(func() {
		close(n.stop)
		n.cancel()
		n.stopped.Wait()
		select { // the sessions' last states and events, before they are taken over
		case <-n.js.PublishAsyncComplete():
		case <-time.After(time.Second):
			n.log.Warn("writes to JetStream still unacknowledged at shutdown", "pending", n.js.PublishAsyncPending())
		}
		n.stopActing(errNodeClosed)
		n.giveUpLease()
		_ = n.nc.Drain()
		n.nc.Close()
		n.shutdownServer()
	})
}

// Kill stops the node at once, as a crash would: no lease given up, no
// goodbye. For tests of node loss.
func (n *Node) Kill() {
	n.closing.Do(func() {
		n.evw.lose()
		close(n.stop)
		n.cancel()
		n.stopped.Wait()
		n.stopActing(errNodeClosed)
		n.nc.Close()
		n.shutdownServer()
	})
}

// randomID returns n random bytes as lowercase hex.
func randomID(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	const hex = "0123456789abcdef"
	out := make([]byte, 2*n)
	for i, c := range b {
		out[2*i], out[2*i+1] = hex[c>>4], hex[c&15]
	}
	return string(out)
}
