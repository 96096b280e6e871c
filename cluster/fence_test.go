package cluster_test

import (
	"context"
	json "encoding/json/v2"
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

// The fences of a node whose deadline passed, each on its own: the node
// keeps its sessions (KeepSessionsAtLapse), so nothing but the fence under
// test stands between it and acting for them. Each fence is one line of
// the cluster package; the test that fails without it is named in
// tests/faults/README.md.

// fenceServers is the catalog of the fence tests, with what each node's
// handlers did: runs counts "counter" runs per node; "wait" and "write"
// block until release is closed, whatever their context says (a handler
// that does not look at its context), then answer "released" or write the
// session's data.
type fenceServers struct {
	runs    [3]atomic.Int64
	started chan struct{} // a "wait" or "write" run began
	release chan struct{}
	wrote   chan error
	ended   chan error // a "hold" run's context ended, with its cause
}

func newFenceServers() *fenceServers {
	return &fenceServers{started: make(chan struct{}, 1), release: make(chan struct{}), wrote: make(chan error, 1), ended: make(chan error, 1)}
}

func (f *fenceServers) server(node int) func(testing.TB) *mcpactors.Server {
	return func(tb testing.TB) *mcpactors.Server {
		srv := newCounterServer(tb)
		srv.RemoveTools("counter")
		err := srv.AddTool(&messages.Tool{Name: "counter", Description: "counts"},
			func(ctx context.Context, s *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
				f.runs[node].Add(1)
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
				return text(strconv.Itoa(n)), nil
			})
		require.NoError(tb, err)
		require.NoError(tb, srv.AddTool(&messages.Tool{Name: "wait", Description: "waits for the test"},
			func(context.Context, *mcpactors.Session, *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
				f.started <- struct{}{}
				<-f.release
				return text("released"), nil
			}))
		require.NoError(tb, srv.AddTool(&messages.Tool{Name: "write", Description: "writes when the test says"},
			func(ctx context.Context, s *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
				f.started <- struct{}{}
				<-f.release
				err := s.PutData(context.WithoutCancel(ctx), "counter", []byte("999"))
				f.wrote <- err
				return text("wrote"), nil
			}))
		require.NoError(tb, srv.AddTool(&messages.Tool{Name: "hold", Description: "holds until its context ends"},
			func(ctx context.Context, _ *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
				f.started <- struct{}{}
				<-ctx.Done()
				f.ended <- context.Cause(ctx)
				return text("held"), nil
			}))
		return srv
	}
}

// await waits until a "wait" or "write" run has begun.
func (f *fenceServers) await(t *testing.T) {
	t.Helper()
	select {
	case <-f.started:
	case <-time.After(20 * time.Second):
		t.Fatal("the handler did not start")
	}
}

// countWithin is count with a shorter bound: a refused message gets no
// answer in the harness (its delivery error is not the client's).
func countWithin(t *testing.T, cl *harness.Client, d time.Duration) (int, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var res messages.CallToolResult
	if err := cl.CallResult(ctx, messages.MethodCallTool, map[string]any{"name": "counter"}, &res); err != nil {
		return 0, err
	}
	return strconv.Atoi(res.Content[0].(*messages.TextContent).Text)
}

func text(s string) *messages.CallToolResult {
	return &messages.CallToolResult{Content: messages.ContentList{&messages.TextContent{Text: s}}}
}

// startFenced starts three nodes whose first has a fault clock, each with
// the fence servers, and returns the cluster, the clock and a function
// that fences n1: its wall clock jumps past its deadline (as after a
// suspend), it renews no more, and it keeps its sessions.
func startFenced(t *testing.T, f *fenceServers) (*harness.Cluster, func()) {
	const ttl = 3 * time.Second
	clock := harness.NewFaultClock()
	var i atomic.Int64
	c := harness.NewCluster(t, 3, func(tb testing.TB) *mcpactors.Server { return f.server(int(i.Add(1) - 1))(tb) },
		harness.WithLeaseTTL(ttl), harness.WithNodeOptions(func(i int, o *cluster.Options) {
			if i == 0 {
				o.Clock = clock
			}
		}))
	cluster.KeepSessionsAtLapse(c.Nodes[0])
	return c, func() {
		cluster.StopRenewing(c.Nodes[0])
		clock.StepWall(ttl)
		require.False(t, c.Nodes[0].Acting())
	}
}

// TestFenceOnDeliveries: past its deadline, a node delivers nothing to its
// sessions — neither a message that reaches it from its own transport nor
// one routed from another node — although they are still there.
func TestFenceOnDeliveries(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	f := newFenceServers()
	c, fence := startFenced(t, f)
	var via atomic.Int64
	cl := c.Connect(harness.WithNodes(func(uint64, int) int { return int(via.Load()) }))
	n, err := count(t, cl)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, int64(1), f.runs[0].Load())

	fence()
	_, err = countWithin(t, cl, 3*time.Second)
	assert.Error(t, err, "through n1 itself: refused")
	via.Store(1)
	n, err = countWithin(t, cl, 3*time.Second)
	if err == nil {
		assert.Equal(t, 2, n, "through n2: answered only after a takeover, from the last acknowledged value")
	}
	assert.Equal(t, int64(1), f.runs[0].Load(), "n1 ran no handler past its deadline")
}

// TestFenceOnFrames: a handler that answers after its node's deadline —
// one that did not look at its context — has its response replaced with
// a JSON-RPC error on its way to the node holding the client's stream:
// the node may no longer speak for the session.
func TestFenceOnFrames(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	f := newFenceServers()
	c, fence := startFenced(t, f)
	// Opened on n1; the call goes through n2, which holds its stream.
	cl := c.Connect(harness.WithNodes(func(n uint64, _ int) int { return min(int(n), 1) }))
	res := make(chan error, 1)
	go func() { // owned by the test: it ends with the call, bounded
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var out messages.CallToolResult
		res <- cl.CallResult(ctx, messages.MethodCallTool, map[string]any{"name": "wait"}, &out)
	}()
	f.await(t)
	fence()
	close(f.release)
	err := <-res
	require.Error(t, err, "the response a fenced node made is not given")
	assert.Contains(t, err.Error(), "may no longer own the session")
}

// TestFenceOnWrites: a handler that writes its session's data after its
// node's deadline — before any other node took the session over, so that
// the record's revision has not moved — is refused: the record keeps the
// last value written while the node acted.
func TestFenceOnWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	f := newFenceServers()
	c, fence := startFenced(t, f)
	cl := c.Connect(harness.WithNodes(func(uint64, int) int { return 0 }))
	n, err := count(t, cl)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	go func() { // owned by the test: it ends when release is closed, bounded
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var out messages.CallToolResult
		_ = cl.CallResult(ctx, messages.MethodCallTool, map[string]any{"name": "write"}, &out)
	}()
	f.await(t)
	fence()
	close(f.release)
	select {
	case err := <-f.wrote:
		assert.Error(t, err, "a write past the deadline is refused")
	case <-time.After(20 * time.Second):
		t.Fatal("the handler did not write")
	}
	assert.Equal(t, "1", recordData(t, c.Nodes[1], cl.ID(), "counter"), "the record keeps the last acknowledged value")
}

// recordData reads key of session id's data from its directory record.
func recordData(t *testing.T, node *cluster.Node, id, key string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	js, err := jetstream.New(node.Conn())
	require.NoError(t, err)
	kv, err := js.KeyValue(ctx, "mcpx_"+node.ClusterName()+"_sessions")
	require.NoError(t, err)
	e, err := kv.Get(ctx, id)
	require.NoError(t, err)
	var rec struct {
		State struct {
			Data map[string][]byte `json:"data"`
		} `json:"state"`
	}
	require.NoError(t, json.Unmarshal(e.Value(), &rec))
	return string(rec.State.Data[key])
}

// TestFenceCancelsHandlers: at its deadline a node cancels every handler
// of its sessions — their contexts end with the lease — even while the
// sessions themselves are still there: no handler of a session runs on
// once another node may take the session over.
func TestFenceCancelsHandlers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	f := newFenceServers()
	c, fence := startFenced(t, f)
	cl := c.Connect(harness.WithNodes(func(uint64, int) int { return 0 }))
	go func() { // owned by the test: the call ends when the handler does, bounded
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var out messages.CallToolResult
		_ = cl.CallResult(ctx, messages.MethodCallTool, map[string]any{"name": "hold"}, &out)
	}()
	f.await(t)
	fence()
	select {
	case cause := <-f.ended:
		assert.ErrorContains(t, cause, "lease may have lapsed")
	case <-time.After(2 * time.Second):
		t.Fatal("the handler's context did not end at the deadline")
	}
}

// TestRestoreSpanningAGiveUp: a node that starts a session from its record
// (here, taking it over from a lost node) and gives its sessions up while
// the start is under way — its deadline passed meanwhile — does not keep
// the session it was starting: the give-up could not close it, so the
// start closes it itself and the message that asked for it is not
// delivered.
func TestRestoreSpanningAGiveUp(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	const ttl = 3 * time.Second
	f := newFenceServers()
	clock := harness.NewFaultClock()
	var i atomic.Int64
	c := harness.NewCluster(t, 3, func(tb testing.TB) *mcpactors.Server { return f.server(int(i.Add(1) - 1))(tb) },
		harness.WithLeaseTTL(ttl), harness.WithNodeOptions(func(i int, o *cluster.Options) {
			if i == 1 {
				o.Clock = clock
			}
		}))
	var via atomic.Int64
	cl := c.Connect(harness.WithNodes(func(uint64, int) int { return int(via.Load()) }))
	n, err := count(t, cl)
	require.NoError(t, err)
	require.Equal(t, 1, n)

	entered, gate := make(chan struct{}, 1), make(chan struct{})
	cluster.GateEventReads(c.Nodes[1], entered, gate)
	c.Nodes[0].Kill()
	via.Store(1)
	res := make(chan error, 1)
	go func() { // owned by the test: bounded by countWithin
		_, err := countWithin(t, cl, 20*time.Second)
		res <- err
	}()
	select {
	case <-entered: // n2 took the session over and reads its log
	case <-time.After(4 * ttl):
		t.Fatal("n2 did not take the session over")
	}
	lease := c.Nodes[1].LeaseContext()
	clock.StepWall(ttl)
	select {
	case <-lease.Done(): // n2 gave its sessions up
	case <-time.After(2 * time.Second):
		t.Fatal("n2 did not give its sessions up")
	}
	close(gate)
	require.Error(t, <-res, "the message that started the session is not delivered")
	ref, ok := access.Session(c.Servers[1], cl.ID())
	if ok {
		select {
		case <-ref.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("the session started across the give-up is still there")
		}
	}
}
