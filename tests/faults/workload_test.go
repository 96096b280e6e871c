package faults_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// pace is how often one session's client calls, at most: it keeps the load
// of a test's clients small beside three servers on a shared machine.
const pace = 100 * time.Millisecond

// workload is the clients of a test: one goroutine per session, calling
// its tools (counterMix unless the loop names others) once per pace (or
// as soon as the last call ended, when that took longer), each call to
// the next node of its rotation, until stop. Calls are bounded by their
// own bound, not by stop: a call in flight when the workload stops ends
// as it would have.
type workload struct {
	stopped chan struct{}
	once    sync.Once
	wg      sync.WaitGroup
}

// loop is one session's client: its rotation over the nodes (indexes into
// the cluster's nodes), the bound of each call, and the tools it calls.
type loop struct {
	s     *session
	nodes []int
	bound time.Duration
	tool  string         // the one tool it calls, with args; when "", tools
	args  map[string]any // tool's arguments; read only
	// tools are called without arguments (but those toolArgs gives),
	// each call picking one at random (a tool listed twice, twice as
	// often) from a source seeded with the session's name; counterMix
	// when empty.
	tools    []string
	toolArgs map[string]map[string]any // read only
}

// counterMix is what a loop calls unless told otherwise: test_counter,
// and every third call or so test_counter_get, so that every fault test
// reads as well as writes (a stale owner shows in reads: FAULTS.md).
var counterMix = []string{counterTool, counterTool, counterGetTool}

// picker returns the loop's choice of tool for each call, and the
// arguments of that call.
func (l loop) picker() func() (string, map[string]any) {
	if l.tool != "" {
		return func() (string, map[string]any) { return l.tool, l.args }
	}
	tools := l.tools
	if len(tools) == 0 {
		tools = counterMix
	}
	h := fnv.New64a()
	h.Write([]byte(l.s.name))
	pick := rand.New(rand.NewPCG(h.Sum64(), 0))
	return func() (string, map[string]any) {
		tool := tools[pick.IntN(len(tools))]
		return tool, l.toolArgs[tool]
	}
}

// startWorkload starts the loops; they stop at the end of t at the latest.
func startWorkload(t *testing.T, loops ...loop) *workload {
	w := &workload{stopped: make(chan struct{})}
	for _, l := range loops {
		w.wg.Add(1)
		go w.run(t.Context(), l)
	}
	t.Cleanup(w.stop)
	return w
}

func (w *workload) run(ctx context.Context, l loop) {
	defer w.wg.Done()
	tick := time.NewTicker(pace)
	defer tick.Stop()
	next := l.picker()
	for k := 0; ; k++ {
		tool, args := next()
		l.s.callWith(ctx, l.nodes[k%len(l.nodes)], tool, args, l.bound)
		select {
		case <-w.stopped:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// stop ends the loops once their calls in flight have ended.
func (w *workload) stop() {
	w.once.Do(func() { close(w.stopped) })
	w.wg.Wait()
}

// openSessions opens n sessions through node i (which then owns them:
// their IDs start with its node ID), named prefix1, prefix2, …
func openSessions(t *testing.T, c *client, prefix string, i, n int, bound time.Duration) []*session {
	t.Helper()
	var out []*session
	for k := 1; k <= n; k++ {
		s, err := c.open(t.Context(), fmt.Sprintf("%s%d", prefix, k), i, bound)
		require.NoError(t, err)
		require.Regexp(t, "^"+c.nodes[i].id+`\.`, s.id, "a session opened through %s is owned there", c.nodes[i].id)
		out = append(out, s)
	}
	return out
}

// rotation is every node of c, starting with node start.
func rotation(c *cluster, start int) []int {
	var out []int
	for k := range c.nodes {
		out = append(out, (start+k)%len(c.nodes))
	}
	return out
}

// requireClean checks the whole history, with the test_hold runs the
// nodes logged (loggedHolds), and fails t with every violation (at most
// maxReported of them, and how many there were). A violation Porcupine
// can picture is written to an HTML file in t's artifact directory, named
// in the message (kept with go test -artifacts).
func requireClean(t *testing.T, h *history, logged ...holdRun) {
	t.Helper()
	ops := h.snapshot()
	vs := check(ops, logged...)
	t.Logf("history: %s", summary(ops))
	if len(vs) == 0 {
		return
	}
	msg := fmt.Sprintf("%d violations in a history of %d requests:", len(vs), len(ops))
	for i, v := range vs {
		if i == maxReported {
			msg += fmt.Sprintf("\n  … and %d more", len(vs)-maxReported)
			break
		}
		msg += "\n  " + v.String()
		if v.visualize != nil {
			msg += "\n    " + visualize(t, v, i+1)
		}
	}
	t.Error(msg)
}

// loggedRuns reads the test_hold runs the nodes logged, for requireClean
// (since each node's last start: a restart begins a new log), failing t
// on a line it cannot read.
func loggedRuns(t *testing.T, nodes ...*node) []holdRun {
	t.Helper()
	var out []holdRun
	for _, n := range nodes {
		runs, err := loggedHolds(n.id+"'s log", n.stderrText())
		require.NoError(t, err)
		out = append(out, runs...)
	}
	return out
}

// visualize writes v's picture to t's artifact directory and says where,
// or why it could not.
func visualize(t *testing.T, v violation, i int) string {
	path := filepath.Join(t.ArtifactDir(), fmt.Sprintf("violation-%d-%s.html", i, strings.ReplaceAll(v.kind, " ", "-")))
	f, err := os.Create(path)
	if err == nil {
		err = v.visualize(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Sprintf("Porcupine's picture of it could not be written: %v", err)
	}
	return "Porcupine's picture of it: " + path
}

// maxReported bounds the violations a failing test prints.
const maxReported = 12

// summary counts a history's requests by node and outcome.
func summary(ops []op) string {
	count := map[string]map[outcome]int{}
	var nodes []string
	for _, o := range ops {
		if count[o.node] == nil {
			count[o.node] = map[outcome]int{}
			nodes = append(nodes, o.node)
		}
		count[o.node][o.outcome]++
	}
	slices.Sort(nodes)
	out := fmt.Sprintf("%d requests", len(ops))
	for _, n := range nodes {
		out += fmt.Sprintf("; via %s: %d answered, %d failed, %d unanswered, %d pending",
			n, count[n][answered], count[n][failed], count[n][unanswered], count[n][pending])
	}
	return out
}
