package cluster

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/actors/session"
)

// TestEventLogBatches: the events many sessions log at once on one node are
// written in batches, and every session's log reads back whole and in
// order on another node — with atomic batches, and one by one as for a
// NATS server without them.
func TestEventLogBatches(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	nodes, err := StartLocal(ctx, 3, t.TempDir(), Options{ClusterName: "evlog"})
	require.NoError(t, err)
	defer func() {
		for _, n := range nodes {
			n.Close()
		}
	}()
	for _, n := range nodes {
		require.NoError(t, n.waitBuckets(ctx))
	}
	require.True(t, nodes[0].atomicEvents.Load(), "the embedded server takes atomic batches")
	writer, reader := &Router{node: nodes[0]}, &Router{node: nodes[2]}

	const sessions, events = 20, 40
	for _, atomic := range []bool{true, false} {
		t.Run(fmt.Sprintf("atomic=%v", atomic), func(t *testing.T) {
			nodes[0].atomicEvents.Store(atomic)
			batches := nodes[0].evw.written.Load()
			id := func(s int) string { return "n1.s" + strconv.Itoa(s) + strconv.FormatBool(atomic) }
			var wg sync.WaitGroup
			for s := range sessions {
				wg.Go(func() {
					for i := 1; i <= events; i++ {
						writer.Journal(id(s), session.LoggedEvent{Stream: "1", Seq: uint64(i),
							Data: []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":` + strconv.Itoa(i) + `}}`),
							End:  i == events})
					}
				})
			}
			wg.Wait()
			for s := range sessions {
				var got []session.LoggedEvent
				require.Eventually(t, func() bool {
					got, err = reader.loadEvents(ctx, id(s))
					return err == nil && len(got) == events
				}, 20*time.Second, 50*time.Millisecond, "session %d: %d events read, err %v", s, len(got), err)
				for i, e := range got {
					assert.Equal(t, uint64(i+1), e.Seq, "session %d: in order", s)
				}
				assert.True(t, got[events-1].End)
			}
			written := nodes[0].evw.written.Load() - batches
			if atomic {
				assert.Less(t, written, int64(sessions*events/2), "events logged at once share batches")
			}
			assert.Positive(t, written)
			assert.Zero(t, nodes[0].asyncFailures.Load(), "no write failed")
		})
	}
}
