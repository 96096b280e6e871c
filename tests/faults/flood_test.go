package faults_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The flood and the workload measured beside it.
const (
	floodRequests = 10_000 // made-up IDs of n1's, each sent once
	floodWorkers  = 64     // made-up requests in flight at once, at most
	// floodRounds splits the run into rounds, each a quiet spell, a
	// control flood and a flood, so that the load the rest of a shared
	// machine adds falls on all three alike.
	floodRounds   = 5
	controlRound  = 1_000           // made-up IDs of n2's in a round's control flood
	quietRound    = 2 * time.Second // a round's quiet spell
	floodBound    = 5 * time.Minute // all the made-up requests of one round
	floodSessions = 8               // real sessions, owned by n1
	// floodLease is the nodes' lease: the default. The flood loads the
	// machine; what is measured is routing, not how a short lease weathers
	// a starved renewal.
	floodLease = 15 * time.Second
	// minSamples is the fewest real calls a p99 is read from: every kind
	// of spell lasts, in each round, until the real clients made their
	// share of them (a flood goes on past its requests), so that no count
	// depends on how fast the machine is.
	minSamples = 200
	// floodFloor is what a flood may add to a latency at least: see
	// TestFloodUnknownSessions.
	floodFloor = 50 * time.Millisecond
)

// floodLimit is what a flood may make of a latency measured without it:
// twice as much, or floodFloor more when that is more.
func floodLimit(base time.Duration) time.Duration { return max(2*base, base+floodFloor) }

// roomyLimit is the control flood's p99 below which the machine is taken to
// have had CPU to spare: the control added at most half of what
// floodLimit allows. Past it the machine's own queueing fills the
// allowance, and the absolute criterion would measure the machine, not the
// cluster: CI failed it once with the control at 62 ms and the flood at 69
// ms against a limit of 66 ms (undisturbed 16 ms), the flood's p99 1.11 ×
// the control's.
func roomyLimit(base time.Duration) time.Duration { return base + (floodLimit(base)-base)/2 }

// TestFloodUnknownSessions sends n2 at least 10,000 requests (test_echo calls)
// with made-up `Mcp-Session-Id: n1.<random>` headers — IDs that name n1 as
// the owner of sessions that do not exist — 64 at a time, while the
// clients of 8 real sessions owned by n1 call test_echo through n2 and n3
// (routed to n1), each once per 100 ms. The run is 5 rounds, each of a
// quiet spell (2 s: the undisturbed run), a control flood (1,000 made-up
// IDs naming n2, which n2 looks up itself: nothing reaches n1) and the
// flood (2,000 made-up IDs naming n1); each spell lasts until the real
// clients made a fifth of the 200 calls each latency is read from (a
// flood sends more made-up IDs meanwhile), so that what is measured does
// not depend on how fast the machine ends a flood.
//
// What the client sees: every made-up ID is answered 404 — n2 routes it
// to n1, which looks it up off the goroutine that receives its routed
// messages, finds nothing and remembers the ID as unknown — and every real
// call is answered with its text. The real calls' p99 during the flood is
// at most max(2 × the undisturbed p99, the undisturbed p99 + 50 ms)
// (issue 19's criterion; the floor because the undisturbed p99 on loopback
// is a few milliseconds, where twice that is noise, while a head-of-line
// block — a directory read, a JetStream round trip, per made-up ID in
// front of the real messages — costs more than 50 ms).
//
// That criterion needs a machine with CPU to spare beside the flood: on
// two shared cores running three -race servers, 64 requests in flight
// saturate the CPU and every process's latency grows with it — there the
// control flood, which never reaches n1, took the real calls' p99 from
// 41 ms to 220 ms. So the test asserts it when the control flood meets it
// with room to spare (its p99 added at most half of the allowance:
// roomyLimit), logs it otherwise, and always
// asserts what sets the cluster apart from the machine: the real calls'
// p50 and p99 during the flood are each within max(2 ×, + 50 ms) of the
// same during the control flood. Measured there, in one run: p50 50 ms
// against 41 ms, p99 189 ms against 220 ms. With the lookups put back on the
// subscription goroutine (the head-of-line block of issue 19, point 6)
// every real message waits behind the made-up ones: p50 134 ms against
// 46 ms, and the test fails (the p99, 387 ms against 201 ms, hides it
// under the machine's own queueing).
func TestFloodUnknownSessions(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster and floods it")
	}
	c := startCluster(t, floodLease)
	n2 := c.byID("n2")
	h := &history{}
	cl := newClient(t, c, h)
	sessions := openSessions(t, cl, "real", 0, floodSessions, callBound)
	var loops []loop
	for k, s := range sessions {
		s.callWith(t.Context(), 1, "test_echo", map[string]any{"text": s.name}, callBound) // warm: connections, routes
		s.callWith(t.Context(), 2, "test_echo", map[string]any{"text": s.name}, callBound)
		loops = append(loops, loop{s: s, nodes: []int{1 + k%2, 2 - k%2}, bound: callBound,
			tool: "test_echo", args: map[string]any{"text": s.name}})
	}
	require.Empty(t, check(h.snapshot()), "the warm-up calls are answered: %s", summary(h.snapshot()))

	control, made := newFloodResult("n2"), newFloodResult("n1")
	var quietWs, controlWs, floodWs []window
	w := startWorkload(t, loops...)
	share := minSamples/floodRounds + 1
	for range floodRounds {
		from := time.Now()
		hold(t, quietRound)
		waitUntil(t.Context(), floodBound, func() bool { return startedSince(h, from) >= share })
		quietWs = append(quietWs, window{from, time.Now()})
		controlWs = append(controlWs, flood(t, n2, control, controlRound, floodWorkers, h, share))
		floodWs = append(floodWs, flood(t, n2, made, floodRequests/floodRounds, floodWorkers, h, share))
	}
	w.stop()

	ops := h.snapshot()
	quiet, loud, ctl := latencies(ops, quietWs), latencies(ops, floodWs), latencies(ops, controlWs)
	limit := floodLimit(quiet.p99)
	t.Logf("real calls, undisturbed:          %s", quiet)
	t.Logf("real calls, during the flood:     %s; p99 / undisturbed p99 = %.2f (limit %s)", loud, ratio(loud.p99, quiet.p99), limit.Round(time.Microsecond))
	t.Logf("real calls, during control flood: %s; p99 / undisturbed p99 = %.2f", ctl, ratio(ctl.p99, quiet.p99))
	t.Logf("the flood against the control flood: p50 × %.2f, p99 × %.2f", ratio(loud.p50, ctl.p50), ratio(loud.p99, ctl.p99))
	t.Logf("made-up IDs of n1 (the flood):    %s", made)
	t.Logf("made-up IDs of n2 (the control):  %s", control)
	for _, n := range c.nodes {
		nats, _ := n.metric(t.Context(), "mcp_cluster_nats_errors_total")
		unacked, _ := n.metric(t.Context(), "mcp_cluster_unacknowledged_requests_total")
		t.Logf("%s: %v NATS errors, %v routed requests unacknowledged", n.id, nats, unacked)
	}

	assert.GreaterOrEqual(t, made.sent, floodRequests, "the made-up IDs of n1 sent")
	assert.Equal(t, made.sent, made.status[http.StatusNotFound], "every made-up ID of n1 is answered 404: %s", made.others())
	assert.Equal(t, control.sent, control.status[http.StatusNotFound], "every made-up ID of n2 is answered 404: %s", control.others())
	require.GreaterOrEqual(t, quiet.n, minSamples, "real calls measured undisturbed")
	require.GreaterOrEqual(t, loud.n, minSamples, "real calls measured during the flood")
	require.GreaterOrEqual(t, ctl.n, minSamples, "real calls measured during the control flood")
	assert.Zero(t, quiet.failed+loud.failed+ctl.failed, "every real call is answered")
	assert.LessOrEqual(t, loud.p50, floodLimit(ctl.p50), "the real calls' p50 during the flood, against the control flood's (%s)", ctl.p50)
	assert.LessOrEqual(t, loud.p99, floodLimit(ctl.p99), "the real calls' p99 during the flood, against the control flood's (%s)", ctl.p99)
	if headroom := roomyLimit(quiet.p99); ctl.p99 <= headroom {
		assert.LessOrEqual(t, loud.p99, limit, "the real calls' p99 during the flood (undisturbed: %s)", quiet.p99)
	} else {
		t.Logf("not asserted: the p99 during the flood within %s (2 × undisturbed, or + %s): the control flood, "+
			"which never reaches n1, took the p99 to %s, past %s — the machine had no CPU to spare", limit.Round(time.Microsecond),
			floodFloor, ctl.p99.Round(time.Microsecond), headroom.Round(time.Microsecond))
	}
	requireClean(t, h)
}

// startedSince counts the calls of h that started at or after from.
func startedSince(h *history, from time.Time) int {
	n := 0
	for _, o := range h.snapshot() {
		if !o.start.Before(from) {
			n++
		}
	}
	return n
}

// window is a span of a run: [from, to).
type window struct{ from, to time.Time }

// latency is what the real calls that started within some windows took.
type latency struct {
	n, failed     int
	p50, p99, max time.Duration
}

func (l latency) String() string {
	return fmt.Sprintf("%d calls (%d failed), p50 %s, p99 %s, max %s", l.n, l.failed,
		l.p50.Round(time.Microsecond), l.p99.Round(time.Microsecond), l.max.Round(time.Microsecond))
}

// latencies measures the calls of ops that started within one of ws.
func latencies(ops []op, ws []window) latency {
	var l latency
	var ds []time.Duration
	for _, o := range ops {
		if !slices.ContainsFunc(ws, func(w window) bool { return !o.start.Before(w.from) && o.start.Before(w.to) }) {
			continue
		}
		l.n++
		if !o.ok() {
			l.failed++
			continue
		}
		ds = append(ds, o.end.Sub(o.start))
	}
	l.p50, l.p99, l.max = percentile(ds, 0.50), percentile(ds, 0.99), percentile(ds, 1)
	return l
}

// percentile returns the q-quantile of ds (nearest rank); 0 when empty.
func percentile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := int(q*float64(len(s))+0.999999) - 1
	return s[min(max(rank, 0), len(s)-1)]
}

// ratio is a / b (0 when b is).
func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// floodResult is what the made-up requests naming one node got, over
// every round.
type floodResult struct {
	owner string // the node the made-up IDs name

	mu     sync.Mutex
	sent   int
	busy   time.Duration   // the rounds' time
	status map[int]int     // HTTP status → requests (0: no response, or not sent)
	other  map[string]int  // what came back other than 404, shortened → requests
	took   []time.Duration // each answered request's time
}

func newFloodResult(owner string) *floodResult {
	return &floodResult{owner: owner, status: map[int]int{}, other: map[string]int{}}
}

func (f *floodResult) record(status int, what string, took time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent++
	f.status[status]++
	if status != http.StatusNotFound {
		f.other[what]++
	}
	if status != 0 {
		f.took = append(f.took, took)
	}
}

// others lists what came back other than 404, most frequent first (at
// most maxReported).
func (f *floodResult) others() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ws []string
	for w := range f.other {
		ws = append(ws, w)
	}
	slices.SortFunc(ws, func(a, b string) int { return f.other[b] - f.other[a] })
	var b strings.Builder
	for i, w := range ws {
		if i == maxReported {
			fmt.Fprintf(&b, "\n  … and %d more kinds", len(ws)-i)
			break
		}
		fmt.Fprintf(&b, "\n  %d× %s", f.other[w], w)
	}
	return b.String()
}

func (f *floodResult) String() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return fmt.Sprintf("%d requests in %s (%.0f/s), by status %v; p50 %s, p99 %s, max %s", f.sent,
		f.busy.Round(time.Millisecond), float64(f.sent)/f.busy.Seconds(), f.status,
		percentile(f.took, 0.5).Round(time.Microsecond), percentile(f.took, 0.99).Round(time.Microsecond),
		percentile(f.took, 1).Round(time.Microsecond))
}

// flood sends requests with made-up session IDs naming f.owner to node,
// workers at a time, each bounded by callBound and all by floodBound,
// records what came back in f, and returns the round's window. It sends
// more until the real clients of h started share calls during it.
// Requests not sent when the bound passes count as status 0.
func flood(t *testing.T, n *node, f *floodResult, requests, workers int, h *history, share int) window {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = workers
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	ctx, cancel := context.WithTimeout(t.Context(), floodBound)
	defer cancel()
	start := time.Now()
	var next atomic.Int64
	var enough atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() { // the real calls during the flood: looked at every 100 ms
		waitUntil(ctx, floodBound, func() bool { return startedSince(h, start) >= share })
		enough.Store(true)
	})
	for range workers {
		wg.Go(func() {
			for next.Add(1) <= int64(requests) || !enough.Load() {
				if ctx.Err() != nil {
					f.record(0, "not sent: "+ctx.Err().Error(), 0)
					continue
				}
				sent := time.Now()
				status, what := madeUp(ctx, hc, n.endpoint(), f.owner)
				f.record(status, what, time.Since(sent))
			}
		})
	}
	wg.Wait()
	end := time.Now()
	f.mu.Lock()
	f.busy += end.Sub(start)
	f.mu.Unlock()
	return window{start, end}
}

// madeUp sends one test_echo call with a made-up session ID naming owner
// to endpoint and returns the HTTP status (0 when none came) and,
// shortened, what came back.
func madeUp(ctx context.Context, hc *http.Client, endpoint, owner string) (int, string) {
	ctx, cancel := context.WithTimeout(ctx, callBound)
	defer cancel()
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := owner + "." + base64.RawURLEncoding.EncodeToString(b[:])
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_echo","arguments":{"text":"made up"}}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(body))
	if err != nil {
		return 0, err.Error()
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", protocolVersion)
	req.Header.Set("Mcp-Session-Id", id)
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if err != nil {
		return 0, fmt.Sprintf("HTTP %d, then %v", resp.StatusCode, err)
	}
	what := string(bytes.TrimSpace(got))
	if len(what) > 160 {
		what = what[:160] + "…"
	}
	return resp.StatusCode, fmt.Sprintf("HTTP %d %s", resp.StatusCode, what)
}
