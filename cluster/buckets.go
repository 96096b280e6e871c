package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/mcp-actors/mcp-actors/actors/session"
)

// createBuckets creates (or opens) the cluster's buckets, each within
// timeout. Only a creating node (create set) creates or changes a stream;
// the others open what exists, and wait (errCreatorFirst) while a bucket
// is missing or not yet as the creator leaves it. Two nodes that change a
// stream at once make JetStream drop the answers: measured, a stream's
// creation while other nodes turned its direct reads off was answered
// after neither 0.5 s nor 10 s, nor were their updates, although all took
// effect; alone, the creation is answered in under 0.1 s. Every step is
// idempotent, so startBuckets tries again from the start with short
// bounds, which it lengthens after each try that ran out (a slow machine
// answers late, not never).
func (n *Node) createBuckets(create bool, timeout time.Duration) error {
	r := n.opts.Replicas
	sessions, err := withTimeout(n.ctx, timeout, func(ctx context.Context) (jetstream.KeyValue, error) {
		kv, _, err := n.leaderBucket(ctx, create, jetstream.KeyValueConfig{
			Bucket: n.subj.bucket("sessions"), Description: "mcp-actors session directory: session ID → owner, epoch, principal, state",
			History: 1, Storage: jetstream.FileStorage, Replicas: r, LimitMarkerTTL: markerTTL, MaxBytes: n.opts.SessionBytes,
		}, false)
		return kv, err
	})
	if err != nil {
		return fmt.Errorf("creating the session directory: %w", err)
	}
	var leases jetstream.Stream
	nodes, err := withTimeout(n.ctx, timeout, func(ctx context.Context) (jetstream.KeyValue, error) {
		kv, s, err := n.leaderBucket(ctx, create, jetstream.KeyValueConfig{
			Bucket: n.subj.bucket("nodes"), Description: "mcp-actors node leases",
			History: 1, Storage: jetstream.FileStorage, Replicas: r, TTL: n.opts.LeaseTTL,
		}, true)
		leases = s
		return kv, err
	})
	if err != nil {
		return fmt.Errorf("creating the lease bucket: %w", err)
	}
	n.agreeLeaseTTL(leases.CachedInfo().Config.MaxAge)
	if leases.CachedInfo().Config.Storage == jetstream.MemoryStorage {
		n.log.Warn("the lease bucket is kept in memory (made before 0.2): a replicated bucket in memory can stay without a leader after two of its replicas restart, and no node becomes ready; move it to disk (docs/operations.md, \"Leases on disk\")")
	}
	catalog, err := withTimeout(n.ctx, timeout, func(ctx context.Context) (jetstream.KeyValue, error) {
		kv, err := n.js.KeyValue(ctx, n.subj.bucket("catalog"))
		if errors.Is(err, jetstream.ErrBucketNotFound) {
			if err := n.missingStore(create); err != nil {
				return nil, err
			}
		} else if err != nil || !create || n.replicasAsTold(ctx, "KV_"+n.subj.bucket("catalog")) {
			return kv, err
		}
		return n.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket: n.subj.bucket("catalog"), Description: "mcp-actors catalog state: enabled items, resource versions",
			History: 1, Storage: jetstream.FileStorage, Replicas: r,
		})
	})
	if err != nil {
		return fmt.Errorf("creating the catalog bucket: %w", err)
	}
	events, err := withTimeout(n.ctx, timeout, func(ctx context.Context) (jetstream.Stream, error) {
		cfg := n.eventStreamConfig()
		s, err := n.js.Stream(ctx, cfg.Name)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			if err := n.missingStore(create); err != nil {
				return nil, err
			}
		} else if err != nil || !create || !eventConfigChanged(s.CachedInfo().Config, cfg) {
			return s, err
		}
		return n.js.CreateOrUpdateStream(ctx, cfg)
	})
	if err != nil {
		return fmt.Errorf("creating the event log stream: %w", err)
	}
	if have, want := events.CachedInfo().Config.Storage, n.eventStreamConfig().Storage; have != want {
		n.log.Warn("the event log is kept in another storage than this node's flags ask (JetStream cannot change it): the node uses it as it is; to change it, remove the events store (docs/operations.md, \"The event log's storage\")",
			"kept_in", have.String(), "asked", want.String())
	}
	// A server before 2.12 ignores what it does not know: events go one by one.
	n.atomicEvents.Store(events.CachedInfo().Config.AllowAtomicPublish)
	n.mu.Lock()
	n.sessions, n.nodes, n.leasesStream, n.catalog, n.events = sessions, nodes, leases, catalog, events
	hooks := n.hooks
	n.hooks = nil
	n.mu.Unlock()
	close(n.up)
	for _, h := range hooks {
		h()
	}
	return nil
}

// The bound of a bucket's creation (or opening): the first try's, and the
// longest, after tries that ran out.
const (
	bucketTimeout    = 500 * time.Millisecond
	maxBucketTimeout = 5 * time.Second
)

// A store that exists is updated only when the node's flags ask for
// another configuration: an update is a proposal to the stream's
// replicas, and while one of them is down (a node lost, or restarting)
// JetStream may leave it unanswered, and a restarting node would wait for
// ever to be ready.

// replicasAsTold reports whether the stream keeps the replicas the node
// is told (--replicas); false when it cannot tell.
func (n *Node) replicasAsTold(ctx context.Context, stream string) bool {
	s, err := n.js.Stream(ctx, stream)
	return err == nil && s.CachedInfo().Config.Replicas == n.opts.Replicas
}

// eventConfigChanged reports whether the event log's stream, as it is
// (have), differs from what the node's flags make it (want) in what the
// node sets.
func eventConfigChanged(have, want jetstream.StreamConfig) bool {
	return have.Replicas != want.Replicas || have.MaxAge != want.MaxAge || have.MaxBytes != want.MaxBytes ||
		have.MaxMsgsPerSubject != want.MaxMsgsPerSubject || have.Discard != want.Discard ||
		have.AllowDirect != want.AllowDirect || have.AllowAtomicPublish != want.AllowAtomicPublish ||
		have.Description != want.Description || !slices.Equal(have.Subjects, want.Subjects)
}

// missingStore says what the node does about a store that does not
// exist: nil to create it; else why not now (errCreatorFirst: another
// node creates it; a storeWaitError: not every replica's node is here to
// hold it).
func (n *Node) missingStore(create bool) error {
	if !create {
		return errCreatorFirst
	}
	if w := n.newStoreWait(); w != "" {
		return storeWaitError(w)
	}
	return nil
}

// storeWaitError is newStoreWait's answer as an error: a store cannot be
// created yet.
type storeWaitError string

func (e storeWaitError) Error() string { return string(e) }

// withTimeout runs fn with a context that ends after d (or with parent).
func withTimeout[T any](parent context.Context, d time.Duration, fn func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(parent, d)
	defer cancel()
	return fn(ctx)
}

// leaderBucket opens (creating it if needed) a bucket whose reads go to
// its stream's leader, never to a replica that may lag behind it: the
// leases and the session directory, whose reads decide who owns a session.
// A key-value bucket answers reads from any replica by default ("direct
// gets"); the stream's AllowDirect is turned off, and the bucket is opened
// again so that it reads from the leader. With msgTTL (the leases) it also
// takes per-message TTLs, for its incarnation key (lease_read.go): the
// creator turns them on, and the others do not wait for it (a NATS server
// before 2.11 has none).
func (n *Node) leaderBucket(ctx context.Context, create bool, cfg jetstream.KeyValueConfig, msgTTL bool) (jetstream.KeyValue, jetstream.Stream, error) {
	kv, err := n.js.KeyValue(ctx, cfg.Bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		if err := n.missingStore(create); err != nil {
			return nil, nil, err
		}
		kv, err = n.js.CreateKeyValue(ctx, cfg)
		if errors.Is(err, jetstream.ErrBucketExists) {
			kv, err = n.js.KeyValue(ctx, cfg.Bucket) // another node created it meanwhile
		}
	}
	if err != nil {
		return nil, nil, err
	}
	s, err := n.js.Stream(ctx, "KV_"+cfg.Bucket)
	if err != nil {
		return nil, nil, err
	}
	sc := s.CachedInfo().Config
	leader := !sc.AllowDirect && sc.Replicas == cfg.Replicas
	if leader && (!msgTTL || sc.AllowMsgTTL || !create) {
		return kv, s, nil // opened as it is now: it reads from the leader
	}
	if !create {
		return nil, nil, errCreatorFirst // the creator is still making it so
	}
	// Read from the leader; and keep as many replicas as the node is told
	// (--replicas changed since the bucket was made: JetStream adds or
	// removes replicas, keeping what the bucket holds).
	sc.AllowDirect, sc.Replicas = false, cfg.Replicas
	sc.AllowMsgTTL = sc.AllowMsgTTL || msgTTL
	if _, err := n.js.UpdateStream(ctx, sc); err != nil {
		return nil, nil, err
	}
	kv, err = n.js.KeyValue(ctx, cfg.Bucket)
	if err != nil {
		return nil, nil, err
	}
	if s, err = n.js.Stream(ctx, "KV_"+cfg.Bucket); err != nil {
		return nil, nil, err
	}
	if s.CachedInfo().Config.AllowDirect {
		return nil, nil, errors.New("bucket " + cfg.Bucket + " still reads from replicas")
	}
	return kv, s, nil
}

// agreeLeaseTTL makes the node use the lease bucket's TTL, ttl, when it
// was told another. Every node must fence itself by the TTL the bucket
// expires keys by: a node that counted on a longer one would act on after
// its key expired, and another could take its sessions over meanwhile (a
// rolling change of --lease-ttl). The bucket's is the first creator's; the
// node warns, naming both.
func (n *Node) agreeLeaseTTL(ttl time.Duration) {
	if ttl <= 0 || ttl == n.leaseTTL() {
		return
	}
	n.log.Warn("the lease bucket expires leases after another TTL than this node's --lease-ttl: the node uses the bucket's (to change it, see docs/operations.md, \"Changing the lease TTL\")",
		"bucket", ttl, "lease_ttl", n.leaseTTL())
	n.lease.ttl.Store(int64(ttl))
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

// kv returns the bucket get picks from the Node's fields, read under mu
// (nil until the buckets exist).
func (n *Node) kv(get func() jetstream.KeyValue) jetstream.KeyValue {
	n.mu.Lock()
	defer n.mu.Unlock()
	return get()
}

// eventStream returns the stream of the sessions' event logs (nil until
// the buckets exist).
func (n *Node) eventStream() jetstream.Stream {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.events
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
