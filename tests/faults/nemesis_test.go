package faults_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestNemesis is a randomized campaign, Jepsen's way (issue 30): three
// serve processes, each in a network namespace of its own
// (startNetCluster), lease faultLease; clients on every node; and, for
// the campaign's time (MCP_ACTORS_NEMESIS_DURATION, 2m by default), a
// nemesis that draws one fault at a time from the seed
// (MCP_ACTORS_NEMESIS_SEED, the time by default; logged first) — kill -9
// and start again with the same ID and data dir, pause (SIGSTOP, then
// SIGCONT), partition (its cluster link down), black hole (both its
// links down), restart (SIGTERM, then start again), kill -9 of the node
// leading the leases' storage — on a node it draws, holds it 0.5 to 2.5
// leases, heals it, waits until every node is ready and lets a lease
// pass quietly. Each step is logged ("nemesis: 12.3s kill n2 for 6.1s").
//
// The clients, all recorded in one history: two sessions opened through
// each node (so each node owns some), each calling test_counter and
// test_counter_get through every node in turn, and test_hold (0.2 s) one
// call in ten, a new session every sessionLife; a session per node with
// the elicitation capability calling test_elicitation through each node
// in turn and answering its elicitation/create through another; two
// clients of 2026-07-28 calls without a session — test_echo to any node,
// and test_elicitation whose first round goes to one node and whose retry
// (requestState and inputResponses) goes to another.
//
// What the client sees: requests end within nemesisBound (answered, or
// an error) whatever the fault; a session's counter never repeats or
// steps back, and a read never shows less than an increment acknowledged
// before it (linearizable); of one session, no handler runs on two nodes
// at once (test_hold's runs, answered or only logged by the nodes, every
// run of every process); each request is answered at most once, its
// stream carries only its own frames; an elicitation answered through
// another node reaches its handler; once the last fault is healed, every
// session is answered again within a lease plus failoverSlack. The
// summary ("nemesis summary:" lines) counts the faults by kind and the
// requests by tool and outcome, and shows how long each struck node's
// sessions took to be served elsewhere. A failure names its seed: run it
// again with MCP_ACTORS_NEMESIS_SEED set to it (the same schedule of
// faults; the timing is the machine's).
func TestNemesis(t *testing.T) {
	camp := newCampaign(t, 2*time.Minute)
	c := startNetCluster(t, faultLease)
	nm := &processNemesis{camp: camp, c: c, rng: camp.rand(0), logs: nodeLogs{}}
	t.Cleanup(func() { nm.keepLogs() })
	h := &history{}
	cl := newClient(t, c.cluster, h)
	ecl := newClient(t, c.cluster, h) // its sessions declare elicitation
	ecl.caps = `{"elicitation":{}}`

	ctx := t.Context()
	w := newClientLoops(t, camp.duration)
	stream := uint64(1) // each client's draws: a stream of the seed's own
	var counters []*session
	for i, n := range c.nodes {
		for _, s := range openSessions(t, cl, n.id+"s", i, 2, callBound) {
			counters = append(counters, s)
			w.counterLoop(ctx, cl, s, i, camp.rand(stream))
			stream++
		}
		s := openSessions(t, ecl, n.id+"e", i, 1, callBound)[0]
		w.elicitLoop(ctx, ecl, s, i, camp.rand(stream))
		stream++
	}
	for k := 1; k <= 2; k++ {
		w.modernLoop(ctx, cl, fmt.Sprintf("m%d", k), camp.rand(stream))
		stream++
	}
	start := time.Now()
	if _, ok := waitUntil(ctx, 30*time.Second, func() bool { return everyAnswered(h, counters, start, 3) }); !ok {
		camp.fatalf("the sessions count before the first fault: %s", summary(h.snapshot()))
	}

	nm.start = time.Now()
	nm.run()

	c.heal()
	nm.awaitReady(fault{kind: "the end of the campaign"})
	ended := time.Now()
	t.Logf("nemesis: %5.1fs the campaign's faults are over; every node ready", nm.elapsed())
	bound := faultLease + failoverSlack
	if _, ok := waitUntil(ctx, bound, func() bool { return allAnswered(h, w.current(), ended) }); !ok {
		camp.errorf("not every session was answered within %s of the last heal: %v", bound, answeredSince(h, ended))
	}
	w.stop()

	var logged []holdRun
	for _, n := range c.nodes {
		for k, text := range nm.logs.runs(n) {
			runs, err := loggedHolds(fmt.Sprintf("%s's log (run %d)", n.id, k+1), text)
			if err != nil {
				camp.errorf("reading the test_hold runs: %v", err)
			}
			logged = append(logged, runs...)
		}
	}
	t.Logf("nemesis: %d test_hold runs logged by the nodes", len(logged))
	vs := checkCampaign(camp, h, nm.frozen, logged)
	report(camp, nm.faults, h.snapshot(), len(vs))
}

// allAnswered reports whether each of the sessions ids had a call that
// started at or after since answered.
func allAnswered(h *history, ids []string, since time.Time) bool {
	got := answeredSince(h, since)
	for _, id := range ids {
		if got[id] == 0 {
			return false
		}
	}
	return true
}

// keepLogs, when the test failed, writes every earlier run's stderr of
// each node to the test's artifact directory and logs it (the node's
// cleanup logs its last run's).
func (nm *processNemesis) keepLogs() {
	t := nm.camp.t
	if !t.Failed() {
		return
	}
	for _, n := range nm.c.nodes {
		runs := nm.logs.runs(n)
		for k, text := range runs[:len(runs)-1] {
			path := filepath.Join(t.ArtifactDir(), fmt.Sprintf("%s-run%d.log", n.id, k+1))
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Logf("%s: %v", path, err)
			}
			t.Logf("%s stderr, run %d of %d (%s):\n%s", n.id, k+1, len(runs), path, text)
		}
	}
}
