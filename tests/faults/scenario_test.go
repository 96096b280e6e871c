package faults_test

import (
	"context"
	"testing"
	"time"
)

// Timing of the fault tests.
const (
	// faultLease is the nodes' --lease-ttl: short, to keep each test under
	// a minute. It is shorter than a JetStream leader election (4 to 9 s),
	// so losing the node that leads the lease bucket's stream can make the
	// other nodes' leases lapse too while they elect a new leader: their
	// clients then see errors for a while, which the checks allow; what
	// they must never see is two owners.
	faultLease = 5 * time.Second
	// failoverSlack is the "few seconds" beyond the lease within which a
	// session of a lost owner is served elsewhere: room for a JetStream
	// leader election (up to 9 s) after the loss.
	failoverSlack = 10 * time.Second
	// callBound bounds every client request of the fault tests: a correct
	// cluster answers, or ends with an error, within it, even for a
	// request held by a node that is paused for a whole failover.
	callBound = 30 * time.Second
	// runOn is how long clients go on after a fault is healed.
	runOn = 8 * time.Second
	// counterSessions is how many sessions of the faulty node the clients
	// drive.
	counterSessions = 4
)

// waitUntil polls cond (real I/O: /metrics, the history) every 100 ms
// until it holds or bound passes, and returns how long it took and
// whether it held.
func waitUntil(ctx context.Context, bound time.Duration, cond func() bool) (time.Duration, bool) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if cond() {
			return time.Since(start), true
		}
		select {
		case <-ctx.Done():
			return time.Since(start), cond()
		case <-tick.C:
		}
	}
}

// answeredSince returns, per session, how many of its calls that started
// at or after since were answered.
func answeredSince(h *history, since time.Time) map[string]int {
	out := map[string]int{}
	for _, o := range h.snapshot() {
		if o.ok() && !o.start.Before(since) {
			out[o.session]++
		}
	}
	return out
}

// everyAnswered reports whether each session had at least n calls
// answered that started at or after since.
func everyAnswered(h *history, sessions []*session, since time.Time, n int) bool {
	got := answeredSince(h, since)
	for _, s := range sessions {
		if got[s.id] < n {
			return false
		}
	}
	return true
}

// hold waits for d (a timed fault: a pause, a partition), or until t ends.
func hold(t *testing.T, d time.Duration) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-t.Context().Done():
	}
}

// sessionLoops drives each session round-robin over every node, each
// starting at another node, calls bounded by callBound.
func sessionLoops(c *cluster, sessions []*session) []loop {
	var out []loop
	for k, s := range sessions {
		out = append(out, loop{s: s, nodes: rotation(c, k), bound: callBound})
	}
	return out
}
