package faults_test

import (
	"bufio"
	json "encoding/json/v2"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	mcpsession "github.com/mcp-actors/mcp-actors/actors/session"
)

// holdLogMessage is the message of the line a node logs for each run of
// test_hold, answered or not (reftools.HoldRunMessage; the line's format
// is in docs/reference-tools.md).
const holdLogMessage = "test_hold run"

// holdRun is one run of test_hold's handler: of which session, on which
// node, from when to when.
type holdRun struct {
	session    string // the session's log ID (mcpsession.LogID), as a node's log names it
	node       string
	start, end time.Time
	cancelled  bool
	from       string // where it was read: an answer ("#12") or a log ("n1's log")
	answer     *op    // the call that answered it, when read from an answer
}

func (r holdRun) String() string {
	s := fmt.Sprintf("%s ran %s–%s", r.node, r.start.Format("15:04:05.000"), r.end.Format("15:04:05.000"))
	if r.cancelled {
		s += " (cancelled)"
	}
	return s + " [" + r.from + "]"
}

// holdAnswer is test_hold's answer, and the run group of its log line.
type holdAnswer struct {
	Node      string `json:"node"`
	Start     int64  `json:"start"` // Unix ns
	End       int64  `json:"end"`   // Unix ns
	Cancelled bool   `json:"cancelled"`
}

// run is the run a holds, of the session with log ID session.
func (a holdAnswer) run(session, from string) (holdRun, error) {
	if a.Node == "" || a.Start <= 0 || a.End < a.Start {
		return holdRun{}, fmt.Errorf("node %q from %d to %d", a.Node, a.Start, a.End)
	}
	return holdRun{session: session, node: a.Node, start: time.Unix(0, a.Start), end: time.Unix(0, a.End), cancelled: a.Cancelled, from: from}, nil
}

// holdRuns reads the runs of a history's answered test_hold calls, and
// reports each answer that is not a run.
func holdRuns(ops []op) ([]holdRun, []violation) {
	var runs []holdRun
	var out []violation
	for _, o := range ops {
		if o.tool != holdTool || !o.ok() {
			continue
		}
		var a holdAnswer
		err := json.Unmarshal([]byte(o.value), &a, json.RejectUnknownMembers(true))
		var r holdRun
		if err == nil {
			r, err = a.run(mcpsession.LogID(o.session), fmt.Sprintf("#%d", o.n))
		}
		if err != nil {
			out = append(out, violation{kind: notARun, detail: err.Error(), ops: []op{o}})
			continue
		}
		r.answer = &o
		runs = append(runs, r)
	}
	return runs, out
}

// logField is one key=value of a line of slog's text format.
var logField = regexp.MustCompile(`([^\s=]+)=("(?:[^"\\]|\\.)*"|\S*)`)

// loggedHolds reads the test_hold runs in a node's log (its stderr, in
// slog's text or JSON format), from names the log in what the check
// reports.
func loggedHolds(from, log string) ([]holdRun, error) {
	var runs []holdRun
	sc := bufio.NewScanner(strings.NewReader(log))
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if !strings.Contains(text, holdLogMessage) {
			continue
		}
		var l struct {
			Msg     string     `json:"msg"`
			Session string     `json:"session"`
			Run     holdAnswer `json:"run"`
		}
		var err error
		if strings.HasPrefix(text, "{") {
			err = json.Unmarshal([]byte(text), &l)
		} else {
			l.Msg, l.Session, l.Run, err = textHold(text)
		}
		if err != nil {
			return nil, fmt.Errorf("%s, line %d: %w: %s", from, line, err, text)
		}
		if l.Msg != holdLogMessage {
			continue
		}
		r, err := l.Run.run(l.Session, from)
		if err != nil {
			return nil, fmt.Errorf("%s, line %d: %w: %s", from, line, err, text)
		}
		runs = append(runs, r)
	}
	return runs, sc.Err()
}

// textHold reads a test_hold line of slog's text format: its message,
// session and run.
func textHold(line string) (msg, sess string, run holdAnswer, err error) {
	fields := map[string]string{}
	for _, m := range logField.FindAllStringSubmatch(line, -1) {
		v := m[2]
		if strings.HasPrefix(v, `"`) {
			if v, err = strconv.Unquote(v); err != nil {
				return "", "", run, err
			}
		}
		fields[m[1]] = v
	}
	if fields["msg"] != holdLogMessage {
		return fields["msg"], "", run, nil
	}
	if run.Start, err = strconv.ParseInt(fields["run.start"], 10, 64); err != nil {
		return "", "", run, err
	}
	if run.End, err = strconv.ParseInt(fields["run.end"], 10, 64); err != nil {
		return "", "", run, err
	}
	if run.Cancelled, err = strconv.ParseBool(fields["run.cancelled"]); err != nil {
		return "", "", run, err
	}
	run.Node = fields["run.node"]
	return fields["msg"], fields["session"], run, nil
}

// span is a stretch of time a node was frozen (SIGSTOP to SIGCONT).
type span struct {
	node     string
	from, to time.Time
}

// resumeBound is how soon after its node runs again a test_hold run that
// a freeze caught must end to count as ended when the freeze began: the
// watchdog looks every 100 ms at most, and a node resuming past its
// deadline cancels its handlers at its first look; the rest is room for
// three -race servers on two shared cores.
const resumeBound = 2 * time.Second

// freezeSlack is how long after its recorded start a freeze may take
// effect (trimFrozen).
const freezeSlack = 100 * time.Millisecond

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// trimFrozen ends each run that a freeze of its node caught, and that
// ended within resumeBound of the node running again, when the freeze
// began: the run did nothing meanwhile, and after it only returned. A
// run that went on longer after the freeze is left as it is (the check
// then judges all of it).
//
// A freeze is recorded just before its SIGSTOP is sent, and takes effect
// once every thread of the process has stopped: a run that started within
// freezeSlack after the recorded start was caught by it too (seen: a run
// stamped 13 ms after it), and counts as ended when it started.
func trimFrozen(runs []holdRun, frozen []span) []holdRun {
	out := slices.Clone(runs)
	for i, r := range out {
		for _, f := range frozen {
			if f.node == r.node && !f.from.Add(freezeSlack).Before(r.start) && f.from.Before(r.end) && !r.end.Before(f.to) &&
				r.end.Sub(f.to) <= resumeBound {
				out[i].end = latest(f.from, r.start)
				out[i].from += fmt.Sprintf(", frozen %s–%s", f.from.Format("15:04:05.000"), f.to.Format("15:04:05.000"))
			}
		}
	}
	return out
}

// checkHolds returns a violation for each two runs of one session, on two
// nodes, that overlap in time: two nodes ran the session's handlers at
// once. A run read twice (answered and logged) counts once; a run of no
// session (a 2026-07-28 request) is not checked.
func checkHolds(runs []holdRun) []violation {
	bySession := map[string][]holdRun{}
	var sessions []string
	seen := map[string]bool{}
	for _, r := range runs {
		key := fmt.Sprintf("%s %s %d %d", r.session, r.node, r.start.UnixNano(), r.end.UnixNano())
		if r.session == "" || seen[key] {
			continue
		}
		seen[key] = true
		if _, ok := bySession[r.session]; !ok {
			sessions = append(sessions, r.session)
		}
		bySession[r.session] = append(bySession[r.session], r)
	}
	var out []violation
	for _, s := range sessions {
		rs := bySession[s]
		slices.SortFunc(rs, func(a, b holdRun) int { return a.start.Compare(b.start) })
		for i, a := range rs {
			for _, b := range rs[i+1:] {
				if !b.start.Before(a.end) {
					break // and so do the later ones
				}
				if a.node == b.node {
					continue
				}
				both := a.end
				if b.end.Before(both) {
					both = b.end
				}
				v := violation{kind: holdsOverlap,
					detail: fmt.Sprintf("session %s: %s and %s, for %s at once", s, a, b, both.Sub(b.start))}
				for _, r := range []holdRun{a, b} {
					if r.answer != nil {
						v.ops = append(v.ops, *r.answer)
					}
				}
				out = append(out, v)
			}
		}
	}
	return out
}
