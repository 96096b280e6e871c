package faults_test

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A history is every request the clients of a test sent, as they saw it:
// which session, to which node, when it started and ended, and what came
// back — a value, an error, or nothing within the client's bound. The
// clients record into it as they go (safe for concurrent use); check reads
// the whole of it after the run.
//
//	client ──begin──▶ op (pending) ──answer──▶ answered (value)
//	                               ├─fail────▶ failed (an error came back)
//	                               ├─refuse──▶ failed, refused (an HTTP status other than 200)
//	                               └─giveUp──▶ unanswered (nothing within the bound)
//	       ──answer again / a stranger's frame on its stream──▶ noted on the op
type history struct {
	mu  sync.Mutex
	ops []op
}

// outcome is how a request ended for its client.
type outcome int

const (
	pending    outcome = iota // not ended (yet)
	answered                  // a result came back
	failed                    // an error came back: HTTP status, JSON-RPC error, tool error, a dropped connection
	unanswered                // nothing came back within the client's bound
)

func (o outcome) String() string {
	switch o {
	case pending:
		return "pending"
	case answered:
		return "answered"
	case failed:
		return "failed"
	case unanswered:
		return "unanswered"
	}
	return "outcome(" + strconv.Itoa(int(o)) + ")"
}

// op is one request of a client.
type op struct {
	n        int    // its place in the history, from 1
	session  string // Mcp-Session-Id
	node     string // the node the request was sent to
	tool     string // the tool it called
	start    time.Time
	end      time.Time // zero while pending
	outcome  outcome
	value    string   // the result's text (answered)
	err      string   // what came back instead (failed, unanswered)
	refused  bool     // failed with an HTTP status other than 200, before any stream: no handler ran
	answers  int      // responses its client got for it (more than one: a violation)
	progress int      // its own progress notifications
	strays   []string // frames on its stream that were not its own
}

// ok reports whether the request was answered with a value.
func (o op) ok() bool { return o.outcome == answered }

func (o op) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "#%d %s %s via %s %s", o.n, o.session, o.tool, o.node, o.start.Format("15:04:05.000"))
	if !o.end.IsZero() {
		fmt.Fprintf(&b, "–%s", o.end.Format("15:04:05.000"))
	}
	switch o.outcome {
	case answered:
		fmt.Fprintf(&b, " → %q", o.value)
	case failed, unanswered:
		fmt.Fprintf(&b, " → %s: %s", o.outcome, o.err)
	default:
		fmt.Fprintf(&b, " → %s", o.outcome)
	}
	return b.String()
}

// begin records the start of a request and returns its handle.
func (h *history) begin(session, node, tool string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ops = append(h.ops, op{n: len(h.ops) + 1, session: session, node: node, tool: tool, start: time.Now()})
	return len(h.ops)
}

// answer records a response to request n: the first one ends it with
// value, any later one is counted.
func (h *history) answer(n int, value string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	o := &h.ops[n-1]
	o.answers++
	if o.outcome == pending {
		o.outcome, o.value, o.end = answered, value, time.Now()
	}
}

// fail ends request n with an error that came back (a JSON-RPC error
// response counts as its answer).
func (h *history) fail(n int, err error, isResponse bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	o := &h.ops[n-1]
	if isResponse {
		o.answers++
	}
	if o.outcome == pending {
		o.outcome, o.err, o.end = failed, err.Error(), time.Now()
	}
}

// refuse ends request n that an HTTP status other than 200 refused
// before any stream opened: it never reached a handler.
func (h *history) refuse(n int, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	o := &h.ops[n-1]
	if o.outcome == pending {
		o.outcome, o.err, o.end, o.refused = failed, err.Error(), time.Now(), true
	}
}

// giveUp ends request n for which nothing came back within the client's
// bound.
func (h *history) giveUp(n int, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	o := &h.ops[n-1]
	if o.outcome == pending {
		o.outcome, o.err, o.end = unanswered, err.Error(), time.Now()
	}
}

// progressed notes a progress notification of request n's own.
func (h *history) progressed(n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ops[n-1].progress++
}

// stray notes a frame on request n's stream that is not its own.
func (h *history) stray(n int, frame string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ops[n-1].strays = append(h.ops[n-1].strays, frame)
}

// snapshot returns a copy of the operations so far.
func (h *history) snapshot() []op {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := slices.Clone(h.ops)
	for i := range out {
		out[i].strays = slices.Clone(out[i].strays)
	}
	return out
}

// violation is a broken promise found in a history, with the operations
// that show it.
type violation struct {
	kind   string
	detail string
	ops    []op
	more   int // further reads at or below the same earlier read; the last one is the last op
	// visualize writes Porcupine's picture of the history that shows it
	// (an HTML page), or is nil.
	visualize func(io.Writer) error
}

// The kinds of violation check reports.
const (
	answeredTwice = "answered more than once"
	notEnded      = "never ended"
	noAnswer      = "no answer within the client's bound"
	strayFrame    = "a frame of another request on its stream"
	twoOwners     = "two owners or a lost write"
	unexplained   = "more increments than calls"
	// history_linear_test.go
	notLinearizable = "not linearizable"
	undecided       = "linearizability not decided in time"
	// history_hold_test.go
	holdsOverlap = "handler runs overlap across nodes"
	notARun      = "a test_hold answer that is not a run"
)

func (v violation) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", v.kind, v.detail)
	if v.more > 0 {
		fmt.Fprintf(&b, ", and %d more reads at or below it after that, the last of them last", v.more)
	}
	for _, o := range v.ops {
		fmt.Fprintf(&b, "\n    %s", o)
	}
	return b.String()
}

// maxShown bounds the operations a violation lists besides its own.
const maxShown = 5

// The tools whose answers check reads.
const (
	counterTool    = "test_counter"     // increments the session's counter, answers the new value
	counterGetTool = "test_counter_get" // answers the session's counter
	holdTool       = "test_hold"        // answers where and when its handler ran (holdRun)
)

// check reads a whole history, and the test_hold runs logged by the
// nodes (loggedHolds), and returns every violation of the promises a
// client can see:
//
//   - each request is answered at most once, and its stream carries only
//     its own frames;
//   - every request ended: answered, or an error came back within the
//     client's bound (none pending, none unanswered);
//   - test_counter's values per session: a value the client read is never
//     read again, nor is a smaller one read by a call that started after
//     the call that read it ended ("two owners or a lost write");
//   - the increments the client did not see (gaps) are no more than the
//     calls that failed for it and had started by then: a failed call may
//     have counted, on the owner or later (a call that timed out for the
//     client may still run), but each counts at most once. (Not checked
//     for a session whose values already show two owners: the gaps of
//     two mixed sequences say nothing more.)
//   - test_counter's and test_counter_get's values per session are
//     linearizable (Porcupine, history_linear_test.go): some order of
//     the calls, each within its own start and end, explains every value
//     read, a call whose outcome the client could not know counting at
//     most once, at any time after it started, and a refused one never.
//     This is what shows a stale owner's read: a value below an
//     increment acknowledged before the read started.
//   - test_hold's runs per session, answered or logged: no run on one
//     node overlaps a run on another (history_hold_test.go).
//
// The counter checks read each session's calls in real time, so they
// hold for calls that overlap as well as for a client that calls one at
// a time (where a gap may only follow a failed call). The arithmetic
// ones read test_counter alone: a read counts nothing.
func check(ops []op, logged ...holdRun) []violation { return checkFrozen(ops, nil, logged...) }

// checkFrozen is check for a history during which the nodes were frozen
// (SIGSTOP) for the spans frozen: a test_hold run in flight on a node
// frozen past its deadline cannot end before the node runs again (nothing
// can, in a stopped process), and ends at once when it does — cancelled
// by the lease, or its time long up — with nothing it does reaching
// anyone (its node no longer acts: checkHolds's trimFrozen).
func checkFrozen(ops []op, frozen []span, logged ...holdRun) []violation {
	var out []violation
	for _, o := range ops {
		switch {
		case o.outcome == pending:
			out = append(out, violation{kind: notEnded, detail: "the request is still outstanding", ops: []op{o}})
		case o.outcome == unanswered:
			out = append(out, violation{kind: noAnswer, detail: "nothing came back", ops: []op{o}})
		}
		if o.answers > 1 {
			out = append(out, violation{kind: answeredTwice, detail: fmt.Sprintf("%d responses", o.answers), ops: []op{o}})
		}
		if len(o.strays) > 0 {
			shown := o.strays[:min(len(o.strays), maxShown)]
			out = append(out, violation{kind: strayFrame,
				detail: fmt.Sprintf("%d frames, the first %d: %s", len(o.strays), len(shown), strings.Join(shown, "; ")), ops: []op{o}})
		}
	}
	bySession := map[string][]op{}
	var sessions []string
	for _, o := range ops {
		if o.tool != counterTool {
			continue
		}
		if _, ok := bySession[o.session]; !ok {
			sessions = append(sessions, o.session)
		}
		bySession[o.session] = append(bySession[o.session], o)
	}
	for _, s := range sessions {
		out = append(out, checkCounter(bySession[s])...)
	}
	out = append(out, checkLinearizable(ops)...)
	runs, unread := holdRuns(ops)
	out = append(out, unread...)
	return append(out, checkHolds(trimFrozen(append(runs, logged...), frozen))...)
}

// checkCounter checks the test_counter calls of one session.
func checkCounter(ops []op) []violation {
	var out []violation
	type read struct {
		op
		v int64
	}
	var reads []read
	for _, o := range ops {
		if !o.ok() {
			continue
		}
		v, err := strconv.ParseInt(o.value, 10, 64)
		if err != nil || v < 1 {
			out = append(out, violation{kind: twoOwners, detail: fmt.Sprintf("a counter value that is not a count: %q", o.value), ops: []op{o}})
			continue
		}
		reads = append(reads, read{o, v})
	}
	// A repeat, or a step back in real time: for each read, the largest
	// value read by a call that ended before it started. The reads that
	// step back below one same earlier read are one violation (a lost
	// write shows in every read after it).
	slices.SortFunc(reads, func(a, b read) int { return a.start.Compare(b.start) })
	below := map[int]int{} // the earlier read's op number → its violation in out
	for i, b := range reads {
		var prev *read
		for j := range reads[:i] {
			a := &reads[j]
			if a.end.Before(b.start) && (prev == nil || a.v > prev.v) {
				prev = a
			}
		}
		if prev == nil || b.v > prev.v {
			continue
		}
		if k, ok := below[prev.n]; ok {
			v := &out[k]
			v.more++
			v.ops = append(v.ops[:2], b.op)
			continue
		}
		what := "a step back"
		if b.v == prev.v {
			what = "a repeat"
		}
		below[prev.n] = len(out)
		out = append(out, violation{kind: twoOwners,
			detail: fmt.Sprintf("%s: %d after %d", what, b.v, prev.v), ops: []op{prev.op, b.op}})
	}
	for i, a := range reads {
		for _, b := range reads[i+1:] {
			overlap := !a.end.Before(b.start) && !b.end.Before(a.start)
			if a.v == b.v && overlap {
				out = append(out, violation{kind: twoOwners,
					detail: fmt.Sprintf("a repeat: two calls at once read %d", a.v), ops: []op{a.op, b.op}})
			}
		}
	}
	if len(out) > 0 {
		// Two sequences of values mixed: their gaps say nothing more.
		return out
	}
	// Gaps: by value, the increments not seen before each read, against
	// the failed calls that had started by the time it ended; reported
	// where the shortfall first appears or grows.
	slices.SortFunc(reads, func(a, b read) int { return cmp.Compare(a.v, b.v) })
	var distinct int64 // distinct values read below the current one
	var shortfall int64
	for i, b := range reads {
		if i > 0 && reads[i-1].v == b.v {
			continue // a repeat, reported above
		}
		unseen := b.v - 1 - distinct
		distinct++
		var failedBefore []op
		for _, o := range ops {
			if !o.ok() && o.start.Before(b.end) {
				failedBefore = append(failedBefore, o)
			}
		}
		if short := unseen - int64(len(failedBefore)); short > shortfall {
			shortfall = short
			shown := failedBefore[max(0, len(failedBefore)-maxShown):]
			out = append(out, violation{kind: unexplained,
				detail: fmt.Sprintf("%d was read with %d increments unseen, but only %d calls had failed by then (the last %d shown)",
					b.v, unseen, len(failedBefore), len(shown)),
				ops: append(slices.Clone(shown), b.op)})
		}
	}
	return out
}
