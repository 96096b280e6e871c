package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
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
// on its subject and can no longer renew its lease (cut off from its
// storage), while it still holds the session. It stops acting at its
// deadline; once its key has expired, a message for the session through
// n2 takes the session over there (epoch 2) from its last acknowledged
// state. The counter the client reads never repeats nor goes back, and n1
// never acted after the takeover began.
func TestTakeoverFencesTheOldOwner(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	c := harness.NewCluster(t, 3, newCounterServer, harness.WithLeaseTTL(3*time.Second))
	var via atomic.Int64 // the node the client's messages go through
	cl := c.Connect(harness.WithNodes(func(uint64, int) int { return int(via.Load()) }))
	last := 0
	for range 3 {
		n, err := count(t, cl)
		require.NoError(t, err)
		require.Equal(t, last+1, n)
		last = n
	}

	// n1 goes deaf to routed messages, and cannot renew its lease.
	access.Router(c.Servers[0]).(interface{ Close() }).Close()
	cluster.StopRenewing(c.Nodes[0])

	// Through n2: taken over once n1's key expired, from the last
	// acknowledged value.
	via.Store(1)
	n, err := count(t, cl)
	require.NoError(t, err, "the session is served by n2 after the takeover")
	assert.False(t, c.Nodes[0].Acting(), "n1 stopped acting before the takeover")
	assert.Equal(t, last+1, n)
	last = n
	assert.Contains(t, epochMarkers(t, c.Nodes[1], cl.ID()), uint64(2),
		"the takeover marked its epoch in the session's event log before it read it")

	// From then on the count goes on from the new owner: each value is
	// the last one plus one.
	for i := range 4 {
		via.Store(int64(1 + i%2))
		n, err = count(t, cl)
		require.NoError(t, err, "through n%d", 2+i%2)
		require.Equal(t, last+1, n, "through n%d", 2+i%2)
		last = n
	}
}

// epochMarkers returns the epochs of the markers in session id's event log
// (cluster/events.go: a line "=epoch 0 0 <epoch> ").
func epochMarkers(t *testing.T, node *cluster.Node, id string) []uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	js, err := jetstream.New(node.Conn())
	require.NoError(t, err)
	s, err := js.Stream(ctx, "mcpx_"+node.ClusterName()+"_events")
	require.NoError(t, err)
	var out []uint64
	for seq := uint64(1); ; {
		m, err := s.GetMsg(ctx, seq, jetstream.WithGetMsgSubject("mcpx."+node.ClusterName()+".events."+id))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return out
		}
		require.NoError(t, err)
		seq = m.Sequence + 1
		var epoch uint64
		if _, err := fmt.Sscanf(string(m.Data), "=epoch 0 0 %d ", &epoch); err == nil {
			out = append(out, epoch)
		}
	}
}

// TestRestoreAfterLapse: a node whose deadline passed (its clock jumped:
// a suspend) gives its sessions up; once it renews its lease it starts one
// again at its next message — under a new epoch, marked in its event log,
// so that whatever its earlier run still had in flight is refused like
// another owner's. The count goes on from the last acknowledged value.
func TestRestoreAfterLapse(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	const ttl = 3 * time.Second
	clock := harness.NewFaultClock()
	c := harness.NewCluster(t, 3, newCounterServer, harness.WithLeaseTTL(ttl), harness.WithNodeOptions(func(i int, o *cluster.Options) {
		if i == 0 {
			o.Clock = clock
		}
	}))
	cl := c.Connect(harness.WithNodes(func(uint64, int) int { return 0 }))
	for want := 1; want <= 2; want++ {
		n, err := count(t, cl)
		require.NoError(t, err)
		require.Equal(t, want, n)
	}
	clock.StepWall(ttl)
	require.False(t, c.Nodes[0].Acting(), "the deadline passed")
	require.Eventually(t, c.Nodes[0].Acting, 2*ttl, 10*time.Millisecond, "renewed")
	n, err := count(t, cl)
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	assert.Contains(t, epochMarkers(t, c.Nodes[0], cl.ID()), uint64(2), "started again under a new epoch")
}
