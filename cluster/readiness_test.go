package cluster

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadyWhileActing: a node whose lease renewals fail — a storage
// election fails every node's at once — stays ready while its deadline
// holds (it serves on), and says why it is not once the deadline passed.
func TestReadyWhileActing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	const ttl = 4 * time.Second
	_, nodes := startEventLog(t, Options{ClusterName: "readyacting", LeaseTTL: ttl})
	n1 := nodes[0]
	require.Eventually(t, func() bool { return n1.Ready() == nil }, 10*time.Second, 10*time.Millisecond)
	failures := n1.renewFailures.Load()
	n1.mu.Lock()
	n1.nodes = refusingLeases{n1.nodes}
	n1.mu.Unlock()
	require.Eventually(t, func() bool { return n1.renewFailures.Load() > failures }, 2*ttl, 10*time.Millisecond, "a renewal failed")
	if n1.Acting() {
		assert.NoError(t, n1.Ready(), "ready while its deadline holds")
	}
	require.Eventually(t, func() bool { return !n1.Acting() }, 2*ttl, 10*time.Millisecond)
	err := n1.Ready()
	require.ErrorIs(t, err, ErrNotReady)
	assert.Contains(t, err.Error(), "renewing the lease")
}
