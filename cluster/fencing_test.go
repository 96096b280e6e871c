package cluster_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/cluster"
	"github.com/mcp-actors/mcp-actors/harness"
	"github.com/mcp-actors/mcp-actors/internal/access"
	"github.com/mcp-actors/mcp-actors/messages"
)

// newCounterServer serves "counter": it increments the session's data key
// "counter" and returns the new value, as the reference set's test_counter
// does.
func newCounterServer(tb testing.TB) *mcpactors.Server {
	srv := mcpactors.NewServer(messages.Implementation{Name: "counter", Version: "1"}, nil)
	err := srv.AddTool(&messages.Tool{Name: "counter", Description: "counts"},
		func(ctx context.Context, s *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			n := 0
			if v, ok, err := s.GetData(ctx, "counter"); err != nil {
				return nil, err
			} else if ok {
				n, _ = strconv.Atoi(string(v))
			}
			n++
			if err := s.PutData(ctx, "counter", []byte(strconv.Itoa(n))); err != nil {
				return nil, err
			}
			return &messages.CallToolResult{Content: messages.ContentList{&messages.TextContent{Text: strconv.Itoa(n)}}}, nil
		})
	require.NoError(tb, err)
	return srv
}

// count calls "counter" and returns its value, or 0 with the error the
// client saw (a JSON-RPC error, or a tool error).
func count(t *testing.T, cl *harness.Client) (int, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var res messages.CallToolResult
	if err := cl.CallResult(ctx, messages.MethodCallTool, map[string]any{"name": "counter"}, &res); err != nil {
		return 0, err
	}
	text := res.Content[0].(*messages.TextContent).Text
	if res.IsError {
		return 0, &toolError{text}
	}
	n, err := strconv.Atoi(text)
	if err != nil {
		return 0, fmt.Errorf("counter answered %q: %w", text, err)
	}
	return n, nil
}

type toolError struct{ text string }

func (e *toolError) Error() string { return e.text }

// TestTakeoverFencesTheOldOwner: a session's owner (n1) stops answering
// on its subject while it still runs the session, and its lease is gone
// as the others see it. A message for the session through n2 takes the
// session over there (epoch 2) from its last acknowledged state. What the
// old copy on n1 does next — a call that reached it directly — cannot
// write: its write expects a revision the takeover moved on, so the call
// fails and n1 gives the session up. The counter the client reads never
// repeats nor goes back.
func TestTakeoverFencesTheOldOwner(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	c := harness.NewCluster(t, 3, newCounterServer)
	var via atomic.Int64 // the node the client's messages go through
	cl := c.Connect(harness.WithNodes(func(uint64, int) int { return int(via.Load()) }))
	last := 0
	for range 3 {
		n, err := count(t, cl)
		require.NoError(t, err)
		require.Equal(t, last+1, n)
		last = n
	}

	// n1 goes deaf to routed messages, and its lease key is gone.
	access.Router(c.Servers[0]).(*cluster.Relay).Close()
	js, err := jetstream.New(c.Nodes[1].Conn())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	leases, err := js.KeyValue(ctx, "mcpx_"+c.Nodes[0].ClusterName()+"_nodes")
	require.NoError(t, err)
	require.NoError(t, leases.Delete(ctx, "n1"))
	// n1's node goes on renewing: its next renewal finds the key gone, so
	// it gives its sessions up and takes a new lease, and the others would
	// wait for a lapse that never comes (n1 stays deaf). Until the
	// takeover, the key is deleted again as soon as it is back.
	stopDeleting := make(chan struct{})
	var deleter sync.WaitGroup
	deleter.Go(func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stopDeleting:
				return
			case <-tick.C:
				_ = leases.Delete(ctx, "n1")
			}
		}
	})

	// Through n2: taken over, from the last acknowledged value.
	via.Store(1)
	n, err := count(t, cl)
	close(stopDeleting)
	deleter.Wait()
	require.NoError(t, err, "the session is served by n2 after the takeover")
	assert.Equal(t, last+1, n)
	last = n

	// Through n1, whose copy may still run: fenced, or given up already.
	via.Store(0)
	n, err = count(t, cl)
	failed := err != nil
	if failed {
		t.Logf("through n1: %v", err)
	} else {
		assert.Equal(t, last+1, n, "a value n1 answers is the next one")
		last = n
	}

	// From then on the count goes on from the new owner (n1 stays deaf:
	// no frame reaches it): each value is the last one plus one, or more
	// only right after a call that failed (its write may have landed).
	for i := range 4 {
		via.Store(int64(1 + i%2))
		require.Eventually(t, func() bool {
			n, err = count(t, cl)
			if err != nil {
				t.Logf("through n%d: %v", 2+i%2, err)
				failed = true
			}
			return err == nil
		}, 20*time.Second, 100*time.Millisecond, "served again through n%d", 2+i%2)
		if failed {
			require.Greater(t, n, last, "through n%d: never a repeat or a step back", 2+i%2)
		} else {
			require.Equal(t, last+1, n, "through n%d", 2+i%2)
		}
		last, failed = n, false
	}
}
