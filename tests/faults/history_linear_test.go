package faults_test

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/anishathalye/porcupine"
)

// linearizableTimeout bounds Porcupine's search of one session's history;
// past it the session's check is undecided (a violation too: a check that
// cannot conclude must not pass).
const linearizableTimeout = 20 * time.Second

// counterCall is the input of one operation of the counter model; its
// output is the value the call read (int64), or nothing for
// maybeIncrement.
type counterCall int

const (
	increment      counterCall = iota // test_counter, answered: it read the new value
	read                              // test_counter_get, answered: it read the value
	maybeIncrement                    // test_counter whose outcome its client could not know
)

// counterState is the counter model's state: the count, and how many
// increments of unknown outcome may still count.
type counterState struct{ count, mayCount int64 }

// counterModel is test_counter and test_counter_get as Porcupine checks
// them, one session at a time.
//
// A call whose outcome its client could not know — an error came back, or
// nothing, or the client gave up — may have counted at any time after it
// started, or never: the usual encoding makes it an increment that
// returns at +∞, linearized anywhere after its call. That makes the
// checker try each subset of such calls one by one (2^k orders: 20 of
// them took 7 s, and a partition gives a session more), so here it is a
// token instead: maybeIncrement, an instant operation at the call's
// start, adds one to mayCount, and any later answered call may take up
// to mayCount increments to explain the value it read. It is the same
// set of histories — a pending increment can only be seen by a later
// read — and the search stays linear in the calls.
var counterModel = porcupine.Model{
	Init: func() any { return counterState{} },
	Step: func(state, input, output any) (bool, any) {
		s := state.(counterState)
		call := input.(counterCall)
		if call == maybeIncrement {
			s.mayCount++
			return true, s
		}
		value := output.(int64)
		before := value // the count the call found
		if call == increment {
			before--
		}
		unseen := before - s.count // increments of unknown outcome that counted meanwhile
		if unseen < 0 || unseen > s.mayCount {
			return false, s
		}
		return true, counterState{count: value, mayCount: s.mayCount - unseen}
	},
	Hash: func(state any) uint64 {
		s := state.(counterState)
		return uint64(s.count)<<20 ^ uint64(s.mayCount)
	},
	DescribeOperation: func(input, output any) string {
		switch input.(counterCall) {
		case increment:
			return fmt.Sprintf("increment → %d", output)
		case read:
			return fmt.Sprintf("read → %d", output)
		}
		return "increment → ? (may count from here on, or never)"
	},
	DescribeState: func(state any) string {
		s := state.(counterState)
		if s.mayCount == 0 {
			return strconv.FormatInt(s.count, 10)
		}
		return fmt.Sprintf("%d (+ up to %d of unknown outcome)", s.count, s.mayCount)
	},
	DescribeOperationMetadata: func(info any) string { return info.(traced).o.String() },
}

// traced is the metadata of a Porcupine operation: the call it stands for
// and its place among the session's operations.
type traced struct {
	i int
	o op
}

// checkLinearizable checks, per session, that the values its test_counter
// and test_counter_get calls read are linearizable (counterModel). Of the
// calls that did not answer a value: an increment refused with an HTTP
// status never ran, and is left out; any other may have counted
// (maybeIncrement); a read tells nothing, and is left out.
func checkLinearizable(ops []op) []violation {
	var out []violation
	bySession := map[string][]op{}
	var sessions []string
	for _, o := range ops {
		if o.tool != counterTool && o.tool != counterGetTool {
			continue
		}
		if _, ok := bySession[o.session]; !ok {
			sessions = append(sessions, o.session)
		}
		bySession[o.session] = append(bySession[o.session], o)
	}
	for _, s := range sessions {
		out = append(out, checkSessionLinearizable(bySession[s])...)
	}
	return out
}

// checkSessionLinearizable checks the counter calls of one session.
func checkSessionLinearizable(ops []op) []violation {
	var out []violation
	var history []porcupine.Operation
	var nodes []string // a row of the picture per node
	for _, o := range ops {
		if !slices.Contains(nodes, o.node) {
			nodes = append(nodes, o.node)
		}
	}
	slices.Sort(nodes)
	for _, o := range ops {
		p := porcupine.Operation{ClientId: slices.Index(nodes, o.node), Call: o.start.UnixNano(), Return: o.end.UnixNano(),
			Metadata: traced{len(history), o}}
		value, err := strconv.ParseInt(o.value, 10, 64)
		counted := o.ok() && err == nil && value >= 0
		switch {
		case o.tool == counterGetTool && counted:
			p.Input, p.Output = read, value
		case o.tool == counterGetTool && o.ok():
			out = append(out, violation{kind: notLinearizable, detail: fmt.Sprintf("a read that is not a count: %q", o.value), ops: []op{o}})
			continue
		case o.tool == counterGetTool, o.refused:
			continue
		case counted:
			p.Input, p.Output = increment, value
		default:
			// Not a count (checkCounter reports it), or no answer: it
			// may count from its start on.
			p.Input, p.Return = maybeIncrement, p.Call
		}
		history = append(history, p)
	}
	switch porcupine.CheckOperationsTimeout(counterModel, history, linearizableTimeout) {
	case porcupine.Ok:
		return out
	case porcupine.Unknown:
		return append(out, violation{kind: undecided,
			detail: fmt.Sprintf("Porcupine did not decide within %s whether the %d counter calls of the session are linearizable", linearizableTimeout, len(history)),
			ops:    ops[len(ops)-1:]})
	}
	_, info := porcupine.CheckOperationsVerbose(counterModel, history, 0)
	return append(out, illegal(history, info))
}

// illegal describes a history Porcupine found not linearizable: the
// longest prefix of calls that some order explains, and the first call
// that no order lets follow it.
func illegal(history []porcupine.Operation, info porcupine.LinearizationInfo) violation {
	var longest []porcupine.Operation
	for _, partition := range info.PartialLinearizationsOperations() {
		for _, l := range partition {
			if len(l) > len(longest) {
				longest = l
			}
		}
	}
	explained := make([]bool, len(history))
	var shown []op // the last explained call that read a value
	for _, p := range longest {
		c := p.Metadata.(traced)
		explained[c.i] = true
		if p.Input != maybeIncrement {
			shown = []op{c.o}
		}
	}
	var stuck *op
	for i, p := range history {
		o := p.Metadata.(traced).o
		if !explained[i] && p.Input != maybeIncrement && (stuck == nil || o.start.Before(stuck.start)) {
			stuck = &o
		}
	}
	v := violation{kind: notLinearizable, ops: shown,
		detail:    fmt.Sprintf("no order of the session's %d counter calls explains the values read", len(history)),
		visualize: func(w io.Writer) error { return porcupine.Visualize(counterModel, info, w) }}
	if stuck == nil {
		return v
	}
	if len(v.ops) == 0 {
		v.detail += fmt.Sprintf(": none begins with %s → %q", stuck.tool, stuck.value)
	} else {
		v.detail += fmt.Sprintf(": the longest that explains some (%d calls) ends with the first shown, and none lets %s → %q, the second, follow it",
			len(longest), stuck.tool, stuck.value)
	}
	v.ops = append(v.ops, *stuck)
	return v
}
