package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Bounded stores. The session directory and the journals are made with
// the bound a node is told (Options.SessionBytes, JournalBytes); a store
// made before (an earlier release, or other flags) takes it afterwards:
// once the node is ready, the node that creates stores sets it, one try,
// in the background. An update is a proposal to the stream's replicas,
// which JetStream may leave unanswered while one is down; waiting for it
// at start could keep a restarting node from ever becoming ready.

// boundTimeout bounds the try to set a store's bound.
const boundTimeout = 10 * time.Second

// boundStores sets the bounds of the stores made before with another, on
// the node that creates stores. On its own goroutine, which the node's
// stop waits for.
func (n *Node) boundStores(create bool) {
	defer n.stopped.Done()
	if !create {
		return
	}
	for _, b := range []struct {
		bucket string
		max    int64
	}{{"sessions", n.opts.SessionBytes}, {"journals", n.opts.JournalBytes}} {
		if err := n.boundStore("KV_"+n.subj.bucket(b.bucket), b.max); err != nil {
			n.log.Warn("setting a store's bound failed; it keeps its old one until a node that creates stores starts again",
				"store", b.bucket, "max_bytes", b.max, "err", err)
		}
	}
}

// boundStore sets stream's MaxBytes to max when it has another; a stream
// that does not exist (the journals before the first spill) is made with
// it.
func (n *Node) boundStore(stream string, max int64) error {
	ctx, cancel := context.WithTimeout(n.ctx, boundTimeout)
	defer cancel()
	s, err := n.js.Stream(ctx, stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) || errors.Is(err, context.Canceled) {
		return nil
	}
	if err != nil {
		return err
	}
	sc := s.CachedInfo().Config
	if sc.MaxBytes == max {
		return nil
	}
	old := sc.MaxBytes
	sc.MaxBytes = max
	if _, err := n.js.UpdateStream(ctx, sc); err != nil {
		return err
	}
	n.log.Info("a store took its bound", "stream", stream, "max_bytes", max, "was", old)
	return nil
}

// isStoreFull reports whether err is JetStream refusing a write that
// would take a store past its bound.
func isStoreFull(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && strings.Contains(apiErr.Description, "maximum bytes exceeded") {
		return true
	}
	return err != nil && strings.Contains(err.Error(), "maximum bytes exceeded")
}

// ErrStoreFull reports a write refused because its store reached its
// bound (Options.SessionBytes, JournalBytes, EventBytes).
var ErrStoreFull = errors.New("cluster: the store is full")

// errDirectoryFull is what opening a session says while the session
// directory is near its bound.
var errDirectoryFull = fmt.Errorf("%w: the session directory is at its bound (--sessions-bytes)", ErrStoreFull)

// The session directory's room. A replicated JetStream stream at its bound
// refuses every write — the update of a session's State, the purge of an
// ended session's record — not only a new key's. So new sessions stop at
// dirShare of the bound, leaving the rest to the sessions there: each node
// knows the directory's size from its leader (read at each lease renewal)
// plus the records it added since, and refuses a new session (503) past
// the share. Three nodes add at most what they open between two reads to
// what the others know; the rest of the bound (a fifth: 200 MiB of the
// default, half a million records) takes that.
const dirShare = 0.8

// directory is what the node knows of the session directory's size.
type directory struct {
	mu    sync.Mutex
	bytes int64 // at the last read, plus the records this node added since
	max   int64 // the bound at the last read; 0 not known yet, or none
}

// full reports whether new sessions wait for room.
func (d *directory) full() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.max > 0 && float64(d.bytes) >= dirShare*float64(d.max)
}

// added counts a record this node added.
func (d *directory) added(n int) {
	d.mu.Lock()
	d.bytes += int64(n)
	d.mu.Unlock()
}

// read sets what the directory's leader reported.
func (d *directory) read(bytes uint64, max int64) {
	d.mu.Lock()
	d.bytes, d.max = int64(bytes), max
	d.mu.Unlock()
}

// reachedBound marks the directory full: a write to it was refused for its
// bound (the others opened sessions since the last read).
func (d *directory) reachedBound() {
	d.mu.Lock()
	d.bytes = max(d.bytes, d.max)
	d.mu.Unlock()
}

// directoryFull notes a write refused for the directory's bound.
func (n *Node) directoryFull() {
	was := n.dir.full()
	n.dir.reachedBound()
	if !was {
		n.log.Warn("the session directory is at its bound: new sessions are refused until sessions end or --sessions-bytes is raised",
			"max_bytes", n.opts.SessionBytes)
	}
}

// readDirectory reads the session directory's size and bound from its
// leader. On the maintain goroutine, at each renewal: one stream
// information request.
func (n *Node) readDirectory() {
	ctx, cancel := context.WithTimeout(n.ctx, storageOpTimeout)
	defer cancel()
	s, err := n.js.Stream(ctx, n.streamOf("sessions"))
	if err != nil {
		return
	}
	info := s.CachedInfo()
	was := n.dir.full()
	n.dir.read(info.State.Bytes, info.Config.MaxBytes)
	switch now := n.dir.full(); {
	case was && !now:
		n.log.Info("the session directory has room again: new sessions are opened", "bytes", info.State.Bytes, "max_bytes", info.Config.MaxBytes)
	case !was && now:
		n.log.Warn("the session directory is near its bound: new sessions are refused until sessions end or --sessions-bytes is raised",
			"bytes", info.State.Bytes, "max_bytes", info.Config.MaxBytes)
	}
}

// StoreSize is what one store holds, and its bound.
type StoreSize struct {
	Store    string
	Bytes    uint64
	MaxBytes int64 // -1: none
	// ReplicaLag is how many operations the replica furthest behind its
	// leader has yet to apply, as the leader sees it (0 with every
	// replica current, or one replica).
	ReplicaLag uint64
}

// StoreSizes returns the size of each store that exists, read from its
// stream's leader, within ctx; a store it cannot read is left out.
func (n *Node) StoreSizes(ctx context.Context) []StoreSize {
	if !n.bucketsUp() {
		return nil
	}
	var out []StoreSize
	for _, s := range storeStreams {
		st, err := n.js.Stream(ctx, n.streamOf(s.store))
		if err != nil {
			continue
		}
		info := st.CachedInfo()
		size := StoreSize{Store: s.store, Bytes: info.State.Bytes, MaxBytes: info.Config.MaxBytes}
		if info.Cluster != nil {
			for _, p := range info.Cluster.Replicas {
				size.ReplicaLag = max(size.ReplicaLag, p.Lag)
			}
		}
		out = append(out, size)
	}
	return out
}
