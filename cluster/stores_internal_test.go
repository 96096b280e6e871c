package cluster

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestJournalsStoreVisible: the journals bucket is one of the cluster's
// stores like the others. Before the first spill the admin view says it
// is not made yet; once made it has a leader and replicas; removed
// (remove-store journals), the next spill makes it again on the same
// node, without a restart.
func TestJournalsStoreVisible(t *testing.T) {
	ctx, nodes := startEventLog(t, Options{})
	assert.Contains(t, Stores(), "journals")
	store := func(n *Node) StoreOverview {
		o, err := n.Overview(ctx)
		require.NoError(t, err)
		i := slices.IndexFunc(o.Storage, func(s StoreOverview) bool { return s.Store == "journals" })
		require.GreaterOrEqual(t, i, 0, "the admin view lists the journals store")
		return o.Storage[i]
	}
	assert.Contains(t, store(nodes[0]).Error, "not made yet")

	j := nodes[0].Journals(0)
	require.NoError(t, j.Put(ctx, "k1", []byte("one")))
	s := store(nodes[1])
	assert.Empty(t, s.Error)
	assert.NotEmpty(t, s.Leader, "the store has a leader")
	assert.Len(t, s.Replicas, 2, "and two other replicas")
	assert.Equal(t, "KV_"+nodes[0].subj.bucket("journals"), s.Stream)

	require.NoError(t, nodes[2].RemoveStore(ctx, "journals"))
	assert.Contains(t, store(nodes[0]).Error, "not made yet")
	// The first use after the removal may fail (the opened bucket is
	// gone); the next makes it again.
	if err := j.Put(ctx, "k2", []byte("two")); err != nil {
		require.NoError(t, j.Put(ctx, "k2", []byte("two")), "the journals store is made again after %v", err)
	}
	got, err := j.Get(ctx, "k2")
	require.NoError(t, err)
	assert.Equal(t, "two", string(got))
	assert.Empty(t, store(nodes[1]).Error)
}

// TestRemoveNodeRefusals: a node is removed from the storage only once it
// is gone: not the node asked, not one it has a route to; a node the
// storage does not know is named as such.
func TestRemoveNodeRefusals(t *testing.T) {
	ctx, nodes := startEventLog(t, Options{})
	err := nodes[0].RemoveNode(ctx, nodes[0].ID())
	assert.ErrorIs(t, err, ErrNodeReachable)
	err = nodes[0].RemoveNode(ctx, nodes[1].ID())
	assert.ErrorIs(t, err, ErrNodeReachable)
	err = nodes[0].RemoveNode(ctx, "nobody")
	assert.ErrorIs(t, err, ErrUnknownNode)
}
