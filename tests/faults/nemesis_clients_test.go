package faults_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"
)

// Pacing and bounds of a campaign's clients.
const (
	// nemesisBound bounds every request of a campaign's clients: twice
	// callBound. A request sent to a node just before its black hole (or
	// answered just before it) gets through only at TCP's next
	// retransmission after the heal, and retransmissions back off
	// exponentially: that may come as long after the heal as the hole
	// lasted (up to 2.5 leases). The cluster's own bound comes on top.
	nemesisBound = 2 * callBound
	// sessionLife is how long a campaign's counter session is used before
	// its client opens a new one through the same node: in a long
	// campaign each session's history stays small enough to check
	// (Porcupine, the counter's arithmetic), and sessions are opened
	// under faults too.
	sessionLife = time.Minute
	// slowPace paces the clients whose requests take several round trips
	// (elicitation, 2026-07-28 calls).
	slowPace = 500 * time.Millisecond
	// holdSeconds is the test_hold of a campaign's counter clients: short
	// and frequent, so that a session's handler runs on two nodes at once
	// would show.
	holdSeconds = 0.2
	// loopBudget bounds how long past its campaign a client loop may
	// run, in steps at its pace (it stops with the campaign).
	loopBudget = 30 * time.Minute
)

// clientLoops are a campaign's clients, one goroutine each, until stop:
// they own their goroutines. Each request is bounded by its own bound,
// not by stop: a request in flight ends as it would have.
type clientLoops struct {
	stopped chan struct{}
	once    sync.Once
	wg      sync.WaitGroup
	steps   int // the most steps a loop takes: the campaign's time and loopBudget, at pace

	mu       sync.Mutex
	sessions map[string]string // each session loop's session ID now, by loop name
}

// newClientLoops returns the loops' owner for a campaign of d; they stop
// at the end of t at the latest.
func newClientLoops(t *testing.T, d time.Duration) *clientLoops {
	w := &clientLoops{stopped: make(chan struct{}), sessions: map[string]string{}, steps: int((d + loopBudget) / pace)}
	t.Cleanup(w.stop)
	return w
}

// loop runs step(ctx, 0), step(ctx, 1), … once per every (or as soon as
// the last step ended, when that took longer), until stop.
func (w *clientLoops) loop(ctx context.Context, every time.Duration, step func(ctx context.Context, k int)) {
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		tick := time.NewTicker(every)
		defer tick.Stop()
		for k := 0; k < w.steps; k++ {
			step(ctx, k)
			select {
			case <-w.stopped:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
}

// stop ends the loops once their requests in flight have ended.
func (w *clientLoops) stop() {
	w.once.Do(func() { close(w.stopped) })
	w.wg.Wait()
}

// use notes the session loop name calls now.
func (w *clientLoops) use(name, id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.sessions[name] = id
}

// current returns the IDs of the sessions the session loops call now.
func (w *clientLoops) current() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Sorted(maps.Values(w.sessions))
}

// nemesisCall draws a counter client's next call from r: test_counter
// and test_counter_get (counterMix), and one call in ten test_hold for
// holdSeconds.
func nemesisCall(r *rand.Rand) (string, map[string]any) {
	if r.IntN(10) == 0 {
		return holdTool, map[string]any{"seconds": holdSeconds}
	}
	return counterMix[r.IntN(len(counterMix))], nil
}

// counterLoop drives session s, opened through node home, over every
// node in turn from home, each call drawn from r (nemesisCall). Every sessionLife it opens a new session through home
// (named s's name, a dot and its generation), and goes on with the old
// one while that fails.
func (w *clientLoops) counterLoop(ctx context.Context, cl *client, s *session, home int, r *rand.Rand) {
	base, gen, opened := s.name, 1, time.Now()
	w.use(base, s.id)
	w.loop(ctx, pace, func(ctx context.Context, k int) {
		if time.Since(opened) > sessionLife {
			gen++
			if next, err := cl.open(ctx, fmt.Sprintf("%s.%d", base, gen), home, callBound); err == nil {
				s, opened = next, time.Now()
				w.use(base, s.id)
			}
		}
		tool, args := nemesisCall(r)
		s.callWith(ctx, (home+k)%len(cl.nodes), tool, args, nemesisBound)
	})
}

// elicitLoop drives session s (opened with the elicitation capability
// through node home): test_elicitation through each node in turn from
// home, answered through another node drawn from r.
func (w *clientLoops) elicitLoop(ctx context.Context, cl *client, s *session, home int, r *rand.Rand) {
	w.use(s.name, s.id)
	nodes := len(cl.nodes)
	w.loop(ctx, slowPace, func(ctx context.Context, k int) {
		i := (home + k) % nodes
		j := (i + 1 + r.IntN(nodes-1)) % nodes
		s.elicit(ctx, i, j, fmt.Sprintf("%s-u%d", s.name, k), nemesisBound)
	})
}

// modernLoop makes 2026-07-28 calls, no session, named name-1, name-2, …:
// each a test_echo to a node drawn from r, or a test_elicitation whose
// first round goes to one node and whose retry goes to another.
func (w *clientLoops) modernLoop(ctx context.Context, cl *client, name string, r *rand.Rand) {
	nodes := len(cl.nodes)
	w.loop(ctx, slowPace, func(ctx context.Context, k int) {
		id := fmt.Sprintf("%s-%d", name, k+1)
		i := r.IntN(nodes)
		if r.IntN(2) == 0 {
			cl.modernEcho(ctx, i, id, "echo "+id, nemesisBound)
			return
		}
		j := (i + 1 + r.IntN(nodes-1)) % nodes
		cl.modernElicit(ctx, i, j, id, "u"+id, nemesisBound)
	})
}
