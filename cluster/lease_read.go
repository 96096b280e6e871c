package cluster

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Reading other nodes' leases: whether a node's lease has surely lapsed,
// so that its sessions may be taken over. A key JetStream expired and a
// key that was never there look the same — missing — but only the first
// proves its node stopped acting: if every replica of the lease bucket
// loses what it held while a node runs (a bucket kept in memory, as
// before 0.2 and on an external NATS deployment's choice, whose replicas
// all restarted; a store removed), every key is gone at once while their
// nodes still act, until their next renewal finds the key gone. So
// a missing key counts as lapsed only once the bucket has kept its
// present contents for a whole TTL as this node sees it, or the key has
// been missing for a TTL:
//
//   - the bucket holds one key that never expires, its incarnation (a
//     random ID written when the bucket is made, and again by the first
//     node that finds it missing); this node notes when it first saw the
//     incarnation it sees now. A key missing from an incarnation seen for
//     a TTL had a TTL to be renewed in it: its node stopped renewing, and
//     stopped acting at its deadline, before that.
//   - else, a key this node has found missing at every look for a TTL.
//
// A key deleted by its own node (Close: it gave its lease up after it
// stopped acting) carries a header that says so and counts as lapsed at
// once; a key deleted by anyone else counts as alive until it ages out.
//
//	lapsed(node) ──▶ last message of $KV.<leases>.<node> (through the leader)
//	   ├── a value ──▶ alive
//	   ├── deleted by its node (Mcp-Lease: given-up) ──▶ lapsed
//	   ├── deleted by another ──▶ alive (it ages out)
//	   └── missing ──▶ then the incarnation ──▶ seen for a TTL, or missing for a TTL? ──▶ lapsed

// headerLease marks a deletion of a lease key by its own node.
const (
	headerLease = "Mcp-Lease"
	givenUp     = "given-up"
)

// incarnationKey is the lease bucket's incarnation: not a node ID (node
// IDs have no '=').
const incarnationKey = "=incarnation"

// leaseView is what this node knows of the lease bucket: the incarnation
// it sees and since when, and the keys it has found missing, since when.
type leaseView struct {
	mu       sync.Mutex
	inc      string
	incSince time.Duration // monotonic (clock.go)
	missing  map[string]time.Duration
}

// leaseStatus is what a node's lease key says.
type leaseStatus int

const (
	leaseAlive   leaseStatus = iota // a value, or a deletion by another than its node
	leaseGivenUp                    // deleted by its node
	leaseMissing                    // nothing: expired, or never there
)

// Alive reports whether node's lease may still be current: false only once
// it has surely lapsed (see lapsed). An error means the lease bucket could
// not be read before ctx ended.
func (n *Node) Alive(ctx context.Context, node string) (bool, error) {
	lapsed, err := n.lapsed(ctx, node)
	return !lapsed, err
}

// lapsed reports whether node's lease has surely lapsed: its key was
// given up, or it is missing from an incarnation of the bucket this node
// has seen for a TTL, or this node has found it missing for a TTL. The
// bucket is read through its stream's leader (never a replica that may lag
// behind), each read bounded, and one that failed for a passing reason
// (the bucket electing a leader after a node loss) is tried again.
func (n *Node) lapsed(ctx context.Context, node string) (bool, error) {
	st, err := n.readLease(ctx, node)
	if err != nil {
		return false, err
	}
	v := &n.leases
	switch st {
	case leaseAlive:
		v.mu.Lock()
		delete(v.missing, node)
		v.mu.Unlock()
		return false, nil
	case leaseGivenUp:
		return true, nil
	}
	// Read after the key: an incarnation read before it could be older
	// than the bucket the key is missing from.
	inc, err := n.readIncarnation(ctx)
	if err != nil {
		return false, err
	}
	now, ttl := n.now().mono, n.leaseTTL()
	v.mu.Lock()
	defer v.mu.Unlock()
	n.noteIncarnation(inc, now)
	if v.missing == nil {
		v.missing = map[string]time.Duration{}
	}
	since, ok := v.missing[node]
	if !ok {
		since = now
		v.missing[node] = now
	}
	return now-since >= ttl || (v.inc != "" && now-v.incSince >= ttl), nil
}

// noteIncarnation records that the bucket's incarnation is inc ("": none)
// at now. Under leases.mu.
func (n *Node) noteIncarnation(inc string, now time.Duration) {
	v := &n.leases
	if inc != v.inc {
		v.inc, v.incSince = inc, now
	}
}

// readLease reads node's lease key.
func (n *Node) readLease(ctx context.Context, node string) (leaseStatus, error) {
	s := n.leaseStream()
	if s == nil {
		return 0, ErrNotReady
	}
	m, err := n.lastMsg(ctx, s, node)
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound):
		return leaseMissing, nil
	case err != nil:
		return 0, err
	}
	switch {
	case m.Header.Get("Nats-Marker-Reason") != "":
		return leaseMissing, nil // JetStream's own marker of a key it removed
	case m.Header.Get(headerLease) == givenUp:
		return leaseGivenUp, nil
	}
	return leaseAlive, nil
}

// readIncarnation reads the lease bucket's incarnation, and writes one
// when it is missing (the bucket was made by an earlier release, or lost
// every replica): "" until one is read.
func (n *Node) readIncarnation(ctx context.Context) (string, error) {
	s := n.leaseStream()
	if s == nil {
		return "", ErrNotReady
	}
	m, err := n.lastMsg(ctx, s, incarnationKey)
	if err == nil {
		return string(m.Data), nil
	}
	if !errors.Is(err, jetstream.ErrMsgNotFound) {
		return "", err
	}
	// Written once, never expiring; of two nodes writing at once, one
	// does. A bucket that takes no per-message TTL (a NATS server before
	// 2.11) takes none: missing keys then count after a TTL of looks.
	msg := &nats.Msg{Subject: n.subj.key("nodes", incarnationKey), Data: []byte(randomID(8)), Header: nats.Header{"Nats-TTL": {"never"}}}
	wctx, cancel := context.WithTimeout(ctx, storageOpTimeout)
	defer cancel()
	if _, err := n.js.PublishMsg(wctx, msg, jetstream.WithExpectLastSequencePerSubject(0)); err != nil && !isWrongRevision(err) {
		n.log.Debug("writing the lease bucket's incarnation failed", "err", err)
	}
	return "", nil
}

// observeIncarnation notes the bucket's incarnation after a renewal, so
// that the node knows since when it holds (a failure is left for the next
// renewal).
func (n *Node) observeIncarnation(ctx context.Context) {
	inc, err := n.readIncarnation(ctx)
	if err != nil {
		return
	}
	v := &n.leases
	v.mu.Lock()
	n.noteIncarnation(inc, n.now().mono)
	v.mu.Unlock()
}

// lastMsg reads the last message of key in the lease bucket's stream, each
// read bounded and tried again while storage is away for a moment, until
// ctx ends.
func (n *Node) lastMsg(ctx context.Context, s jetstream.Stream, key string) (*jetstream.RawStreamMsg, error) {
	var b backoff
	for {
		rctx, cancel := context.WithTimeout(ctx, storageOpTimeout)
		m, err := s.GetLastMsgForSubject(rctx, n.subj.key("nodes", key))
		cancel()
		if err == nil || errors.Is(err, jetstream.ErrMsgNotFound) || !b.retry(ctx, err) {
			return m, err
		}
	}
}

// leaseStream returns the lease bucket's stream (nil until the buckets
// exist).
func (n *Node) leaseStream() jetstream.Stream {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.leasesStream
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
	out := keys[:0]
	for _, k := range keys {
		if ValidName(k) {
			out = append(out, k)
		}
	}
	return out, err
}

// giveUpLease deletes the node's lease key, saying that its node gave it
// up (it acts no more): others take its sessions over at once. The
// deletion expects the revision the node last wrote, so that it never
// removes another process's key.
func (n *Node) giveUpLease() {
	kv := n.kv(func() jetstream.KeyValue { return n.nodes })
	if kv == nil || !n.nc.IsConnected() || n.lease.rev == 0 {
		return
	}
	msg := &nats.Msg{Subject: n.subj.key("nodes", n.opts.NodeID), Header: nats.Header{"KV-Operation": {"DEL"}, headerLease: {givenUp}}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := n.js.PublishMsg(ctx, msg, jetstream.WithExpectLastSequencePerSubject(n.lease.rev)); err != nil {
		n.log.Warn("giving up the lease failed", "err", err)
	}
}
