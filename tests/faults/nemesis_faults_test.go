package faults_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"
)

// The faults of the process nemesis (TestNemesis).
const (
	faultKill       = "kill"        // kill -9, then started again with the same ID and data dir
	faultPause      = "pause"       // SIGSTOP, then SIGCONT
	faultPartition  = "partition"   // its cluster link down (isolate), its clients still reach it
	faultBlackHole  = "black hole"  // both its links down: nothing reaches it
	faultRestart    = "restart"     // SIGTERM, exit, started again with the same ID and data dir
	faultLeaderKill = "leader kill" // kill -9 of the node leading the leases' storage, then started again
)

// processFaults are what the process nemesis draws from, each as likely.
var processFaults = []string{faultKill, faultPause, faultPartition, faultBlackHole, faultRestart, faultLeaderKill}

// leasesLeaderMetric is 1 on the node that leads the lease bucket's
// stream, 0 on the others.
const leasesLeaderMetric = `mcp_cluster_storage_leader{store="leases"}`

// fault is one step of a nemesis's schedule, as it ran.
type fault struct {
	n          int    // its place in the schedule, from 1
	kind       string // one of processFaults or clockFaults
	node       string // the node it struck
	detail     string // what else it was (a clock step's size, a rate), or ""
	hold       time.Duration
	at, healed time.Time // when it struck, when it was healed
	ready      time.Duration
	skipped    string // why it struck nothing, or ""
	note       string // what the nemesis saw meanwhile (clock faults: the fence), or ""
}

func (f fault) String() string {
	if f.n == 0 { // not a fault of the schedule
		return f.kind
	}
	s := fmt.Sprintf("#%d %s %s", f.n, f.kind, f.node)
	if f.detail != "" {
		s += " " + f.detail
	}
	return s + " for " + f.hold.String()
}

// processNemesis injects faults into a netCluster's processes and links,
// one at a time, drawn from a campaign's seed, until the campaign's time
// is spent: each held for its time, healed, then every node ready again
// and a quiet spell of a lease before the next. It runs on the test's
// goroutine (a node's start fails the test from there).
type processNemesis struct {
	camp   campaign
	c      *netCluster
	rng    *rand.Rand
	start  time.Time
	logs   nodeLogs
	faults []fault
	frozen []span // the pauses: what froze a node's handlers (checkFrozen)
}

// nodeLogs keeps the stderr of every earlier run of each node (a
// restarted node's process writes a new one): node ID → runs, in order.
// Only the test's goroutine touches it.
type nodeLogs map[string][]string

// keep saves n's stderr before it starts again.
func (l nodeLogs) keep(n *node) { l[n.id] = append(l[n.id], n.stderrText()) }

// runs returns every run's stderr of n, the running one last.
func (l nodeLogs) runs(n *node) []string {
	return append(append([]string(nil), l[n.id]...), n.stderrText())
}

// run injects faults until the campaign's time is spent, at most
// maxFaults of them.
func (nm *processNemesis) run() {
	t := nm.camp.t
	maxFaults := int(nm.camp.duration/nm.c.lease) + 1
	for k := 1; k <= maxFaults && time.Since(nm.start) < nm.camp.duration; k++ {
		kind := processFaults[nm.rng.IntN(len(processFaults))]
		n := nm.c.nodes[nm.rng.IntN(len(nm.c.nodes))]
		f := fault{n: k, kind: kind, node: n.id, hold: holdFor(nm.rng, nm.c.lease)}
		if kind == faultLeaderKill {
			if n = nm.leasesLeader(); n == nil {
				f.node, f.skipped = "-", "no node said it leads the leases' storage"
				t.Logf("nemesis: %s skipped: %s", f, f.skipped)
				nm.faults = append(nm.faults, f)
				continue
			}
			f.node = n.id
		}
		f.at = time.Now()
		t.Logf("nemesis: %5.1fs %s %s for %s", nm.elapsed(), f.kind, f.node, f.hold)
		nm.strike(f, n)
		f.healed = time.Now()
		f.ready = nm.awaitReady(f)
		t.Logf("nemesis: %5.1fs healed %s %s; every node ready %s later", nm.elapsed(), f.kind, f.node, f.ready.Round(time.Millisecond))
		nm.faults = append(nm.faults, f)
		hold(t, nm.c.lease) // the quiet spell
	}
}

// strike injects f into node n, holds it, and heals it.
func (nm *processNemesis) strike(f fault, n *node) {
	t := nm.camp.t
	switch f.kind {
	case faultKill, faultLeaderKill:
		n.kill()
		hold(t, f.hold)
		nm.startAgain(n)
	case faultPause:
		from := time.Now()
		n.pause()
		hold(t, f.hold)
		// The freeze's end is read before SIGCONT: whatever the node
		// stamps after it is later. (Read after, it was later than a run
		// the node ended as it resumed: a 60-minute campaign reported a
		// run that ended 2 ms "before" the recorded resume as an overlap.)
		to := time.Now()
		n.resume()
		nm.frozen = append(nm.frozen, span{node: n.id, from: from, to: to})
	case faultPartition:
		nm.c.isolate(n.id)
		hold(t, f.hold)
		nm.c.heal()
	case faultBlackHole:
		nm.c.blackhole(n.id)
		hold(t, f.hold)
		nm.c.heal()
	case faultRestart:
		if n.signalStop() {
			n.awaitExit(time.Now().Add(stopTimeout))
		}
		hold(t, f.hold)
		nm.startAgain(n)
	default:
		nm.camp.fatalf("nemesis: no such fault %q", f.kind)
	}
}

// startAgain starts a node that exited (same ID, data dir and
// addresses), keeping its last run's stderr.
func (nm *processNemesis) startAgain(n *node) {
	nm.logs.keep(n)
	n.restart()
}

// leasesLeader returns the node that says it leads the leases' storage,
// waiting up to 30 s for one to, or nil.
func (nm *processNemesis) leasesLeader() *node {
	if i, ok := leasesLeader(nm.camp.t.Context(), nm.c.nodes); ok {
		return nm.c.nodes[i]
	}
	return nil
}

// leasesLeader returns the index of the node of nodes that says it leads
// the leases' storage, waiting up to 30 s for one to.
func leasesLeader(ctx context.Context, nodes []*node) (int, bool) {
	leader := -1
	_, ok := waitUntil(ctx, 30*time.Second, func() bool {
		for i, n := range nodes {
			if v, err := n.metric(ctx, leasesLeaderMetric); err == nil && v == 1 {
				leader = i
				return true
			}
		}
		return false
	})
	return leader, ok
}

// awaitReady waits until every node's /readyz answers 200 (a node
// started again right after a kill may wait a lease TTL for its earlier
// run's lease first: by design), for readyTimeout at most, and returns
// how long it took.
func (nm *processNemesis) awaitReady(f fault) time.Duration {
	ctx := nm.camp.t.Context()
	var states []string
	took, ok := waitUntil(ctx, readyTimeout, func() bool {
		states = states[:0]
		for _, n := range nm.c.nodes {
			if code, body := n.readyz(ctx); code != http.StatusOK {
				states = append(states, fmt.Sprintf("%s: %d %s", n.id, code, body))
			}
		}
		return len(states) == 0
	})
	if !ok {
		nm.c.postMortem()
		nm.camp.fatalf("nemesis: after %s, not every node was ready within %s: %s", f, readyTimeout, strings.Join(states, "; "))
	}
	return took
}

// elapsed is the campaign's time so far, in seconds.
func (nm *processNemesis) elapsed() float64 { return time.Since(nm.start).Seconds() }
