package cluster

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
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
	ctx, nodes := startEventLog(t, Options{ClusterName: "evlog"})
	require.True(t, nodes[0].atomicEvents.Load(), "the embedded server takes atomic batches")
	writer, reader := &relay{node: nodes[0]}, &relay{node: nodes[2]}

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
						writer.LogEvent(id(s), session.LoggedEvent{Stream: "1", Seq: uint64(i),
							Data: []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":` + strconv.Itoa(i) + `}}`),
							End:  i == events})
					}
				})
			}
			wg.Wait()
			for s := range sessions {
				got := readBack(t, ctx, reader, id(s), events)
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

// TestEventLogDelay: with a delay longer than the test, events gather
// until a batch is full (then it is written at once, as one), and what is
// still gathering when the node closes is written before it goes.
func TestEventLogDelay(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	ctx, nodes := startEventLog(t, Options{ClusterName: "evdelay", EventDelay: time.Hour})
	writer, reader := &relay{node: nodes[0]}, &relay{node: nodes[2]}
	log := func(id string, from, to int) {
		for i := from; i <= to; i++ {
			writer.LogEvent(id, session.LoggedEvent{Stream: "1", Seq: uint64(i), Data: []byte(`{"n":` + strconv.Itoa(i) + `}`)})
		}
	}
	readBack := func(id string, want int) {
		t.Helper()
		got := readBack(t, ctx, reader, id, want)
		for i, e := range got {
			require.Equal(t, uint64(i+1), e.Seq, "%s: in order", id)
		}
	}

	// Two sessions fill one batch between them.
	log("n1.a", 1, maxBatch/2)
	log("n1.b", 1, maxBatch/2)
	readBack("n1.a", maxBatch/2)
	readBack("n1.b", maxBatch/2)
	assert.Equal(t, int64(1), nodes[0].evw.written.Load(), "a full batch is written at once, as one")

	// Fewer than a batch wait for the delay; closing the node writes them.
	log("n1.c", 1, 5)
	nodes[0].Close()
	readBack("n1.c", 5)
	assert.Equal(t, int64(2), nodes[0].evw.written.Load())
	assert.Zero(t, nodes[0].asyncFailures.Load(), "no write failed")
}

// startEventLog starts a three-node cluster with o (each changes one
// node's) and waits for its buckets; the nodes close when the test ends,
// and ctx bounds the test.
func startEventLog(t *testing.T, o Options, each ...LocalOption) (context.Context, []*Node) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	nodes, err := StartLocal(ctx, 3, t.TempDir(), o, each...)
	require.NoError(t, err)
	t.Cleanup(func() {
		for _, n := range nodes {
			n.Close()
		}
	})
	for _, n := range nodes {
		require.NoError(t, n.waitBuckets(ctx))
	}
	return ctx, nodes
}

// readBack reads session id's event log through reader until it holds
// want events, and returns them.
func readBack(t *testing.T, ctx context.Context, reader *relay, id string, want int) []session.LoggedEvent {
	t.Helper()
	var got []session.LoggedEvent
	var err error
	require.Eventually(t, func() bool {
		got, err = reader.loadEvents(ctx, id, 0)
		return err == nil && len(got) == want
	}, 20*time.Second, 50*time.Millisecond, "%s: %d events read, err %v", id, len(got), err)
	return got
}

// TestEventLogLeavesOutOversizedEvent: an event larger than one JetStream
// message, queued among a batch of other sessions' events, is left out of
// the log alone (counted, warned once): the batch is written whole
// without it. Before, its publish failed, and the batch with it.
func TestEventLogLeavesOutOversizedEvent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	n, err := Start(ctx, Options{NodeID: "solo", DataDir: t.TempDir(), EventDelay: time.Hour, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer n.Close()
	require.NoError(t, n.waitBuckets(ctx))
	r := &relay{node: n}
	queue := func(id string, seq int, data []byte) {
		n.evw.enqueue(&nats.Msg{Subject: n.subj.events(id), Data: encodeEvent(nil, session.LoggedEvent{Stream: "1", Seq: uint64(seq), Data: data}, 1)})
	}

	const sessions = 4
	id := func(s int) string { return "n1.s" + strconv.Itoa(s) }
	for i := range maxBatch {
		if i == maxBatch/2 {
			huge := append(append([]byte(`{"big":"`), bytes.Repeat([]byte("x"), int(n.nc.MaxPayload()))...), `"}`...)
			queue(id(0), 1000, huge)
			queue(id(0), 1001, huge)
		}
		queue(id(i%sessions), i/sessions+1, []byte(`{"n":`+strconv.Itoa(i)+`}`))
	}
	for s := range sessions {
		got := readBack(t, ctx, r, id(s), maxBatch/sessions)
		for i, e := range got {
			assert.Equal(t, uint64(i+1), e.Seq, "%s: every small event, in order", id(s))
		}
	}
	assert.Equal(t, int64(1), n.evw.written.Load(), "one batch: the others' events were not held up")
	assert.Equal(t, int64(2), n.evw.tooLarge.Load(), "the oversized events were counted")
	assert.Zero(t, n.asyncFailures.Load(), "no write failed")
}
