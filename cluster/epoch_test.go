package cluster

import (
	"context"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/actors/router"
	"github.com/mcp-actors/mcp-actors/actors/session"
	"github.com/mcp-actors/mcp-actors/messages"
)

// TestEdgeDropsEarlierOwner: every event a session's owner sends carries
// the owner's epoch, and the node holding the stream drops an event of an
// epoch lower than one it took for that stream: the late answer of an owner
// that lost the session (held in a partition that healed) never reaches a
// client after the new owner's events.
func TestEdgeDropsEarlierOwner(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	nodes, err := StartLocal(ctx, 3, t.TempDir(), Options{ClusterName: "edge", Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	relays := make([]*relay, 3)
	for i, n := range nodes {
		relays[i], err = newRelay(n, router.NewLocal(router.NewStreams(n.ID()), 0, nil), nil)
		require.NoError(t, err)
	}
	t.Cleanup(func() {
		for i, r := range relays {
			r.Close()
			nodes[i].Close()
		}
	})
	oldOwner, edge, newOwner := relays[0], relays[1], relays[2]
	const id = "n1.s"
	oldOwner.dir.Store(id, &entry{Session: id, Owner: "n1", Epoch: 1})
	newOwner.dir.Store(id, &entry{Session: id, Owner: "n3", Epoch: 2})
	c := &collector{}
	sid := edge.streams.Register(id, c)
	frame := func(data string, end bool) messages.StreamEvent {
		return messages.StreamEvent{Stream: sid, Session: id, Frame: messages.Frame{Data: []byte(data), End: end}}
	}

	// The new owner's progress reaches the stream (once the route carries
	// the edge's interest).
	require.Eventually(t, func() bool {
		if len(c.events()) == 0 {
			newOwner.DeliverStream(frame(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`, false))
		}
		return len(c.events()) > 0
	}, 30*time.Second, 50*time.Millisecond)
	assert.Equal(t, uint64(2), c.events()[0].Epoch, "an event carries its owner's epoch")

	// The old owner's answer comes late: dropped.
	require.True(t, oldOwner.DeliverStream(frame(`{"jsonrpc":"2.0","id":1,"result":{"old":true}}`, true)))
	require.Eventually(t, func() bool { return edge.streams.StaleEvents() == 1 }, 10*time.Second, 10*time.Millisecond)
	// The new owner's answer ends the stream.
	require.True(t, newOwner.DeliverStream(frame(`{"jsonrpc":"2.0","id":1,"result":{"new":true}}`, true)))
	require.Eventually(t, func() bool { return len(c.events()) == 2 }, 10*time.Second, 10*time.Millisecond)
	for _, ev := range c.events() {
		assert.NotContains(t, string(ev.Frame.Data), "old", "nothing of the old owner's reaches the stream")
	}
}

// TestEpochMarker: appends to the event log are not conditional, so an
// append of the owner that lost a session may land after the new owner
// took it over. The new owner's epoch marker, written before it reads the
// log, makes every restore skip such an append: the log reads back as the
// new owner read it, and then its own events.
func TestEpochMarker(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	ctx, nodes := startEventLog(t, Options{ClusterName: "marker", EventDelay: -1})
	oldOwner, newOwner, reader := &relay{node: nodes[0]}, &relay{node: nodes[1]}, &relay{node: nodes[2]}
	const id = "n1.marked"
	oldOwner.dir.Store(id, &entry{Session: id, Owner: "n1", Epoch: 1})
	event := func(seq uint64, end bool) session.LoggedEvent {
		return session.LoggedEvent{Stream: "1", Seq: seq, Request: messages.IntID(7), End: end, Data: []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1}}`)}
	}
	oldOwner.LogEvent(id, event(1, false))
	readBack(t, ctx, reader, id, 1)

	// The takeover: a new epoch, marked; the new owner reads the log.
	newOwner.dir.Store(id, &entry{Session: id, Owner: "n2", Epoch: 2})
	marker, err := newOwner.markEpoch(ctx, id, 2)
	require.NoError(t, err)
	read, err := newOwner.loadEvents(ctx, id, marker)
	require.NoError(t, err)
	require.Len(t, read, 1)

	// The old owner's last append lands late: its answer.
	oldOwner.LogEvent(id, event(2, true))
	require.Eventually(t, func() bool { return nodes[0].evw.durable.Load() == 2 }, 10*time.Second, 10*time.Millisecond)
	// The new owner ends the request it found unanswered.
	newOwner.LogEvent(id, session.LoggedEvent{Stream: "1", Seq: 2 + 1<<16, Request: messages.IntID(7), End: true,
		Data: []byte(`{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"lost"}}`)})

	got := readBack(t, ctx, reader, id, 2)
	assert.Equal(t, uint64(1), got[0].Seq)
	assert.Contains(t, string(got[1].Data), `"lost"`, "the new owner's answer, not the old one's")
}

// BenchmarkEpochMarker is what a takeover pays for its epoch marker: one
// append to the session's event log, waited for (three replicas, memory),
// on three routed nodes in this process. ns/op is the wall time; the
// takeover's other writes (the record's compare-and-swap) and reads (the
// lease, the record, the log) come on top.
//
//	go test -run '^$' -bench BenchmarkEpochMarker -benchtime 2000x ./cluster/
func BenchmarkEpochMarker(b *testing.B) {
	ctx, cancel := context.WithTimeout(b.Context(), 5*time.Minute)
	defer cancel()
	nodes, err := StartLocal(ctx, 3, b.TempDir(), Options{ClusterName: "marker", Logger: slog.New(slog.DiscardHandler)})
	require.NoError(b, err)
	defer func() {
		for _, n := range nodes {
			n.Close()
		}
	}()
	r := &relay{node: nodes[1]}
	b.ResetTimer()
	for i := range b.N {
		if _, err := r.markEpoch(ctx, "n1.s"+strconv.Itoa(i%64), uint64(i+2)); err != nil {
			b.Fatal(err)
		}
	}
}
