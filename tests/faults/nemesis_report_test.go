package faults_test

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// checkCampaign checks a campaign's whole history with the test_hold
// runs its nodes logged and the spans its nemesis froze them for
// (checkFrozen), logs the history's summary, and fails
// the test with every violation (at most maxReported), naming the seed.
// It returns the violations.
func checkCampaign(camp campaign, h *history, frozen []span, logged []holdRun) []violation {
	t := camp.t
	t.Helper()
	ops := h.snapshot()
	vs := checkFrozen(ops, frozen, logged...)
	t.Logf("history: %s", summary(ops))
	if len(vs) == 0 {
		return nil
	}
	msg := fmt.Sprintf("%d violations in a history of %d requests (%s):", len(vs), len(ops), camp.rerun())
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
	return vs
}

// report logs a campaign's summary, each line starting "nemesis
// summary:" (scripts/nemesis.sh prints them): the faults by kind, the
// requests by tool and outcome, the failover each fault of a node shows,
// and how many violations the check found.
func report(camp campaign, faults []fault, ops []op, violations int) {
	t := camp.t
	t.Logf("nemesis summary: seed %d, faults for %s: %s", camp.seed, camp.duration, faultsByKind(faults))
	for _, line := range opsByTool(ops) {
		t.Logf("nemesis summary: %s", line)
	}
	for _, line := range failovers(ops, faults) {
		t.Logf("nemesis summary: %s", line)
	}
	for _, line := range stretches(ops, 2*faultLease+failoverSlack) {
		t.Logf("nemesis summary: %s", line)
	}
	t.Logf("nemesis summary: %d violations (seed %d)", violations, camp.seed)
}

// faultsByKind counts the faults injected, by kind, and those skipped.
func faultsByKind(faults []fault) string {
	count := map[string]int{}
	skipped := 0
	for _, f := range faults {
		if f.skipped != "" {
			skipped++
			continue
		}
		count[f.kind]++
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(count)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, count[k]))
	}
	out := fmt.Sprintf("%d injected", len(faults)-skipped)
	if len(parts) > 0 {
		out += " (" + strings.Join(parts, ", ") + ")"
	}
	if skipped > 0 {
		out += fmt.Sprintf(", %d skipped", skipped)
	}
	return out
}

// opsByTool counts the requests of each tool by outcome, with the most
// common errors of those that failed.
func opsByTool(ops []op) []string {
	type tally struct {
		outcomes map[outcome]int
		refused  int
		errs     map[string]int
	}
	byTool := map[string]*tally{}
	for _, o := range ops {
		c := byTool[o.tool]
		if c == nil {
			c = &tally{outcomes: map[outcome]int{}, errs: map[string]int{}}
			byTool[o.tool] = c
		}
		c.outcomes[o.outcome]++
		if o.refused {
			c.refused++
		}
		if o.err != "" {
			c.errs[errorKind(o.err)]++
		}
	}
	var out []string
	for _, tool := range slices.Sorted(maps.Keys(byTool)) {
		c := byTool[tool]
		line := fmt.Sprintf("%s: %d answered, %d failed (%d refused), %d unanswered, %d pending",
			tool, c.outcomes[answered], c.outcomes[failed], c.refused, c.outcomes[unanswered], c.outcomes[pending])
		kinds := slices.SortedFunc(maps.Keys(c.errs), func(a, b string) int { return cmp.Or(cmp.Compare(c.errs[b], c.errs[a]), strings.Compare(a, b)) })
		for i, k := range kinds {
			if i == 3 {
				line += fmt.Sprintf("; %d more kinds", len(kinds)-3)
				break
			}
			line += fmt.Sprintf("; %d× %q", c.errs[k], k)
		}
		out = append(out, line)
	}
	return out
}

// errorKind shortens an error to what it says, not whose it was: its
// first 90 bytes with the digits masked (but a JSON-RPC error's code).
func errorKind(err string) string {
	head := ""
	if code, rest, ok := strings.Cut(err, ": "); ok && strings.HasPrefix(code, "JSON-RPC error ") {
		head, err = code+": ", rest
	}
	s := head + strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return '#'
		}
		return r
	}, err)
	if len(s) > 90 {
		s = s[:90] + "…"
	}
	return s
}

// ownerAt returns, for a session and a time, the node that ran the
// session's last test_hold run started before it (answered: the history's
// own record of where its handlers ran), or, when none had, the node that
// opened it (its ID's prefix).
func ownerAt(ops []op) func(session string, at time.Time) string {
	runs, _ := holdRuns(ops)
	bySession := map[string][]holdRun{}
	for _, r := range runs {
		bySession[r.answer.session] = append(bySession[r.answer.session], r)
	}
	return func(session string, at time.Time) string {
		var last *holdRun
		for i, r := range bySession[session] {
			if r.start.Before(at) && (last == nil || r.start.After(last.start)) {
				last = &bySession[session][i]
			}
		}
		if last == nil {
			opener, _, _ := strings.Cut(session, ".")
			return opener
		}
		return last.node
	}
}

// failovers reads, for each fault that struck a node, how the sessions
// that node ran handlers for last (ownerAt) fared: how long after the
// fault each was first answered through another node while the fault
// lasted (a process or network fault: a request through another node
// that started after the fault was served by a new owner, since the
// struck node could not serve it), and how long until each was answered
// again at all.
func failovers(ops []op, faults []fault) []string {
	owner := ownerAt(ops)
	bySession := map[string][]op{}
	for _, o := range ops {
		if o.session != "" {
			bySession[o.session] = append(bySession[o.session], o)
		}
	}
	var out []string
	for _, f := range faults {
		if f.skipped != "" {
			continue
		}
		var elsewhere, again []string
		owned := 0
		for _, s := range slices.Sorted(maps.Keys(bySession)) {
			sops := bySession[s]
			called := func(after bool) bool {
				return slices.ContainsFunc(sops, func(o op) bool { return o.start.Before(f.at) != after })
			}
			if owner(s, f.at) != f.node || !called(false) || !called(true) {
				continue // not its, or not called on both sides of the fault
			}
			owned++
			elsewhere = append(elsewhere, firstAnswer(sops, f.at, func(o op) bool { return o.node != f.node && o.end.Before(f.healed) }))
			again = append(again, firstAnswer(sops, f.at, func(op) bool { return true }))
		}
		line := fmt.Sprintf("failover: %s", f)
		if f.note != "" {
			line += " (" + f.note + ")"
		}
		if owned == 0 {
			out = append(out, line+": no session of its ran a handler just before")
			continue
		}
		if slices.Contains(clockFaults, f.kind) { // its node was never out of reach
			out = append(out, fmt.Sprintf("%s: %d sessions of its; answered again after %s", line, owned, strings.Join(again, ", ")))
			continue
		}
		out = append(out, fmt.Sprintf("%s: %d sessions of its; served through another node during the fault after %s; answered again after %s",
			line, owned, strings.Join(elsewhere, ", "), strings.Join(again, ", ")))
	}
	return out
}

// firstAnswer is how long after at the first request of sops that
// started at or after at and satisfies cond was answered, or "—".
func firstAnswer(sops []op, at time.Time, cond func(op) bool) string {
	var first time.Time
	for _, o := range sops {
		if o.ok() && !o.start.Before(at) && cond(o) && (first.IsZero() || o.end.Before(first)) {
			first = o.end
		}
	}
	if first.IsZero() {
		return "—"
	}
	return first.Sub(at).Round(100 * time.Millisecond).String()
}

// stretches reads, for each session, the longest time between two of its
// answers (or its first request and its first answer) while it was
// called, and lists those longer than bound with the kinds of error its
// requests got meanwhile: a session its clients could not get served
// through several quiet spells.
func stretches(ops []op, bound time.Duration) []string {
	bySession := map[string][]op{}
	for _, o := range ops {
		if o.session != "" {
			bySession[o.session] = append(bySession[o.session], o)
		}
	}
	var out []string
	for _, s := range slices.Sorted(maps.Keys(bySession)) {
		sops := bySession[s]
		from := sops[0].start
		var worstFrom, worstTo time.Time
		for _, o := range sops {
			if !o.ok() {
				continue
			}
			if o.end.Sub(from) > worstTo.Sub(worstFrom) {
				worstFrom, worstTo = from, o.end
			}
			from = o.end
		}
		if worstTo.Sub(worstFrom) <= bound {
			continue
		}
		errs := map[string]int{}
		for _, o := range sops {
			if !o.ok() && !o.start.Before(worstFrom) && o.start.Before(worstTo) {
				errs[o.tool+" via "+o.node+": "+errorKind(o.err)]++
			}
		}
		line := fmt.Sprintf("session %s unanswered for %s (%s–%s):", s, worstTo.Sub(worstFrom).Round(100*time.Millisecond),
			worstFrom.Format("15:04:05.000"), worstTo.Format("15:04:05.000"))
		for _, k := range slices.Sorted(maps.Keys(errs)) {
			line += fmt.Sprintf("\n    %d× %s", errs[k], k)
		}
		out = append(out, line)
	}
	return out
}
