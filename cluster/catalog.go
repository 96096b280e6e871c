package cluster

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// UpdateCatalog sets key of the cluster's catalog state to what update
// makes of its value (nil when absent): a compare-and-swap on the key's
// revision, retried while another node changes it meanwhile. After a node
// loss the bucket may be electing a leader for a few seconds, and a read
// sent meanwhile may never be answered: each read and write is bounded,
// and one that failed that way is tried again until ctx ends. See
// mcpactors' catalog state.
func (r *Relay) UpdateCatalog(ctx context.Context, key string, update func(old []byte) []byte) error {
	if err := r.node.waitBuckets(ctx); err != nil {
		return err
	}
	kv := r.node.kv(func() jetstream.KeyValue { return r.node.catalog })
	var b backoff
	for range 64 {
		err := r.updateOnce(ctx, kv, key, update)
		switch {
		case err == nil:
			return nil
		case isWrongRevision(err):
			continue // another node changed it first: read it again
		case b.retry(ctx, err):
			continue // storage is away for a moment: look again
		}
		return fmt.Errorf("cluster: updating the catalog state: %w", err)
	}
	return errors.New("cluster: the catalog state changes too often to update")
}

// updateOnce reads key and writes what update makes of it, if nobody
// changed it meanwhile (jetstream.ErrKeyExists otherwise).
func (r *Relay) updateOnce(ctx context.Context, kv jetstream.KeyValue, key string, update func(old []byte) []byte) error {
	ctx, cancel := context.WithTimeout(ctx, storageOpTimeout)
	defer cancel()
	e, err := kv.Get(ctx, key)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		_, err = kv.Create(ctx, key, update(nil))
	case err == nil:
		_, err = kv.Update(ctx, key, update(e.Value()), e.Revision())
	}
	return err
}

// WatchCatalog calls apply with every value of the catalog state and then
// with every change, in order, on one goroutine, until the router closes.
// The watch starts once the buckets exist.
func (r *Relay) WatchCatalog(apply func(key string, value []byte)) {
	r.node.onBuckets(func() {
		if r.closed.Load() {
			return
		}
		kv := r.node.kv(func() jetstream.KeyValue { return r.node.catalog })
		ctx, cancel := context.WithCancel(context.Background())
		w, err := kv.WatchAll(ctx)
		if err != nil {
			cancel()
			r.node.log.Error("watching the catalog state failed", "err", err)
			return
		}
		r.mu.Lock()
		if r.closed.Load() { // Close has looked for watchStop already
			r.mu.Unlock()
			cancel()
			_ = w.Stop()
			return
		}
		r.watchStop = func() { cancel(); _ = w.Stop() }
		r.watchDone.Add(1) // under the lock: Close waits after it looked
		r.mu.Unlock()
		go func() {
			defer r.watchDone.Done()
			for e := range w.Updates() {
				if e == nil || e.Operation() != jetstream.KeyValuePut {
					continue // the end of the initial values, or a deletion
				}
				apply(e.Key(), e.Value())
			}
		}()
	})
}
