package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Journals keeps the journals of modern requests too large to ride in
// their requestState (session.ModernOptions.Spill): a key-value bucket of
// its own whose entries live as long as a requestState does. The bucket
// is made at the first spill, not at start-up: most clusters never spill,
// and a node that cannot make it (another node is making it: JetStream
// drops the answers of concurrent changes, cluster/buckets.go) leaves the
// journal in the requestState and tries again at the next spill.
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
func (n *Node) Journals(ttl time.Duration) *Journals { return &Journals{node: n, ttl: ttl} }

// bucket opens (or makes) the bucket.
func (j *Journals) bucket(ctx context.Context) (jetstream.KeyValue, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.kv != nil {
		return j.kv, nil
	}
	name := j.node.subj.bucket("journals")
	kv, err := j.node.js.KeyValue(ctx, name)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		kv, err = j.node.js.CreateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket: name, Description: "mcp-actors journals of 2026-07-28 requests too large for their requestState",
			History: 1, TTL: j.ttl, Storage: jetstream.FileStorage, Replicas: j.node.opts.Replicas,
		})
		if errors.Is(err, jetstream.ErrBucketExists) {
			kv, err = j.node.js.KeyValue(ctx, name)
		}
	}
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
	return err
}

// Get reads the journal under key.
func (j *Journals) Get(ctx context.Context, key string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, journalTimeout)
	defer cancel()
	kv, err := j.bucket(ctx)
	if err != nil {
		return nil, err
	}
	e, err := kv.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	return e.Value(), nil
}
