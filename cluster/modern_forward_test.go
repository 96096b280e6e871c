package cluster

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/actors/router"
	"github.com/mcp-actors/mcp-actors/messages"
)

// forwardPair is two nodes' relays: a forwards retries to b, whose serve
// is the test's.
type forwardPair struct {
	a, b *relay
	ends atomic.Int64 // end messages b received
}

func startForwardPair(t *testing.T, serve func(b *relay, ctx context.Context, req *messages.ModernRequest)) *forwardPair {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	nodes, err := StartLocal(ctx, 2, t.TempDir(), Options{ClusterName: "fwd", Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	p := &forwardPair{}
	relays := make([]*relay, 2)
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
	p.a, p.b = relays[0], relays[1]
	b := p.b
	require.NoError(t, b.ServeModern(func(ctx context.Context, req *messages.ModernRequest) { serve(b, ctx, req) }, time.Minute))
	_, err = p.b.node.nc.Subscribe(p.b.node.subj.modernEnd(p.b.node.ID()), func(*nats.Msg) { p.ends.Add(1) })
	require.NoError(t, err)
	require.NoError(t, p.b.node.nc.Flush())
	// Until the route carries b's interest to a, a's messages find no one.
	// Interest crosses the route in order: once a subscription made last
	// answers a, every earlier one reaches b.
	probe, err := p.b.node.nc.Subscribe("fwd-test.probe", func(m *nats.Msg) { _ = m.Respond(nil) })
	require.NoError(t, err)
	t.Cleanup(func() { _ = probe.Unsubscribe() })
	require.NoError(t, p.b.node.nc.Flush())
	require.Eventually(t, func() bool {
		_, err := p.a.node.nc.Request("fwd-test.probe", nil, time.Second)
		return err == nil
	}, 30*time.Second, 10*time.Millisecond)
	return p
}

// retry returns a retry whose stream is held by a, with the collector
// that takes its events.
func (p *forwardPair) retry(t *testing.T) (*messages.ModernRequest, *collector) {
	t.Helper()
	c := &collector{}
	sid := p.a.streams.Register(messages.ModernStreams, c)
	t.Cleanup(func() { p.a.streams.Unregister(sid) })
	params := `{"name":"t","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`
	m, derr := messages.Decode([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + params + `}`))
	require.Nil(t, derr)
	meta, perr := messages.ParseRequestMeta(m.Params)
	require.Nil(t, perr)
	return &messages.ModernRequest{Msg: m, Meta: meta, Stream: sid}, c
}

// settle makes sure what a and b published has reached b.
func (p *forwardPair) settle(t *testing.T) {
	t.Helper()
	require.NoError(t, p.a.node.nc.Flush())
	require.NoError(t, p.b.node.nc.Flush())
}

func (p *forwardPair) running() int {
	p.b.fwd.mu.Lock()
	defer p.b.fwd.mu.Unlock()
	return len(p.b.fwd.running)
}

func frame(stream messages.StreamID, data string, end bool) messages.StreamEvent {
	return messages.StreamEvent{Stream: stream, Session: messages.ModernStreams, Signal: messages.SignalFrame, Frame: messages.Frame{Data: []byte(data), End: end}}
}

// TestForwardAnswerCarried: a retry answered at once crosses twice: its
// answer comes in the forward's reply, and no end message follows; the
// serving node forgets the request once answered.
func TestForwardAnswerCarried(t *testing.T) {
	served := make(chan context.Context, 1)
	p := startForwardPair(t, func(b *relay, ctx context.Context, req *messages.ModernRequest) {
		served <- ctx
		b.DeliverStream(frame(req.Stream, `{"jsonrpc":"2.0","id":1,"result":{}}`, true))
	})
	req, c := p.retry(t)
	before := p.a.Stats().FramesIn
	ctx, cancel := context.WithCancel(t.Context())
	require.NoError(t, p.a.ForwardModern(ctx, p.b.node.ID(), req))
	assert.Equal(t, int64(1), p.a.carried.Load(), "the answer came in the reply")
	got := c.events()
	require.Len(t, got, 1, "and reached its stream before ForwardModern returned")
	assert.Equal(t, `{"jsonrpc":"2.0","id":1,"result":{}}`, string(got[0].Frame.Data))
	assert.Equal(t, before+1, p.a.Stats().FramesIn)
	assert.Error(t, (<-served).Err(), "the request ended on its node once answered")
	cancel() // the client's request ends
	p.settle(t)
	assert.Zero(t, p.ends.Load(), "no end message for an answered request")
	require.Eventually(t, func() bool { return p.running() == 0 }, 5*time.Second, time.Millisecond)
}

// TestForwardSlowAnswer: a retry that sends a notification before its
// answer is acknowledged first, its events follow on its stream, in
// order; one not answered within ackDelay is acknowledged then.
func TestForwardSlowAnswer(t *testing.T) {
	release := make(chan struct{})
	done := make(chan struct{})
	p := startForwardPair(t, func(b *relay, ctx context.Context, req *messages.ModernRequest) {
		b.DeliverStream(frame(req.Stream, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`, false))
		go func() {
			defer close(done)
			<-release
			b.DeliverStream(frame(req.Stream, `{"jsonrpc":"2.0","id":1,"result":{}}`, true))
		}()
	})
	req, c := p.retry(t)
	require.NoError(t, p.a.ForwardModern(t.Context(), p.b.node.ID(), req))
	close(release)
	<-done
	require.Eventually(t, func() bool { return len(c.events()) == 2 }, 5*time.Second, time.Millisecond)
	got := c.events()
	assert.Contains(t, string(got[0].Frame.Data), "notifications/progress")
	assert.True(t, got[1].Frame.End)
	require.Eventually(t, func() bool { return p.running() == 0 }, 5*time.Second, time.Millisecond)

	// Nothing within ackDelay: the plain reply comes after it.
	p2 := startForwardPair(t, func(*relay, context.Context, *messages.ModernRequest) {})
	req2, _ := p2.retry(t)
	ctx, cancel := context.WithCancel(t.Context())
	require.NoError(t, p2.a.ForwardModern(ctx, p2.b.node.ID(), req2), "acknowledged after ackDelay, within forwardTimeout")
	cancel() // the client goes away before an answer
	require.Eventually(t, func() bool { return p2.ends.Load() == 1 }, 5*time.Second, time.Millisecond, "the end message tells the node")
	require.Eventually(t, func() bool { return p2.running() == 0 }, 5*time.Second, time.Millisecond)
}

// TestForwardServedOffTheSubscription: a forwarded request whose serving
// blocks (a storage read under --single-use-request-state may take
// seconds) holds up no other forward: each is served on a goroutine of its
// own, not on the subscription's.
func TestForwardServedOffTheSubscription(t *testing.T) {
	release := make(chan struct{})
	var first atomic.Bool
	p := startForwardPair(t, func(b *relay, ctx context.Context, req *messages.ModernRequest) {
		if first.CompareAndSwap(false, true) {
			<-release // the first one blocks
		}
		b.DeliverStream(frame(req.Stream, `{"jsonrpc":"2.0","id":1,"result":{}}`, true))
	})
	defer close(release)
	blocked, _ := p.retry(t)
	go func() { _ = p.a.ForwardModern(t.Context(), p.b.node.ID(), blocked) }() // owned by the test: ends within forwardTimeout
	require.Eventually(t, first.Load, 5*time.Second, time.Millisecond)
	req, c := p.retry(t)
	require.NoError(t, p.a.ForwardModern(t.Context(), p.b.node.ID(), req), "taken while another forward blocks")
	require.Eventually(t, func() bool { return len(c.events()) == 1 }, 5*time.Second, time.Millisecond, "and answered")
}
