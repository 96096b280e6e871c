package cluster

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/time/rate"

	"github.com/mcp-actors/mcp-actors/actors/session"
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
	ns   *server.Server // nil with URLs
	nc   *nats.Conn
	js   jetstream.JetStream
	subj subjects

	stop    chan struct{}
	ctx     context.Context // ends when the node stops: its own requests
	cancel  context.CancelFunc
	stopped sync.WaitGroup
	closing sync.Once
	up      chan struct{} // closed once the buckets exist

	renewals, renewFailures atomic.Int64
	asyncFailures           atomic.Int64 // writes not waited for that failed
	natsErrors              atomic.Int64 // asynchronous NATS errors (slow consumers)
	// At most one warning a second for each: a failing storage or a
	// flood of dropped messages is counted in full (metrics), logged in
	// samples.
	warnWrites, warnNATS rate.Sometimes

	evw          *eventWriter // writes the event log (eventlog.go)
	atomicEvents atomic.Bool  // the event log takes atomic batches

	boot    string    // this process's run of the node: random
	started time.Time // when it started
	lease   leaseState

	mu       sync.Mutex
	sessions jetstream.KeyValue // session ID → directory record (directory.go)
	nodes    jetstream.KeyValue // node ID → lease (lease.go)
	catalog  jetstream.KeyValue // catalog item → state
	events   jetstream.Stream   // the sessions' event logs (events.go)
	ready    bool
	lastErr  error    // why the node is not ready, for /readyz
	onLapse  func()   // called when the lease lapses (lease.go)
	hooks    []func() // run once the buckets are up
}

// ErrNotReady is returned, wrapped with the reason, while the node cannot
// serve yet (JetStream not up, no lease).
var ErrNotReady = errors.New("cluster: node not ready")

// Start joins the cluster o describes. It returns once the NATS connection
// is up; the buckets and the lease follow in the background (a replicated
// bucket can be created only once JetStream has elected its leader, which
// takes seconds in a new cluster): Ready says when they are.
func Start(ctx context.Context, o Options) (*Node, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	n := &Node{opts: o, log: o.Logger, subj: newSubjects(o.ClusterName), stop: make(chan struct{}), up: make(chan struct{}),
		boot: randomID(8), started: time.Now(),
		warnWrites: rate.Sometimes{Interval: time.Second}, warnNATS: rate.Sometimes{Interval: time.Second}}
	n.lease.base = n.started
	if len(o.URLs) == 0 {
		if err := n.startServer(); err != nil {
			return nil, err
		}
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
	return n, nil
}

// Standalone reports whether the node is alone by construction: an
// embedded server without routes. Nothing can take its sessions over, so
// it keeps no session directory.
func (n *Node) Standalone() bool { return len(n.opts.URLs) == 0 && len(n.opts.Routes) == 0 }

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
	if n.ns == nil {
		return nil
	}
	rz, err := n.ns.Routez(&server.RoutezOptions{})
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	var peers []string
	for _, r := range rz.Routes {
		if !seen[r.RemoteName] {
			seen[r.RemoteName] = true
			peers = append(peers, r.RemoteName)
		}
	}
	slices.Sort(peers)
	return peers
}

// connect connects to the embedded server in-process, or to URLs.
func (n *Node) connect(ctx context.Context) error {
	opts := []nats.Option{
		nats.Name("mcp-actors/" + n.opts.NodeID),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				n.log.Warn("NATS connection lost", "err", err)
			}
		}),
		nats.ReconnectHandler(func(c *nats.Conn) { n.log.Info("NATS connection back", "url", c.ConnectedUrlRedacted()) }),
		// A subscription that falls behind drops messages (a slow
		// consumer): routed messages and frames are lost, and the
		// requests they carried end by the acknowledgement's bound.
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			n.natsErrors.Add(1)
			n.warnNATS.Do(func() {
				subject := ""
				if sub != nil {
					subject = sub.Subject
				}
				n.log.Warn("NATS error (counted in mcp_cluster_nats_errors_total; logged at most once a second)", "subject", subject, "err", err)
			})
		}),
	}
	var url string
	if n.ns != nil {
		opts = append(opts, nats.InProcessServer(n.ns))
	} else {
		url = strings.Join(n.opts.URLs, ",")
		if n.opts.CredsFile != "" {
			opts = append(opts, nats.UserCredentials(n.opts.CredsFile))
		}
		if n.opts.CAFile != "" {
			opts = append(opts, nats.RootCAs(n.opts.CAFile))
		}
		opts = append(opts, nats.RetryOnFailedConnect(false))
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return fmt.Errorf("cluster: connecting to NATS: %w", err)
	}
	n.nc = nc
	return ctx.Err()
}

// maintain creates the buckets (retrying until JetStream can), then keeps
// the lease renewed until Close.
func (n *Node) maintain() {
	defer n.stopped.Done()
	backoff := 100 * time.Millisecond
	for {
		err := n.createBuckets()
		if err == nil {
			break
		}
		n.setErr(err)
		n.log.Debug("JetStream not ready yet", "err", err)
		select {
		case <-n.stop:
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 2*time.Second)
	}
	tick := time.NewTicker(n.opts.LeaseTTL / 4)
	defer tick.Stop()
	for {
		n.renew()
		// Renewals fail while storage has no quorum; once the lease may
		// have expired, the sessions are given up at once rather than at
		// the next tick.
		lapse := time.NewTimer(max(n.lease.sentOK+n.opts.LeaseTTL-n.since(), 0))
		if n.lease.rev == 0 || n.lease.given {
			lapse.Stop()
		}
		select {
		case <-n.stop:
			lapse.Stop()
			return
		case <-tick.C:
		case <-lapse.C:
			n.giveUp("the lease was not renewed for " + n.opts.LeaseTTL.String())
		}
		lapse.Stop()
	}
}

// createBuckets creates (or opens) the cluster's buckets.
func (n *Node) createBuckets() error {
	ctx, cancel := context.WithTimeout(n.ctx, 5*time.Second)
	defer cancel()
	r := n.opts.Replicas
	sessions, err := n.leaderBucket(ctx, jetstream.KeyValueConfig{
		Bucket: n.subj.bucket("sessions"), Description: "mcp-actors session directory: session ID → owner, epoch, principal, state",
		History: 1, Storage: jetstream.FileStorage, Replicas: r, LimitMarkerTTL: markerTTL,
	})
	if err != nil {
		return fmt.Errorf("creating the session directory: %w", err)
	}
	nodes, err := n.leaderBucket(ctx, jetstream.KeyValueConfig{
		Bucket: n.subj.bucket("nodes"), Description: "mcp-actors node leases",
		History: 1, Storage: jetstream.MemoryStorage, Replicas: r, TTL: n.opts.LeaseTTL,
	})
	if err != nil {
		return fmt.Errorf("creating the lease bucket: %w", err)
	}
	catalog, err := n.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: n.subj.bucket("catalog"), Description: "mcp-actors catalog state: enabled items, resource versions",
		History: 1, Storage: jetstream.FileStorage, Replicas: r,
	})
	if err != nil {
		return fmt.Errorf("creating the catalog bucket: %w", err)
	}
	events, err := n.js.CreateOrUpdateStream(ctx, n.eventStreamConfig())
	if err != nil {
		return fmt.Errorf("creating the event log stream: %w", err)
	}
	// A server before 2.12 ignores what it does not know: events go one by one.
	n.atomicEvents.Store(events.CachedInfo().Config.AllowAtomicPublish)
	n.mu.Lock()
	n.sessions, n.nodes, n.catalog, n.events = sessions, nodes, catalog, events
	hooks := n.hooks
	n.hooks = nil
	n.mu.Unlock()
	close(n.up)
	for _, h := range hooks {
		h()
	}
	return nil
}

// leaderBucket opens (creating it if needed) a bucket whose reads go to
// its stream's leader, never to a replica that may lag behind it: the
// leases and the session directory, whose reads decide who owns a session.
// A key-value bucket answers reads from any replica by default ("direct
// gets"); the stream's AllowDirect is turned off, and the bucket is opened
// again so that it reads from the leader.
func (n *Node) leaderBucket(ctx context.Context, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	kv, err := n.js.KeyValue(ctx, cfg.Bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		kv, err = n.js.CreateKeyValue(ctx, cfg)
		if errors.Is(err, jetstream.ErrBucketExists) {
			kv, err = n.js.KeyValue(ctx, cfg.Bucket) // another node created it meanwhile
		}
	}
	if err != nil {
		return nil, err
	}
	s, err := n.js.Stream(ctx, "KV_"+cfg.Bucket)
	if err != nil {
		return nil, err
	}
	sc := s.CachedInfo().Config
	if !sc.AllowDirect {
		return kv, nil // opened as it is now: it reads from the leader
	}
	sc.AllowDirect = false
	if _, err := n.js.UpdateStream(ctx, sc); err != nil {
		return nil, err
	}
	kv, err = n.js.KeyValue(ctx, cfg.Bucket)
	if err != nil {
		return nil, err
	}
	if s, err = n.js.Stream(ctx, "KV_"+cfg.Bucket); err != nil {
		return nil, err
	}
	if s.CachedInfo().Config.AllowDirect {
		return nil, errors.New("bucket " + cfg.Bucket + " still reads from replicas")
	}
	return kv, nil
}

// cutOff reports whether the node's embedded server should have routes to
// others but has none.
func (n *Node) cutOff() bool {
	return n.ns != nil && len(n.opts.Routes) > 0 && n.ns.NumRoutes() == 0
}

// reachesQuorum reports whether this node has routes to enough others for
// its storage to have a majority of its replicas: then a storage operation
// that fails is a leader being elected (after a node loss) and passes
// within seconds; without a majority it does not pass until the cluster
// heals. It counts servers, not route connections (NATS pools several per
// server). With an external NATS deployment the node cannot tell: it says
// yes, and the wait stays bounded by its caller.
func (n *Node) reachesQuorum() bool {
	if n.ns == nil || len(n.opts.Routes) == 0 {
		return true
	}
	return n.peers()+1 > n.opts.Replicas/2
}

func (n *Node) setErr(err error) {
	n.mu.Lock()
	n.ready, n.lastErr = false, err
	n.mu.Unlock()
}

// Ready reports whether the node can serve: its NATS connection is up, the
// cluster's buckets exist, its lease is current, and, with routes, it has
// joined the others. The error says what is missing.
func (n *Node) Ready() error {
	if !n.nc.IsConnected() {
		return fmt.Errorf("%w: NATS connection %s", ErrNotReady, strings.ToLower(n.nc.Status().String()))
	}
	if n.cutOff() {
		return fmt.Errorf("%w: no route to another node yet", ErrNotReady)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	switch {
	case n.ready && n.acting():
		return nil
	case n.lastErr != nil:
		return fmt.Errorf("%w: %w", ErrNotReady, n.lastErr)
	case n.ready:
		return fmt.Errorf("%w: %w", ErrNotReady, errLeaseLapsed)
	}
	return fmt.Errorf("%w: JetStream buckets not created yet", ErrNotReady)
}

// WaitReady waits until Ready reports nil or ctx ends.
func (n *Node) WaitReady(ctx context.Context) error {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		err := n.Ready()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (%w)", ctx.Err(), err)
		case <-t.C:
		}
	}
}

// writeAsync publishes m to JetStream without waiting for its
// acknowledgement, once the buckets exist. A write refused at once is
// logged (what, for session id) and counted with those that fail later (the
// handler given to jetstream.New).
func (n *Node) writeAsync(m *nats.Msg, what, id string, opts ...jetstream.PublishOpt) {
	n.onBuckets(func() {
		if _, err := n.js.PublishMsgAsync(m, opts...); err != nil {
			n.asyncFailures.Add(1)
			n.log.Warn(what+" failed", "session", session.LogID(id), "err", err)
		}
	})
}

// bucketsUp reports whether the buckets exist.
func (n *Node) bucketsUp() bool {
	select {
	case <-n.up:
		return true
	default:
		return false
	}
}

// canOpen says why the node cannot make a new session durable now (nil
// when it can): it does not act for its sessions (its lease may have
// lapsed), or its last lease renewal failed (storage has no quorum, or
// the node is cut off from the others).
func (n *Node) canOpen() error {
	switch {
	case !n.bucketsUp():
		return fmt.Errorf("%w: JetStream buckets not created yet", ErrNotReady)
	case !n.acting():
		return errLeaseLapsed
	case !n.lease.healthy.Load():
		n.mu.Lock()
		err := n.lastErr
		n.mu.Unlock()
		if err == nil {
			err = errors.New("the last lease renewal failed")
		}
		return fmt.Errorf("storage cannot be written (%w)", err)
	case n.cutOff():
		return errors.New("no route to another node")
	}
	return nil
}

// onBuckets runs fn once the buckets exist (at once if they do).
func (n *Node) onBuckets(fn func()) {
	n.mu.Lock()
	if n.sessions == nil {
		n.hooks = append(n.hooks, fn)
		n.mu.Unlock()
		return
	}
	n.mu.Unlock()
	fn()
}

// Members returns the nodes with a current lease.
func (n *Node) Members(ctx context.Context) ([]string, error) {
	kv := n.kv(func() jetstream.KeyValue { return n.nodes })
	if kv == nil {
		return nil, ErrNotReady
	}
	keys, err := kv.Keys(ctx)
	if errors.Is(err, jetstream.ErrNoKeysFound) {
		return nil, nil
	}
	return keys, err
}

// waitBuckets waits until the buckets exist (a new node creates them in
// the background), ctx ends (bounded by 10 s without a deadline), or the
// node closes.
func (n *Node) waitBuckets(ctx context.Context) error {
	select {
	case <-n.up:
		return nil
	default:
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
	}
	select {
	case <-n.up:
		return nil
	case <-n.stop:
		return fmt.Errorf("%w: the node is closing", ErrNotReady)
	case <-ctx.Done():
		return fmt.Errorf("%w: %w", ErrNotReady, n.Ready())
	}
}

func (n *Node) kv(get func() jetstream.KeyValue) jetstream.KeyValue {
	n.mu.Lock()
	defer n.mu.Unlock()
	return get()
}

// Close gives up the lease (so that other nodes may take this node's
// sessions over at once), closes the connection and stops the embedded
// server.
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
		if kv := n.kv(func() jetstream.KeyValue { return n.nodes }); kv != nil && n.nc.IsConnected() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			if err := kv.Delete(ctx, n.opts.NodeID); err != nil {
				n.log.Warn("giving up the lease failed", "err", err)
			}
			cancel()
		}
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
		n.nc.Close()
		n.shutdownServer()
	})
}

func (n *Node) shutdownServer() {
	if n.ns != nil {
		n.ns.Shutdown()
		n.ns.WaitForShutdown()
	}
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
