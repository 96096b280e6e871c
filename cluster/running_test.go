package cluster

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/actors/router"
	"github.com/mcp-actors/mcp-actors/messages"
)

// collector is a Receiver that keeps what it takes.
type collector struct {
	mu  sync.Mutex
	got []messages.StreamEvent
}

func (c *collector) Receive(ev messages.StreamEvent) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, ev)
	return true
}

func (c *collector) Gone() bool { return false }

func (c *collector) events() []messages.StreamEvent {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]messages.StreamEvent(nil), c.got...)
}

// TestLostAnswers: a request another node accepted whose stream two of
// that node's digests in a row leave out (its answer was lost on the way)
// ends with a JSON-RPC error; one the digests list, one answered already,
// one not yet accepted, or another owner's, is left alone.
func TestLostAnswers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := Start(ctx, Options{NodeID: "h", DataDir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer n.Close()
	r := &relay{node: n, streams: router.NewStreams("h")}

	recv := map[string]*collector{}
	stream := func(name, owner string, accepted bool) messages.StreamID {
		c := &collector{}
		recv[name] = c
		sid := r.streams.Register("s-"+name, c)
		rs := &remoteStream{owner: owner, session: "s-" + name, reqID: messages.StringID(name)}
		if !accepted {
			rs.req = &messages.HandleRequest{Stream: sid, Msg: &messages.Message{ID: rs.reqID}}
		}
		r.remote.Store(sid, rs)
		return sid
	}
	stream("lost", "o", true)
	answered := stream("answered", "o", true)
	running := stream("running", "o", true)
	stream("unacked", "o", false)
	stream("other", "p", true)

	digest := func(owner string, sids ...messages.StreamID) *nats.Msg {
		m := nats.NewMsg("x")
		m.Header.Set(headerOp, opRunning)
		m.Header.Set(headerOwner, owner)
		for i, s := range sids {
			if i > 0 {
				m.Data = append(m.Data, ' ')
			}
			m.Data = append(m.Data, strconv.FormatUint(s.Boot, 16)+"-"+strconv.FormatUint(s.N, 10)...)
		}
		return m
	}
	// "answered" got its response: it no longer waits on its owner.
	r.heard(messages.StreamEvent{Stream: answered, Session: "s-answered", Frame: messages.Frame{End: true, Data: []byte(`{"jsonrpc":"2.0","id":"answered","result":{}}`)}})
	r.onDigest(digest("o", running))
	for name, c := range recv {
		assert.Empty(t, c.events(), "%s: one digest without it ends nothing", name)
	}
	r.onDigest(digest("o", running))
	got := recv["lost"].events()
	require.Len(t, got, 1, "the second digest without it ends it")
	assert.True(t, got[0].Frame.End)
	m, derr := messages.Decode(got[0].Frame.Data)
	require.Nil(t, derr)
	require.NotNil(t, m.Error)
	assert.Contains(t, m.Error.Message, "lost between nodes")
	for _, name := range []string{"answered", "running", "unacked", "other"} {
		assert.Empty(t, recv[name].events(), "%s is left alone", name)
	}
	assert.Equal(t, int64(1), r.stats.lostAnswers.Load())
}

// TestSilentOwner: when an owner's digests stop — its link to this node
// failed while it keeps its lease, so no answer, digest or lapse comes —
// the requests it accepted from here more than silentBound ago end with a
// JSON-RPC error; those of an owner heard from lately, and young ones, are
// left alone.
func TestSilentOwner(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := Start(ctx, Options{NodeID: "h", DataDir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer n.Close()
	r := &relay{node: n, streams: router.NewStreams("h")}
	now := time.Now()
	recv := map[string]*collector{}
	stream := func(name, owner string, age time.Duration) {
		c := &collector{}
		recv[name] = c
		sid := r.streams.Register("s-"+name, c)
		rs := &remoteStream{owner: owner, session: "s-" + name, reqID: messages.StringID(name), sent: now.Add(-age),
			req: &messages.HandleRequest{Stream: sid, Msg: &messages.Message{ID: messages.StringID(name)}}}
		r.remote.Store(sid, rs)
		r.accepted(sid, rs) // as its acknowledgement does
	}
	stream("silent", "o", 2*silentBound)
	stream("young", "o", silentBound/2)
	stream("heard", "p", 2*silentBound)
	r.onDigest(func() *nats.Msg {
		m := nats.NewMsg("x")
		m.Header.Set(headerOp, opRunning)
		m.Header.Set(headerOwner, "p")
		return m
	}())
	r.endSilent(now)
	got := recv["silent"].events()
	require.Len(t, got, 1, "a request of an owner not heard from ends")
	m, derr := messages.Decode(got[0].Frame.Data)
	require.Nil(t, derr)
	require.NotNil(t, m.Error)
	assert.Contains(t, m.Error.Message, "has not been heard from")
	assert.Empty(t, recv["young"].events(), "a request accepted lately waits")
	// "heard" was left out of p's digest: the digest check ends it after
	// two (TestLostAnswers); silence does not.
	assert.Empty(t, recv["heard"].events(), "an owner heard from lately is not silent")
}
