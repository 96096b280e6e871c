package cluster_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/harness"
	"github.com/mcp-actors/mcp-actors/messages"
)

// stallingObserver holds up the session actor that answers a ping while it
// is armed: it is told of the ping on the actor, inside the session's
// mailbox run (session.Observer).
type stallingObserver struct {
	armed   atomic.Bool
	stalled chan struct{} // a mailbox run is held up
	release chan struct{}
	once    sync.Once
}

func (o *stallingObserver) RequestHandled(r mcpactors.RequestReport) {
	if r.Method == messages.MethodPing && o.armed.CompareAndSwap(true, false) {
		close(o.stalled)
		<-o.release
	}
}
func (*stallingObserver) PendingCalls(int)   {}
func (*stallingObserver) EventsReplayed(int) {}

// TestBusySessionHoldsUpNoOther: a session whose mailbox run takes long —
// here it is held up on purpose while it answers a ping routed from
// another node — delays no other session's routed messages: routed
// messages are handed to delivery workers by session, and no mailbox runs
// on the goroutine that receives the node's routed messages. (Were it run
// there, every routed message behind the ping would wait for it.)
func TestBusySessionHoldsUpNoOther(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	obs := &stallingObserver{stalled: make(chan struct{}), release: make(chan struct{})}
	defer obs.once.Do(func() { close(obs.release) })
	c := harness.NewCluster(t, 3, func(tb testing.TB) *mcpactors.Server {
		srv := mcpactors.NewServer(messages.Implementation{Name: "busy", Version: "1"}, &mcpactors.Options{Observer: obs})
		require.NoError(tb, srv.AddTool(&messages.Tool{Name: "echo", Description: "echoes"},
			func(context.Context, *mcpactors.Session, *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
				return text("echo"), nil
			}))
		return srv
	})
	// Sessions of n1's, reached through n2.
	opened := func(n uint64, _ int) int { return min(int(n), 1) }
	busy := c.Connect(harness.WithNodes(opened))
	var others []*harness.Client
	for range 4 { // four: one of them, at least, has another delivery worker than busy's
		others = append(others, c.Connect(harness.WithNodes(opened)))
	}
	for _, cl := range append(others, busy) { // routes and interest are up
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err := cl.Call(ctx, messages.MethodCallTool, map[string]any{"name": "echo"})
		cancel()
		require.NoError(t, err)
	}

	obs.armed.Store(true)
	go func() { // owned by the test: the ping ends when the observer is released
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = busy.Call(ctx, messages.MethodPing, nil)
	}()
	select {
	case <-obs.stalled:
	case <-time.After(10 * time.Second):
		t.Fatal("the busy session's ping never reached its actor")
	}
	answered := make(chan struct{}, len(others))
	for _, cl := range others {
		go func() { // owned by the test: bounded
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if _, err := cl.Call(ctx, messages.MethodCallTool, map[string]any{"name": "echo"}); err == nil {
				answered <- struct{}{}
			}
		}()
	}
	select {
	case <-answered:
	case <-time.After(5 * time.Second):
		t.Fatal("while one session's mailbox run is held up, no other session's routed message was answered")
	}
	obs.once.Do(func() { close(obs.release) })
}
