package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/mcp-actors/mcp-actors/actors/session"
)

// Journals keeps the journals of modern requests too large to ride in
// their requestState, and the records of continuations that answered
// (session.ModernOptions.Spill): a key-value bucket of its own whose
// entries live as long as a requestState does. The bucket is made at its
// first use, not at start-up: a cluster that serves no input rounds never
// needs it, and a node that cannot make it (another node is making it:
// JetStream drops the answers of concurrent changes, cluster/buckets.go)
// leaves the journal in the requestState, or the answer recorded on its
// node alone, and tries again at the next use.
type Journals struct {
	node *Node
	ttl  time.Duration

	mu sync.Mutex
	kv jetstream.KeyValue // nil until made or opened
}

// journalTimeout bounds one spill or read.
const journalTimeout = 2 * time.Second

// Journals returns the node's store of spilled journals, whose entries
// live ttl.
func (n *Node) Journals(ttl time.Duration) session.Store { return &Journals{node: n, ttl: ttl} }

// bucket opens (or makes) the bucket. Its reads go to its stream's
// leader (leaderBucket), never to a replica that may lag behind it: an
// answered record written just before the leader was lost is read on a
// survivor as written. Two nodes making it at once may both wait out ctx
// (cluster/buckets.go); each tries again at its next use.
func (j *Journals) bucket(ctx context.Context) (jetstream.KeyValue, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.kv != nil {
		return j.kv, nil
	}
	kv, _, err := j.node.leaderBucket(ctx, true, jetstream.KeyValueConfig{
		Bucket: j.node.subj.bucket("journals"), Description: "mcp-actors journals and answered rounds of 2026-07-28 requests",
		History: 1, TTL: j.ttl, Storage: jetstream.FileStorage, Replicas: j.node.opts.Replicas, MaxBytes: j.node.opts.JournalBytes,
	}, false)
	if err != nil {
		return nil, fmt.Errorf("cluster: the journal bucket: %w", err)
	}
	j.kv = kv
	return kv, nil
}

// Put stores a journal under key.
func (j *Journals) Put(ctx context.Context, key string, value []byte) error {
	ctx, cancel := context.WithTimeout(ctx, journalTimeout)
	defer cancel()
	kv, err := j.bucket(ctx)
	if err != nil {
		return err
	}
	_, err = kv.Put(ctx, key, value)
	j.forgetIfGone(err)
	if isStoreFull(err) {
		return fmt.Errorf("%w: the journals are at their bound (--journal-bytes): %w", ErrStoreFull, err)
	}
	return err
}

// forgetIfGone drops the opened bucket when err says its stream may be
// gone (an operator removed the store: `admin remove-store journals`), so
// that the next use opens it again, or makes it.
func (j *Journals) forgetIfGone(err error) {
	if errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, jetstream.ErrStreamNotFound) || errors.Is(err, jetstream.ErrBucketNotFound) {
		j.mu.Lock()
		j.kv = nil
		j.mu.Unlock()
	}
}

// Get reads the journal under key; session.ErrNotStored when there is
// none.
func (j *Journals) Get(ctx context.Context, key string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, journalTimeout)
	defer cancel()
	kv, err := j.bucket(ctx)
	if err != nil {
		return nil, err
	}
	e, err := kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, fmt.Errorf("cluster: the journal bucket: %w", session.ErrNotStored)
	}
	if err != nil {
		j.forgetIfGone(err)
		return nil, err
	}
	return e.Value(), nil
}
