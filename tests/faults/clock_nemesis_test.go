package faults_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	mcpcluster "github.com/mcp-actors/mcp-actors/cluster"
	"github.com/mcp-actors/mcp-actors/harness"
	"github.com/mcp-actors/mcp-actors/messages"
	"github.com/mcp-actors/mcp-actors/reftools"
)

// The faults of the clock nemesis (TestClockNemesis), each on one node's
// fault clock.
const (
	clockStep    = "step"    // its wall clock stepped 0.5–2 leases, forward or back (NTP); stepped back by as much at the heal
	clockSuspend = "suspend" // its wall clock on 1–2 leases, its monotonic reading not: a host suspended and resumed
	clockDrift   = "drift"   // both readings at 0.9–1.1 times real time for the hold, then at 1 again
	clockJump    = "jump"    // both readings on 0.5–2 leases: a process frozen that runs again
)

// clockFaults are what the clock nemesis draws from, each as likely.
var clockFaults = []string{clockStep, clockSuspend, clockDrift, clockJump}

// TestClockNemesis is TestNemesis's process-level variant: three nodes
// in this process (harness.NewCluster, lease faultLease), each measuring
// its lease by a harness.FaultClock of its own and serving the reference
// set; two sessions opened through each node, calling test_counter,
// test_counter_get and, one call in ten, test_hold (0.2 s) through every
// node in turn (clockSession); and, for the campaign's time
// (MCP_ACTORS_NEMESIS_DURATION, 1m by default), a nemesis that draws from
// the seed (MCP_ACTORS_NEMESIS_SEED) one clock fault at a time on a node
// it draws — a wall-clock step forward or back, a suspend, a drift, a
// jump of both readings — holds it 0.5 to 2.5 leases, heals it, waits
// until every node is ready and lets a lease pass. No namespaces: it runs
// wherever the tests run (not under -short).
//
// What the client sees: a node whose clock says its lease deadline has
// come — its wall clock stepped forward, a suspend, a jump, a fast drift
// — stops acting at once: its calls are refused (503) or end with an
// error, its test_hold runs are cancelled, and it acts again after its
// next renewal; a wall clock stepped back, or a slow drift within the
// lease margin, changes nothing a client sees (the monotonic reading
// holds the deadline). Whatever the clocks do, a session's counter never
// repeats or steps back, reads are linearizable, and no handler of a
// session runs on two nodes at once (the runs answered, and those the
// nodes logged); every call ends within its bound; once the last fault is
// healed every session is answered again. The summary logs each fault,
// whether its node was fenced, and how long until it acted again.
func TestClockNemesis(t *testing.T) {
	camp := newCampaign(t, time.Minute)
	var clocks []*harness.FaultClock
	var logs []*syncLog
	for range 3 {
		clocks = append(clocks, harness.NewFaultClock())
		logs = append(logs, &syncLog{})
	}
	var made atomic.Int64
	newServer := func(tb testing.TB) *mcpactors.Server {
		i := int(made.Add(1) - 1) // NewCluster makes node i's server i-th
		log := slog.New(slog.NewTextHandler(logs[i], nil))
		srv := mcpactors.NewServer(messages.Implementation{Name: "clock-nemesis", Version: "1"}, &mcpactors.Options{Logger: log})
		require.NoError(tb, reftools.Register(srv, reftools.WithNodeID(fmt.Sprintf("n%d", i+1)), reftools.WithLogger(log)))
		return srv
	}
	c := harness.NewCluster(t, 3, newServer, harness.WithLeaseTTL(faultLease), harness.WithNodeOptions(func(i int, o *mcpcluster.Options) {
		o.Clock = clocks[i]
		o.Logger = slog.New(slog.NewTextHandler(logs[i], nil))
	}))
	for i, n := range c.Nodes {
		require.Equal(t, fmt.Sprintf("n%d", i+1), n.ID(), "node %d's reference set names it", i)
	}
	nm := &clockNemesis{camp: camp, c: c, clocks: clocks, rng: camp.rand(0)}
	t.Cleanup(func() { keepClockLogs(t, c, logs) })

	ctx := t.Context()
	h := &history{}
	w := newClientLoops(t, camp.duration)
	stream := uint64(1)
	var ids []string
	for i, n := range c.Nodes {
		for k := 1; k <= 2; k++ {
			cl := c.Connect(harness.WithNodes(func(uint64, int) int { return i }), harness.WithTimeout(callBound))
			s := &clockSession{c: c, hist: h, cl: cl, name: fmt.Sprintf("%ss%d", n.ID(), k)}
			ids = append(ids, cl.ID())
			w.clockLoop(ctx, s, i, camp.rand(stream))
			stream++
		}
	}
	start := time.Now()
	if _, ok := waitUntil(ctx, 30*time.Second, func() bool { return allAnswered(h, ids, start) }); !ok {
		camp.fatalf("the sessions count before the first fault: %s", summary(h.snapshot()))
	}

	nm.start = time.Now()
	nm.run()

	nm.awaitReady(fault{kind: "the end of the campaign"})
	ended := time.Now()
	t.Logf("nemesis: %5.1fs the campaign's faults are over; every node ready", nm.elapsed())
	bound := faultLease + failoverSlack
	if _, ok := waitUntil(ctx, bound, func() bool { return allAnswered(h, ids, ended) }); !ok {
		camp.errorf("not every session was answered within %s of the last heal: %v", bound, answeredSince(h, ended))
	}
	w.stop()

	var logged []holdRun
	for i, n := range c.Nodes {
		runs, err := loggedHolds(n.ID()+"'s log", logs[i].String())
		if err != nil {
			camp.errorf("reading the test_hold runs: %v", err)
		}
		logged = append(logged, runs...)
	}
	t.Logf("nemesis: %d test_hold runs logged by the nodes", len(logged))
	vs := checkCampaign(camp, h, nil, logged)
	report(camp, nm.faults, h.snapshot(), len(vs))
}

// clockNemesis moves the fault clocks of an in-process cluster's nodes,
// one fault at a time, drawn from a campaign's seed, until the
// campaign's time is spent: each held for its time, healed, then every
// node ready again and a quiet spell of a lease before the next.
type clockNemesis struct {
	camp   campaign
	c      *harness.Cluster
	clocks []*harness.FaultClock // node i's
	rng    *rand.Rand
	start  time.Time
	faults []fault
}

// run injects clock faults until the campaign's time is spent, at most
// maxFaults of them.
func (nm *clockNemesis) run() {
	t := nm.camp.t
	maxFaults := int(nm.camp.duration/faultLease) + 1
	for k := 1; k <= maxFaults && time.Since(nm.start) < nm.camp.duration; k++ {
		kind := clockFaults[nm.rng.IntN(len(clockFaults))]
		i := nm.rng.IntN(len(nm.c.Nodes))
		node, clock := nm.c.Nodes[i], nm.clocks[i]
		f := fault{n: k, kind: kind, node: node.ID(), hold: holdFor(nm.rng, faultLease)}
		heal := func() {}
		leases := func(lo, hi float64) time.Duration {
			return time.Duration(float64(faultLease) * (lo + (hi-lo)*nm.rng.Float64())).Round(time.Millisecond)
		}
		switch kind {
		case clockStep:
			d, sign := leases(0.5, 2), "+"
			if nm.rng.IntN(2) == 0 {
				d, sign = -d, ""
			}
			f.detail = fmt.Sprintf("wall %s%v", sign, d)
			clock.StepWall(d)
			heal = func() { clock.StepWall(-d) }
		case clockSuspend:
			d := leases(1, 2)
			f.detail = fmt.Sprintf("wall +%v", d)
			clock.StepWall(d)
		case clockDrift:
			rate := 0.9 + 0.2*nm.rng.Float64()
			f.detail = fmt.Sprintf("rate %.3f", rate)
			clock.SetRate(rate)
			heal = func() { clock.SetRate(1) }
		case clockJump:
			d := leases(0.5, 2)
			f.detail = fmt.Sprintf("both +%v", d)
			clock.Advance(d)
		}
		f.at = time.Now()
		fenced := !node.Acting()
		t.Logf("nemesis: %5.1fs %s %s %s for %s", nm.elapsed(), f.kind, f.node, f.detail, f.hold)
		took, acting := waitUntil(t.Context(), f.hold, node.Acting)
		switch {
		case !fenced:
			f.note = "not fenced at once"
		case acting:
			f.note = fmt.Sprintf("fenced at once, acting again after %s", took.Round(time.Millisecond))
		default:
			f.note = "fenced at once, not acting again during the hold"
		}
		hold(t, time.Until(f.at.Add(f.hold)))
		heal()
		f.healed = time.Now()
		f.ready = nm.awaitReady(f)
		t.Logf("nemesis: %5.1fs healed %s %s (%s); every node ready %s later", nm.elapsed(), f.kind, f.node, f.note, f.ready.Round(time.Millisecond))
		nm.faults = append(nm.faults, f)
		hold(t, faultLease) // the quiet spell
	}
}

// awaitReady waits until every node is ready (mcpcluster.Node.Ready), for
// readyTimeout at most, and returns how long it took.
func (nm *clockNemesis) awaitReady(f fault) time.Duration {
	var states []string
	took, ok := waitUntil(nm.camp.t.Context(), readyTimeout, func() bool {
		states = states[:0]
		for _, n := range nm.c.Nodes {
			if err := n.Ready(); err != nil {
				states = append(states, fmt.Sprintf("%s: %v", n.ID(), err))
			}
		}
		return len(states) == 0
	})
	if !ok {
		nm.camp.fatalf("nemesis: after %s, not every node was ready within %s: %s", f, readyTimeout, strings.Join(states, "; "))
	}
	return took
}

// elapsed is the campaign's time so far, in seconds.
func (nm *clockNemesis) elapsed() float64 { return time.Since(nm.start).Seconds() }

// syncLog is a node's log in TestClockNemesis (its cluster node's, its
// server's and its reference set's lines), safe for concurrent use.
type syncLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// keepClockLogs, when t failed, writes each node's log to t's artifact
// directory and logs it.
func keepClockLogs(t *testing.T, c *harness.Cluster, logs []*syncLog) {
	if !t.Failed() {
		return
	}
	for i, n := range c.Nodes {
		path := filepath.Join(t.ArtifactDir(), n.ID()+".log")
		if err := os.WriteFile(path, []byte(logs[i].String()), 0o644); err != nil {
			t.Logf("%s: %v", path, err)
		}
		t.Logf("%s's log (%s):\n%s", n.ID(), path, logs[i])
	}
}
