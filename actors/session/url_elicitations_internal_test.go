package session

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mapStore is a Store in memory; err, when set, answers every call.
type mapStore struct {
	mu   sync.Mutex
	vals map[string][]byte
	gets int
	err  error
}

func (m *mapStore) Put(_ context.Context, key string, value []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return m.err
	}
	if m.vals == nil {
		m.vals = make(map[string][]byte)
	}
	m.vals[key] = value
	return nil
}

func (m *mapStore) Get(_ context.Context, key string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gets++
	if m.err != nil {
		return nil, m.err
	}
	v, ok := m.vals[key]
	if !ok {
		return nil, ErrNotStored
	}
	return v, nil
}

func isDone(w *urlWait) bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}

// TestCompletionsStore: a completion recorded by one node's registry is
// found by another's that did not hear of it, for its principal only, and
// only when the wait asks the store.
func TestCompletionsStore(t *testing.T) {
	store := &mapStore{}
	a := NewURLElicitations(time.Minute, time.Second)
	a.SetStore(store, nil)
	require.NoError(t, a.Record(t.Context(), "id/with spaces", "alice"))
	for k := range store.vals {
		assert.Regexp(t, `^url-done\.[0-9a-f]{32}$`, k, "the key is a digest of the ID")
	}

	b := NewURLElicitations(time.Minute, time.Second)
	b.SetStore(store, nil)
	w := b.watch(t.Context(), "id/with spaces", "alice", true)
	assert.True(t, isDone(w), "read from the store")
	b.unwatch(w)

	w = b.watch(t.Context(), "id/with spaces", "mallory", true)
	assert.False(t, isDone(w), "another principal's completion completes nothing")
	b.unwatch(w)

	gets := store.gets
	w = b.watch(t.Context(), "id/with spaces", "alice", false)
	assert.False(t, isDone(w))
	assert.Equal(t, gets, store.gets, "a wait that does not look up reads nothing")
	assert.True(t, b.Complete("id/with spaces", "alice"), "the wait is woken by what the node hears")
	assert.True(t, isDone(w))
	b.unwatch(w)
}

// TestCompletionsStoreUnreadable: a store that cannot be read counts as no
// record, and says so in the log.
func TestCompletionsStoreUnreadable(t *testing.T) {
	var buf bytes.Buffer
	c := NewURLElicitations(time.Minute, time.Second)
	c.SetStore(&mapStore{err: errors.New("no leader")}, slog.New(slog.NewTextHandler(&buf, nil)))
	w := c.watch(t.Context(), "x", "", true)
	defer c.unwatch(w)
	assert.False(t, isDone(w))
	assert.Contains(t, buf.String(), "could not be read")
	assert.Error(t, c.Record(t.Context(), "x", ""))
}
