package faults_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// t0 is the start of the hand-written histories.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// call is a hand-written test_counter call of session s through node,
// from second a to second b, with its result: a number is the value read,
// "!" an error that came back (it may have counted), "x" an HTTP status
// that refused it (it never ran), "?" nothing within the bound, ""
// still pending.
func call(s, node string, a, b float64, result string) op {
	o := op{session: s, node: node, tool: counterTool,
		start: t0.Add(time.Duration(a * float64(time.Second))), end: t0.Add(time.Duration(b * float64(time.Second)))}
	switch result {
	case "":
		o.outcome, o.end = pending, time.Time{}
	case "!":
		o.outcome, o.err = failed, "JSON-RPC error -32603: the request may have taken effect before its node was lost"
	case "x":
		o.outcome, o.err, o.refused = failed, "HTTP 503: no quorum", true
	case "?":
		o.outcome, o.err = unanswered, "context deadline exceeded"
	default:
		o.outcome, o.value, o.answers = answered, result, 1
	}
	return o
}

// get is a hand-written test_counter_get call, as call.
func get(s, node string, a, b float64, result string) op {
	o := call(s, node, a, b, result)
	o.tool = counterGetTool
	return o
}

// seq is a client calling session s one call a second, round-robin over
// n1, n2, n3, with these results.
func seq(s string, results ...string) []op {
	var out []op
	for i, r := range results {
		out = append(out, call(s, fmt.Sprintf("n%d", i%3+1), float64(i), float64(i)+0.5, r))
	}
	return out
}

// numbered gives the ops their places in the history.
func numbered(ops ...[]op) []op {
	var out []op
	for _, o := range ops {
		out = append(out, o...)
	}
	for i := range out {
		out[i].n = i + 1
	}
	return out
}

// kinds returns the kinds of the violations, in order.
func kinds(vs []violation) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.kind)
	}
	return out
}

func TestCheckGoodHistories(t *testing.T) {
	for _, tc := range []struct {
		name string
		ops  []op
	}{
		{"counting across nodes", numbered(seq("a", "1", "2", "3", "4", "5"))},
		{"sessions count on their own", numbered(seq("a", "1", "2", "3"), seq("b", "1", "2"))},
		{"a failed call that counted", numbered(seq("a", "1", "2", "!", "4", "5"))},
		{"a failed call that did not count", numbered(seq("a", "1", "2", "!", "3", "4"))},
		{"the first call failed and counted", numbered(seq("a", "!", "2", "3"))},
		{"two failed calls, both counted", numbered(seq("a", "1", "!", "!", "4"))},
		// A call that failed for its client ran later, after the next
		// call had been answered: the gap comes one read late.
		{"a failed call that counted late", numbered(seq("a", "1", "!", "2", "4", "5"))},
		{"calls at once, read in either order", numbered([]op{
			call("a", "n1", 0, 1, "1"),
			call("a", "n2", 2, 4, "3"),
			call("a", "n3", 2.5, 3, "2"),
			call("a", "n1", 5, 6, "4"),
		})},
		{"other tools are not counted", numbered(seq("a", "1", "2"), []op{{session: "a", tool: "test_echo", node: "n1",
			start: t0, end: t0.Add(time.Second), outcome: answered, value: "hello", answers: 1}})},
		{"no calls", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Empty(t, check(tc.ops))
		})
	}
}

func TestCheckBadHistories(t *testing.T) {
	twice := seq("a", "1", "2")
	twice[1].answers = 2
	stray := seq("a", "1", "2")
	stray[0].strays = []string{`{"jsonrpc":"2.0","id":"b-7","result":{}}`}
	for _, tc := range []struct {
		name string
		ops  []op
		want []string
	}{
		// Each counter violation is one of the arithmetic checks' and
		// one of Porcupine's: two views of one broken promise.
		{"a repeat", numbered(seq("a", "1", "2", "2", "3")), []string{twoOwners, notLinearizable}},
		{"a step back", numbered(seq("a", "1", "2", "3", "1")), []string{twoOwners, notLinearizable}},
		// What the issue saw after SIGCONT: n1 and n2 both answer.
		{"two owners interleaved", numbered(seq("a", "24", "13", "25", "14", "26")), []string{twoOwners, twoOwners, notLinearizable}},
		// Every read after a lost write is at or below the last one before
		// it: one violation.
		{"a write lost at a takeover", numbered(seq("a", "1", "2", "3", "!", "2", "3", "4")), []string{twoOwners, notLinearizable}},
		{"two calls at once read one value", numbered([]op{
			call("a", "n1", 0, 2, "1"),
			call("a", "n2", 1, 3, "1"),
		}), []string{twoOwners, notLinearizable}},
		{"a gap without a failed call", numbered(seq("a", "1", "2", "4")), []string{unexplained, notLinearizable}},
		{"the first read is not 1", numbered(seq("a", "2", "3")), []string{unexplained, notLinearizable}},
		{"two gaps after one failed call", numbered(seq("a", "1", "!", "3", "5")), []string{unexplained, notLinearizable}},
		{"a failed call after the gap explains nothing", numbered(seq("a", "1", "3", "!")), []string{unexplained, notLinearizable}},
		{"not a count", numbered(seq("a", "1", "two")), []string{twoOwners}},
		{"still outstanding", numbered(seq("a", "1", "")), []string{notEnded}},
		{"nothing came back", numbered(seq("a", "1", "?", "3")), []string{noAnswer}},
		{"answered twice", numbered(twice), []string{answeredTwice}},
		{"a stranger's frame", numbered(stray), []string{strayFrame}},
		{"sessions are checked on their own", numbered(seq("a", "1", "2"), seq("b", "1", "1")), []string{twoOwners, notLinearizable}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := check(tc.ops)
			assert.Equal(t, tc.want, kinds(vs), "%v", vs)
		})
	}
}

// TestCheckNamesTheOperations: a violation lists the calls that show it.
func TestCheckNamesTheOperations(t *testing.T) {
	vs := check(numbered(seq("a", "1", "2", "1")))
	require.Equal(t, []string{twoOwners, notLinearizable}, kinds(vs))
	text := vs[0].String()
	assert.Contains(t, text, "two owners or a lost write: a step back: 1 after 2")
	assert.Contains(t, text, `#2 a test_counter via n2`)
	assert.Contains(t, text, `#3 a test_counter via n3`)
	assert.Len(t, vs[0].ops, 2)

	text = vs[1].String()
	assert.Contains(t, text, "not linearizable: no order of the session's 3 counter calls explains the values read: "+
		`the longest that explains some (2 calls) ends with the first shown, and none lets test_counter → "1", the second, follow it`)
	assert.Contains(t, text, `#2 a test_counter via n2`)
	assert.Contains(t, text, `#3 a test_counter via n3`)
}

// TestCheckCollapsesALostWrite: the reads below one earlier read are one
// violation, naming the first and the last of them.
func TestCheckCollapsesALostWrite(t *testing.T) {
	vs := check(numbered(seq("a", "1", "2", "3", "4", "1", "2", "3", "4", "5")))
	require.Equal(t, []string{twoOwners, notLinearizable}, kinds(vs), "%v", vs)
	assert.Equal(t, 3, vs[0].more)
	require.Len(t, vs[0].ops, 3)
	assert.Equal(t, []string{"4", "1", "4"}, []string{vs[0].ops[0].value, vs[0].ops[1].value, vs[0].ops[2].value})
	assert.Contains(t, vs[0].String(), "a step back: 1 after 4, and 3 more reads at or below it")
}

// TestHistoryRecords: concurrent clients record into one history; a
// second answer is counted, not taken.
func TestHistoryRecords(t *testing.T) {
	var h history
	const clients, calls = 8, 50
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			s := fmt.Sprintf("s%d", c)
			for i := 1; i <= calls; i++ {
				n := h.begin(s, "n1", counterTool)
				switch i % 10 {
				case 0:
					h.fail(n, errors.New("JSON-RPC error -32603: may have taken effect"), false)
				default:
					h.answer(n, fmt.Sprint(i))
				}
			}
		})
	}
	wg.Wait()
	ops := h.snapshot()
	require.Len(t, ops, clients*calls)
	for i, o := range ops {
		assert.Equal(t, i+1, o.n)
		assert.NotEqual(t, pending, o.outcome)
		assert.False(t, o.end.Before(o.start))
	}
	assert.Empty(t, check(ops))

	n := h.begin("late", "n2", counterTool)
	h.answer(n, "1")
	h.answer(n, "2") // the same request answered again
	h.giveUp(n, errors.New("too late"))
	h.stray(n, "a frame")
	o := h.snapshot()[n-1]
	assert.Equal(t, answered, o.outcome)
	assert.Equal(t, "1", o.value)
	assert.Equal(t, 2, o.answers)
	assert.Equal(t, []string{answeredTwice, strayFrame}, kinds(check([]op{o})))
	assert.True(t, strings.HasPrefix(o.String(), "#"+fmt.Sprint(n)+" late test_counter via n2"))

	n = h.begin("refused", "n3", counterTool)
	h.refuse(n, errors.New("HTTP 503: no quorum"))
	h.answer(n, "1") // too late: the request ended
	o = h.snapshot()[n-1]
	assert.Equal(t, failed, o.outcome)
	assert.True(t, o.refused, "no handler ran")
	assert.Equal(t, "HTTP 503: no quorum", o.err)
}
