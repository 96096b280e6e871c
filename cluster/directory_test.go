package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/actors/router"
	"github.com/mcp-actors/mcp-actors/actors/session"
)

// TestDirectoryFencing: a session's record is written over the revision
// its writer last knew, so once another node has taken the session over,
// the old owner's state write is refused (ErrFenced) and its purge at
// close removes nothing; the new owner's writes go on.
func TestDirectoryFencing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	// Fencing here is by revisions alone, the takeover made by hand: a
	// lease long enough not to be renewed during the test keeps a renewal
	// that fails under load (a lapse gives n1's sessions up, this one
	// among them) out of it. Lapses have their own test (TestLeaseLapse).
	ctx, nodes := startEventLog(t, Options{ClusterName: "fence", LeaseTTL: 10 * time.Minute})
	old, taker := &relay{node: nodes[0], ctx: ctx}, &relay{node: nodes[1], ctx: ctx}
	const id = "n1.fenced"
	old.dir.Store(id, &entry{Session: id, Owner: "n1", Epoch: 1, Principal: "p", known: true})

	write := func(r *relay, st *session.State) error {
		done := make(chan error, 1)
		r.Persist(id, st, func(err error) { done <- err })
		select {
		case err := <-done:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	require.NoError(t, write(old, &session.State{ProtocolVersion: "2025-11-25", Data: map[string][]byte{"counter": []byte("1")}}), "the first write creates the record")
	require.NoError(t, write(old, &session.State{ProtocolVersion: "2025-11-25", Data: map[string][]byte{"counter": []byte("2")}}), "the next one expects its revision")

	// n2 takes the session over, as locate does: a compare-and-swap on the
	// revision it read.
	kv := nodes[1].kv(func() jetstream.KeyValue { return nodes[1].sessions })
	rec, rev, err := taker.readRecord(ctx, kv, id)
	require.NoError(t, err)
	assert.Equal(t, "2", string(rec.State.Data["counter"]), "the last acknowledged write is read")
	next := *rec
	next.Owner, next.Epoch = "n2", rec.Epoch+1
	newRev, err := taker.swapRecord(ctx, kv, &next, rev)
	require.NoError(t, err)
	_, err = taker.swapRecord(ctx, kv, &next, rev)
	assert.ErrorIs(t, err, jetstream.ErrKeyExists, "a second takeover over the same revision loses")
	taker.dir.Store(id, &entry{Session: id, Owner: "n2", Epoch: next.Epoch, Principal: "p", rev: newRev, known: true})

	// The old owner, unaware, writes again: refused.
	err = write(old, &session.State{ProtocolVersion: "2025-11-25", Data: map[string][]byte{"counter": []byte("3")}})
	assert.ErrorIs(t, err, ErrFenced, "a write over a revision the takeover moved on is refused")
	// Its purge at close removes nothing.
	old.Forget(id)
	require.Eventually(t, func() bool { return nodes[0].js.PublishAsyncPending() == 0 }, 5*time.Second, 10*time.Millisecond)

	// The new owner's writes go on.
	require.NoError(t, write(taker, &session.State{ProtocolVersion: "2025-11-25", Data: map[string][]byte{"counter": []byte("3")}}))
	rec, _, err = taker.readRecord(ctx, kv, id)
	require.NoError(t, err)
	assert.Equal(t, "n2", rec.Owner)
	assert.Equal(t, uint64(2), rec.Epoch)
	assert.Equal(t, "3", string(rec.State.Data["counter"]))
}

// TestLeaseLapse: a node whose lease key is gone (it expired while the
// node could not renew it) gives every session up before it acts again,
// and takes a new lease.
func TestLeaseLapse(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	ctx, nodes := startEventLog(t, Options{ClusterName: "lapse", LeaseTTL: 2 * time.Second})
	n1 := nodes[0]
	require.Eventually(t, n1.Acting, 10*time.Second, 10*time.Millisecond)
	lapses := make(chan struct{}, 4)
	n1.onLapsed(func() { signal(lapses) })
	gen := n1.lease.gen.Load()

	kv := nodes[1].kv(func() jetstream.KeyValue { return nodes[1].nodes })
	require.NoError(t, kv.Delete(ctx, "n1"))
	select {
	case <-lapses:
	case <-time.After(10 * time.Second):
		t.Fatal("the node did not give its sessions up")
	}
	assert.Equal(t, gen+1, n1.lease.gen.Load())
	require.Eventually(t, func() bool {
		alive, err := nodes[1].Alive(ctx, "n1")
		return err == nil && alive && n1.Acting()
	}, 10*time.Second, 20*time.Millisecond, "it takes a new lease and acts again")
}

// TestLocateUnknown: a session ID the directory does not hold is answered
// "not found", and remembered: the next lookup reads nothing.
func TestLocateUnknown(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	ctx, nodes := startEventLog(t, Options{ClusterName: "unknown"})
	r := &relay{node: nodes[0], ctx: ctx}
	_, err := r.locate(ctx, "n1.made-up", "n1")
	require.Error(t, err)
	assert.ErrorIs(t, err, router.ErrSessionNotFound)
	assert.True(t, r.isUnknown("n1.made-up"))
	start := time.Now()
	_, err = r.locate(context.Background(), "n1.made-up", "n1")
	assert.ErrorIs(t, err, router.ErrSessionNotFound)
	assert.Less(t, time.Since(start), 50*time.Millisecond, "answered from memory")
}
