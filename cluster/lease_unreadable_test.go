package cluster

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// flakyLeases is a node's lease bucket whose next answers are lost: an
// Update that lands but is answered with a timeout, a Get of one key that
// times out.
type flakyLeases struct {
	jetstream.KeyValue
	key string

	mu                   sync.Mutex
	loseUpdate, loseGets int
}

func (f *flakyLeases) Update(ctx context.Context, key string, value []byte, rev uint64) (uint64, error) {
	r, err := f.KeyValue.Update(ctx, key, value, rev)
	f.mu.Lock()
	defer f.mu.Unlock()
	if err == nil && key == f.key && f.loseUpdate > 0 {
		f.loseUpdate--
		return 0, context.DeadlineExceeded
	}
	return r, err
}

func (f *flakyLeases) Get(ctx context.Context, key string) (jetstream.KeyValueEntry, error) {
	f.mu.Lock()
	lose := key == f.key && f.loseGets > 0
	if lose {
		f.loseGets--
	}
	f.mu.Unlock()
	if lose {
		return nil, context.DeadlineExceeded
	}
	return f.KeyValue.Get(ctx, key)
}

func (f *flakyLeases) lost() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.loseUpdate == 0 && f.loseGets == 0
}

// TestLeaseRenewalUnreadable: a renewal that landed but was answered with
// a timeout leaves the node a revision behind its key; the next renewal
// meets a wrong revision, and its check of whose write that was cannot
// read the key (the bucket changing leader). That is not a lapse: the node
// keeps its sessions, tries again, and recognises its own write.
func TestLeaseRenewalUnreadable(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	_, nodes := startEventLog(t, Options{ClusterName: "unreadable", LeaseTTL: 2 * time.Second})
	n1 := nodes[0]
	require.Eventually(t, n1.Acting, 10*time.Second, 10*time.Millisecond)
	lapses := make(chan struct{}, 4)
	n1.onLapsed(func() { signal(lapses) })
	gen := n1.lease.gen.Load()

	n1.mu.Lock()
	flaky := &flakyLeases{KeyValue: n1.nodes, key: n1.opts.NodeID, loseUpdate: 1, loseGets: 1}
	n1.nodes = flaky
	n1.mu.Unlock()
	require.Eventually(t, flaky.lost, 10*time.Second, 10*time.Millisecond, "the renewals met the lost answers")
	renewals := n1.renewals.Load()
	require.Eventually(t, func() bool { return n1.renewals.Load() >= renewals+2 }, 10*time.Second, 10*time.Millisecond, "renewed since")
	select {
	case <-lapses:
		t.Fatal("an unreadable lease was taken for a lapsed one: the node gave its sessions up")
	default:
	}
	assert.Equal(t, gen, n1.lease.gen.Load())
	assert.True(t, n1.Acting())
}
