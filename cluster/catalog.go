package cluster

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/mcp-actors/mcp-actors/internal/clusterapi"
)

// The catalog's replicated state, one bucket shared by every node: which
// tools are enabled, and how often each resource has changed. Code is never
// replicated: each node runs its own handlers, and a tool that a node may
// enable at runtime must be added (disabled) on every node.
//
//	key "tool.<base64url name>" = "on" | "off"
//	key "res.<base64url uri>"   = decimal version
const (
	toolKeyPrefix = "tool."
	resKeyPrefix  = "res."
	toolOn        = "on"
	toolOff       = "off"
)

func toolKey(name string) string {
	return toolKeyPrefix + base64.RawURLEncoding.EncodeToString([]byte(name))
}

func resKey(uri string) string {
	return resKeyPrefix + base64.RawURLEncoding.EncodeToString([]byte(uri))
}

// UpdateTool sets whether the tool name is enabled, cluster-wide, to what
// next makes of its state (cur when the cluster has none yet), atomically,
// and returns the state it set.
func (r *relay) UpdateTool(ctx context.Context, name string, cur bool, next func(on bool) bool) (bool, error) {
	var on bool
	err := r.updateCatalog(ctx, toolKey(name), func(old []byte) []byte {
		if old != nil {
			cur = string(old) == toolOn
		}
		on = next(cur)
		if on {
			return []byte(toolOn)
		}
		return []byte(toolOff)
	})
	return on, err
}

// BumpResource raises the version of resource uri, cluster-wide, to one
// more than the larger of the cluster's and local, and returns it.
func (r *relay) BumpResource(ctx context.Context, uri string, local uint64) (uint64, error) {
	var version uint64
	err := r.updateCatalog(ctx, resKey(uri), func(old []byte) []byte {
		n, _ := strconv.ParseUint(string(old), 10, 64)
		version = max(n, local) + 1
		return strconv.AppendUint(nil, version, 10)
	})
	return version, err
}

// applyCatalog hands one value of the bucket to w; a value of no known
// shape is skipped.
func applyCatalog(w clusterapi.CatalogWatch, key string, value []byte) {
	if enc, ok := strings.CutPrefix(key, toolKeyPrefix); ok {
		name, err := base64.RawURLEncoding.DecodeString(enc)
		if err == nil && (string(value) == toolOn || string(value) == toolOff) {
			w.Tool(string(name), string(value) == toolOn)
		}
		return
	}
	if enc, ok := strings.CutPrefix(key, resKeyPrefix); ok {
		uri, err := base64.RawURLEncoding.DecodeString(enc)
		v, verr := strconv.ParseUint(string(value), 10, 64)
		if err == nil && verr == nil {
			w.Resource(string(uri), v)
		}
	}
}

// updateCatalog sets key of the cluster's catalog state to what update
// makes of its value (nil when absent): a compare-and-swap on the key's
// revision, retried while another node changes it meanwhile. After a node
// loss the bucket may be electing a leader for a few seconds, and a read
// sent meanwhile may never be answered: each read and write is bounded,
// and one that failed that way is tried again until ctx ends.
func (r *relay) updateCatalog(ctx context.Context, key string, update func(old []byte) []byte) error {
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
func (r *relay) updateOnce(ctx context.Context, kv jetstream.KeyValue, key string, update func(old []byte) []byte) error {
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

// WatchCatalog tells w every value of the catalog state and then every
// change, in order, on one goroutine, until the relay closes. The watch
// starts once the buckets exist.
func (r *relay) WatchCatalog(w clusterapi.CatalogWatch) {
	r.node.onBuckets(func() {
		if r.closed.Load() {
			return
		}
		kv := r.node.kv(func() jetstream.KeyValue { return r.node.catalog })
		ctx, cancel := context.WithCancel(context.Background())
		kw, err := kv.WatchAll(ctx)
		if err != nil {
			cancel()
			r.node.log.Error("watching the catalog state failed", "err", err)
			return
		}
		r.mu.Lock()
		if r.closed.Load() { // Close has looked for watchStop already
			r.mu.Unlock()
			cancel()
			_ = kw.Stop()
			return
		}
		r.watchStop = func() { cancel(); _ = kw.Stop() }
		r.watchDone.Add(1) // under the lock: Close waits after it looked
		r.mu.Unlock()
		go func() {
			defer r.watchDone.Done()
			for e := range kw.Updates() {
				if e == nil || e.Operation() != jetstream.KeyValuePut {
					continue // the end of the initial values, or a deletion
				}
				applyCatalog(w, e.Key(), e.Value())
			}
		}()
	})
}
