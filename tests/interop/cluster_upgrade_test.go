package interop_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/internal/serverbin"
)

// previousRelease is the release a rolling upgrade starts from: v0.1.0
// (CHANGELOG.md), pinned by its commit so that a clone without tags has it.
const previousRelease = "1eda934dd209e7a12d749e78e24fd1369572cfe5"

// TestClusterRollingUpgrade upgrades a three-node cluster running the
// previous release to this one, one node at a time, as docs/operations.md
// ("Upgrades") says: take the node out of the balancer, SIGTERM it, start
// this release's binary on its data directory, wait for /readyz, put it
// back; then the next.
//
// What the client sees: three sessions, one opened on each node, call
// test_counter (a counter in the session's durable data) over and over
// through every live node, throughout the upgrade. Every request is
// answered — a result, or, for a call caught in a handover, 503 or a
// JSON-RPC error that asks for a retry (a few in a run); none hangs — and
// each session's
// counter values strictly increase: no write acknowledged to the client is
// lost, and no two nodes act for a session at once, while nodes of two
// releases share the cluster.
func TestClusterRollingUpgrade(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the previous release and upgrades a three-node cluster")
	}
	args, _ := threeNodeArgs(t)
	c := startFaultClusterOf(t, serverbin.AtCommit(t, previousRelease), args)

	lb := newLiveNodes(c.nodes)
	var sessions []string
	for i := range c.nodes {
		sessions = append(sessions, rawInitialize(t, c.nodes[i]).session)
	}
	traffic := newCounterTraffic(t, lb, sessions)
	defer traffic.stop()
	traffic.progress("on the previous release")

	for i := range c.nodes {
		lb.drain(i)
		n := c.nodes[i]
		require.NoError(t, n.cmd.Process.Signal(syscall.SIGTERM))
		select {
		case <-n.exited:
		case <-time.After(stopTimeout):
			require.FailNow(t, "the old node did not stop", "n%d", i+1)
		}
		require.Equal(t, 0, n.cmd.ProcessState.ExitCode(), "n%d's exit status after SIGTERM", i+1)
		n.killed.Store(true)
		c.nodes[i] = startServer(t, args[i]...)
		ctx, cancel := context.WithTimeout(t.Context(), clusterReady)
		waitReady(t, ctx, c.nodes[i])
		cancel()
		lb.replace(i, c.nodes[i])
		traffic.progress(fmt.Sprintf("n%d upgraded", i+1))
	}
	traffic.stop()
	traffic.check()
}

// liveNodes is a load balancer's view of the cluster: the nodes, which
// are out of rotation, and the requests in flight to each. A node taken
// out of rotation is drained before it is stopped, as a balancer does:
// the requests in flight to it end first.
type liveNodes struct {
	mu       sync.Mutex
	idle     *sync.Cond // a request ended
	nodes    []*httpServer
	down     []bool
	inFlight []int
	next     int
}

func newLiveNodes(nodes []*httpServer) *liveNodes {
	l := &liveNodes{nodes: append([]*httpServer(nil), nodes...), down: make([]bool, len(nodes)), inFlight: make([]int, len(nodes))}
	l.idle = sync.NewCond(&l.mu)
	return l
}

// drain takes node i out of rotation and waits until no request is in
// flight to it.
func (l *liveNodes) drain(i int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.down[i] = true
	for l.inFlight[i] > 0 { // each request is bounded by faultCall
		l.idle.Wait()
	}
}

func (l *liveNodes) replace(i int, n *httpServer) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.nodes[i], l.down[i] = n, false
}

// pick returns the next node in rotation and the function that ends the
// request sent to it.
func (l *liveNodes) pick() (*httpServer, func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for range l.nodes {
		l.next = (l.next + 1) % len(l.nodes)
		if !l.down[l.next] {
			break
		}
	}
	i := l.next
	l.inFlight[i]++
	return l.nodes[i], func() {
		l.mu.Lock()
		l.inFlight[i]--
		l.mu.Unlock()
		l.idle.Broadcast()
	}
}

// counterTraffic calls test_counter in each session, one call after
// another per session, each on the next live node, until stopped.
type counterTraffic struct {
	t        *testing.T
	lb       *liveNodes
	sessions []string
	done     chan struct{}
	wg       sync.WaitGroup
	once     sync.Once

	mu        sync.Mutex
	values    map[string][]int // session → counter values, in the order answered
	retries   map[string]int   // answers that asked for a retry, by kind
	failed    []string         // requests not answered (transport errors), or answered otherwise
	lastError string           // the last JSON-RPC error answered
	changed   chan struct{}    // a value arrived
	ids       atomic.Int64     // the last request ID
}

// Each session's calls: one every callPace at most (a steady load, not a
// flood on this 2-core machine), maxCalls at most whatever happens.
const (
	callPace = 10 * time.Millisecond
	maxCalls = 30000
)

func newCounterTraffic(t *testing.T, lb *liveNodes, sessions []string) *counterTraffic {
	ct := &counterTraffic{t: t, lb: lb, sessions: sessions, done: make(chan struct{}),
		values: map[string][]int{}, retries: map[string]int{}, changed: make(chan struct{}, 1)}
	for _, id := range sessions {
		ct.wg.Add(1)
		go ct.run(id)
	}
	return ct
}

func (ct *counterTraffic) run(id string) {
	defer ct.wg.Done()
	pace := time.NewTicker(callPace)
	defer pace.Stop()
	for range maxCalls {
		select {
		case <-ct.done:
			return
		case <-pace.C:
		}
		ct.call(id)
	}
}

// call makes one test_counter call and records what it was answered.
func (ct *counterTraffic) call(id string) {
	n, done := ct.lb.pick()
	// Each request of a session has an ID of its own, as JSON-RPC asks: a
	// session handed over remembers the IDs it was running.
	status, body, err := postJSON(ct.t.Context(), n, id, fmt.Sprintf(
		`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"test_counter","arguments":{}}}`, ct.ids.Add(1)))
	done()
	ct.mu.Lock()
	defer ct.mu.Unlock()
	switch {
	case err != nil:
		ct.failed = append(ct.failed, fmt.Sprintf("%s on %s: %v", id, n.url, err))
	case status == http.StatusServiceUnavailable:
		ct.retries["503"]++ // the next call comes a callPace later
	case status != http.StatusOK:
		ct.failed = append(ct.failed, fmt.Sprintf("%s on %s: HTTP %d %s", id, n.url, status, body))
	case strings.Contains(body, `"error"`):
		ct.retries["JSON-RPC error"]++
		ct.lastError = body
	default:
		text, err := toolText(body)
		v, aerr := strconv.Atoi(text)
		if err != nil || aerr != nil {
			ct.failed = append(ct.failed, fmt.Sprintf("%s on %s: not a counter value: %s", id, n.url, body))
			return
		}
		ct.values[id] = append(ct.values[id], v)
		select {
		case ct.changed <- struct{}{}:
		default:
		}
	}
}

// progress waits until every session has had three more calls answered
// with a value than when it was called.
func (ct *counterTraffic) progress(what string) {
	ct.t.Helper()
	ct.mu.Lock()
	base := map[string]int{}
	for _, id := range ct.sessions {
		base[id] = len(ct.values[id])
	}
	ct.mu.Unlock()
	deadline := time.After(faultRecover)
	for {
		ct.mu.Lock()
		ok := true
		for _, id := range ct.sessions {
			ok = ok && len(ct.values[id]) >= base[id]+3
		}
		ct.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ct.changed:
		case <-deadline:
			ct.mu.Lock()
			defer ct.mu.Unlock()
			require.FailNow(ct.t, "the sessions made no progress", "%s: %s", what, ct.summary())
		}
	}
}

// summary says, in a few lines, what each session was answered. ct.mu
// is held.
func (ct *counterTraffic) summary() string {
	var b strings.Builder
	for _, id := range ct.sessions {
		vs := ct.values[id]
		fmt.Fprintf(&b, "session %s: %d values, last %v\n", id, len(vs), vs[max(0, len(vs)-5):])
	}
	fmt.Fprintf(&b, "retries %v (the last JSON-RPC error: %.300s); %d not answered", ct.retries, ct.lastError, len(ct.failed))
	for i, f := range ct.failed {
		if i == 3 {
			break
		}
		fmt.Fprintf(&b, "\n  %s", f)
	}
	return b.String()
}

func (ct *counterTraffic) stop() {
	ct.once.Do(func() { close(ct.done) })
	ct.wg.Wait()
}

// check asserts that every request was answered and every session's
// counter strictly increased.
func (ct *counterTraffic) check() {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	assert.Empty(ct.t, ct.failed, "requests not answered, or answered with neither a value nor a retry")
	for _, id := range ct.sessions {
		vs := ct.values[id]
		for i := 1; i < len(vs); i++ {
			if vs[i] <= vs[i-1] {
				assert.Fail(ct.t, "a counter went back", "session %s: %d after %d (values %v)", id, vs[i], vs[i-1], vs)
				break
			}
		}
	}
	ct.t.Log(ct.summary())
}
