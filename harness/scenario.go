package harness

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	mcpactors "github.com/mcp-actors/mcp-actors"
)

// A scenario is a txtar archive whose "transcript" file lists, one message
// per line, what the client sends (lines starting with "> ") and what the
// server must send back ("< "). Blank lines and lines starting with "#" are
// comments. The text before the first file describes the scenario.
//
// Each run of consecutive "<" lines is one group (a blank or comment line
// ends it): the server must send exactly those messages next, in any order
// (messages on different streams may interleave). A "> " line is sent only
// after every earlier group has arrived, byte for byte as written but for
// its placeholders and "$$" escapes, which are replaced in place.
// Placeholders (see match.go) stand for volatile values: "$ANY" matches
// anything, "$NAME" binds a value (for example the ID of a server-to-client
// request) that later "> " lines can use.
//
//	> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_sampling","arguments":{"prompt":"hi"}}}
//	< {"jsonrpc":"2.0","id":"$S","method":"sampling/createMessage","params":{…}}
//	> {"jsonrpc":"2.0","id":"$S","result":{"role":"assistant","content":{"type":"text","text":"hello"},"model":"m"}}
//	< {"jsonrpc":"2.0","id":2,"result":{…}}
//
// A line "! name arg…" runs an action once every earlier group has arrived,
// its arguments' placeholders replaced (see Actions): the test's own (to
// complete a URL elicitation as the page's callback would, say) or the
// harness's ("drain", and "node" in a cluster's modern scenarios).
//
//	< {"jsonrpc":"2.0","id":"$E","method":"elicitation/create","params":{"mode":"url","elicitationId":"$EID",…}}
//	! complete $EID
//
// With -update (the flag this package defines for the test binaries that
// import it: go test -run Scenarios -update), RunScenario rewrites the "<"
// lines from what the server
// actually sent, keeping placeholders where the old lines had them; a group
// that is short keeps what arrived and the scenario goes on, and groups
// never reached keep their old lines. Write a group with as many lines as
// the server will send (any JSON will do) and let update fill them in.

// update is the -update flag of every test binary that imports the
// harness: golden transcripts are rewritten rather than checked. (A test
// package that imports the harness must not define a flag of that name.)
var update = flag.Bool("update", false, "harness: rewrite golden scenario transcripts from what the server sends")

// RunScenarios runs every file matching pattern (e.g. "testdata/*.txtar")
// as a subtest, each against a fresh server from newServer; with -update it
// rewrites them.
func RunScenarios(t *testing.T, pattern string, newServer func(testing.TB) *mcpactors.Server) {
	t.Helper()
	RunScenariosWith(t, pattern, newServer, nil)
}

// RunScenariosWith is RunScenarios with the test's actions.
func RunScenariosWith(t *testing.T, pattern string, newServer func(testing.TB) *mcpactors.Server, acts Actions) {
	t.Helper()
	eachScenario(t, pattern, func(t *testing.T, file string) { RunScenarioWith(t, file, newServer(t), acts) })
}

// eachScenario runs play on every file matching pattern, as a subtest
// named after the file.
func eachScenario(t *testing.T, pattern string, play func(t *testing.T, file string)) {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("harness: no scenario files match %q (%v)", pattern, err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), filepath.Ext(f)), func(t *testing.T) { play(t, f) })
	}
}

// step is one transcript entry: a client message to send, or a group of
// server messages to expect.
type step struct {
	send    string            // client message, when a send step
	headers map[string]string // its HTTP header changes ("= " lines; modern scenarios)
	expect  []string          // expected server messages, when a group
	action  []string          // an action's name and arguments ("! " lines)
	line    int               // first line number, for errors
}

// Actions are what a scenario's "! name arg…" lines do, by name. Each gets
// the servers the scenario runs against (one, or a cluster's nodes in
// order) and the line's arguments, placeholders replaced; an error stops
// the scenario. The harness has two of its own, which a test's of the same
// name replace: "drain [N]" drains server N (default 1: Server.Drain),
// and, in a cluster's modern scenarios, "node N" sends the POSTs after it
// to node N (from 1; the first node until then).
type Actions map[string]func(servers []*mcpactors.Server, args []string) error

// drainAction is the harness's "drain [N]".
func drainAction(servers []*mcpactors.Server, args []string) error {
	i, err := nodeArg(servers, args)
	if err != nil {
		return err
	}
	servers[i].Drain()
	return nil
}

// nodeArg reads an action's optional node number (from 1; default 1) and
// returns its index.
func nodeArg(servers []*mcpactors.Server, args []string) (int, error) {
	if len(args) == 0 {
		return 0, nil
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || n < 1 || n > len(servers) || len(args) > 1 {
		return 0, fmt.Errorf("want a node number from 1 to %d, got %q", len(servers), strings.Join(args, " "))
	}
	return n - 1, nil
}

// actor runs a scenario's actions.
type actor struct {
	servers []*mcpactors.Server
	acts    Actions
}

// run runs the action named by args[0].
func (a *actor) run(c conn, args []string) error {
	name := args[0]
	if fn, ok := a.acts[name]; ok {
		return fn(a.servers, args[1:])
	}
	switch name {
	case "drain":
		return drainAction(a.servers, args[1:])
	case "node":
		if ns, ok := c.(nodeSetter); ok && len(a.servers) > 1 {
			i, err := nodeArg(a.servers, args[1:])
			if err != nil {
				return err
			}
			ns.setNode(i)
			return nil
		}
		return errors.New(`"node" is for a cluster's modern scenarios`)
	}
	return fmt.Errorf("no action %q", name)
}

// nodeSetter is a conn that can send to another node.
type nodeSetter interface{ setNode(int) }

// conn is what a scenario plays against: a session's Client, or a modern
// scenario's HTTP client (modernConn).
type conn interface {
	SendRaw(data []byte) error
	Received() []*Received
	Wait(ctx context.Context, from int, match func(*Received) bool) (*Received, error)
}

// headerSetter is a conn that can change the next message's HTTP headers.
type headerSetter interface{ setHeaders(map[string]string) }

// RunScenario plays one scenario file against srv on a fresh session;
// with -update it rewrites the file.
func RunScenario(t *testing.T, file string, srv *mcpactors.Server) {
	t.Helper()
	RunScenarioWith(t, file, srv, nil)
}

// RunScenarioWith is RunScenario with the test's actions.
func RunScenarioWith(t *testing.T, file string, srv *mcpactors.Server, acts Actions) {
	t.Helper()
	c := New(t, srv).Open()
	if err := runScenario(t, c, file, *update, &actor{servers: []*mcpactors.Server{srv}, acts: acts}); err != nil {
		t.Fatalf("harness: %v", err)
	}
}

// CheckScenario plays one scenario file against srv on a fresh session,
// outside a test, and returns what did not match (nil when all did). The
// session is closed before it returns.
func CheckScenario(ctx context.Context, file string, srv *mcpactors.Server) error {
	c, err := open(ctx, srv, newConfig(nil))
	if err != nil {
		return err
	}
	defer c.Close()
	var r collector
	if err := runScenario(&r, c, file, false, &actor{servers: []*mcpactors.Server{srv}}); err != nil {
		return err
	}
	return errors.Join(r.errs...)
}

// reporter is what a scenario run reports to: a *testing.T, or a
// collector.
type reporter interface {
	Helper()
	Logf(format string, args ...any)
	Errorf(format string, args ...any)
}

// collector gathers what a scenario run reports, outside a test.
type collector struct{ errs []error }

func (*collector) Helper()             {}
func (*collector) Logf(string, ...any) {}
func (c *collector) Errorf(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf(format, args...))
}

// runScenario plays file on c, and with update rewrites it. Mismatches go
// to r; what stops the run is returned.
func runScenario(r reporter, c conn, file string, update bool, a *actor) error {
	r.Helper()
	ar, err := txtar.ParseFile(file)
	if err != nil {
		return fmt.Errorf("reading %s: %w", file, err)
	}
	idx := -1
	for i, f := range ar.Files {
		if f.Name == "transcript" {
			idx = i
		}
	}
	if idx < 0 {
		return fmt.Errorf(`%s has no "transcript" file`, file)
	}
	steps, err := parseTranscript(string(ar.Files[idx].Data))
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	got, err := play(r, c, steps, update, a)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if update {
		ar.Files[idx].Data = []byte(rewrite(string(ar.Files[idx].Data), got))
		if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
			return fmt.Errorf("updating %s: %w", file, err)
		}
	}
	return nil
}

func parseTranscript(text string) ([]step, error) {
	var steps []step
	inGroup := false // the previous line was a "< " line
	var headers map[string]string
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
			inGroup = false
		case strings.HasPrefix(line, "= "):
			name, value, ok := strings.Cut(line[2:], ":")
			if !ok {
				return nil, fmt.Errorf("transcript line %d: a header line is \"= Name: value\"", i+1)
			}
			if headers == nil {
				headers = map[string]string{}
			}
			headers[strings.TrimSpace(name)] = strings.TrimSpace(value)
			inGroup = false
		case strings.HasPrefix(line, "! "):
			args := strings.Fields(line[2:])
			if len(args) == 0 {
				return nil, fmt.Errorf("transcript line %d: an action line is \"! name arg…\"", i+1)
			}
			steps = append(steps, step{action: args, line: i + 1})
			inGroup = false
		case strings.HasPrefix(line, "> "):
			steps = append(steps, step{send: strings.TrimSpace(line[2:]), headers: headers, line: i + 1})
			headers = nil
			inGroup = false
		case strings.HasPrefix(line, "< "):
			if inGroup {
				steps[len(steps)-1].expect = append(steps[len(steps)-1].expect, strings.TrimSpace(line[2:]))
			} else {
				steps = append(steps, step{expect: []string{strings.TrimSpace(line[2:])}, line: i + 1})
			}
			inGroup = true
		default:
			return nil, fmt.Errorf("transcript line %d: must start with \"> \", \"< \", \"= \", \"! \" or \"#\"", i+1)
		}
	}
	return steps, nil
}

// play runs the steps and returns, per expect group (by first line), the
// lines the server actually sent, for update.
func play(t reporter, c conn, steps []step, update bool, a *actor) (map[int][]string, error) {
	t.Helper()
	vars := map[string]any{}
	got := map[int][]string{}
	cursor := 0
	for _, st := range steps {
		if st.action != nil {
			args := make([]string, len(st.action))
			for i, arg := range st.action {
				v, missing := substitute(arg, vars)
				if missing != "" {
					return got, fmt.Errorf("line %d: placeholder $%s is not bound yet", st.line, missing)
				}
				if str, ok := v.(string); ok {
					args[i] = str
				} else {
					args[i] = compact(v)
				}
			}
			if err := a.run(c, args); err != nil {
				return got, fmt.Errorf("line %d: action %s: %w", st.line, args[0], err)
			}
			continue
		}
		if st.expect == nil {
			if _, err := decodeJSON([]byte(st.send)); err != nil {
				return got, fmt.Errorf("line %d: client message is not JSON: %w", st.line, err)
			}
			msg, missing := substituteLine(st.send, vars)
			if missing != "" {
				return got, fmt.Errorf("line %d: placeholder $%s is not bound yet", st.line, missing)
			}
			if st.headers != nil {
				hs, ok := c.(headerSetter)
				if !ok {
					return got, fmt.Errorf("line %d: header lines (\"= \") are for scenarios over HTTP (RunModernScenario)", st.line)
				}
				hs.setHeaders(st.headers)
			}
			if err := c.SendRaw([]byte(msg)); err != nil {
				return got, fmt.Errorf("line %d: sending: %w", st.line, err)
			}
			continue
		}
		n := len(st.expect)
		if _, err := c.Wait(context.Background(), cursor+n-1, func(*Received) bool { return true }); err != nil {
			have := c.Received()[cursor:]
			got[st.line], _ = matchGroup(st.expect, have, vars)
			failOrUpdate(t, update, "line %d: waiting for %d server messages, got %d (%v):\n%s", st.line, n, len(have), err, strings.Join(rawLines(have), "\n"))
			if !update {
				return got, nil
			}
			cursor += len(have)
			continue
		}
		actual := c.Received()[cursor : cursor+n]
		cursor += n
		lines, ok := matchGroup(st.expect, actual, vars)
		got[st.line] = lines
		if !ok {
			failOrUpdate(t, update, "line %d: the server sent:\n%s\nwant:\n%s", st.line, strings.Join(rawLines(actual), "\n"), strings.Join(st.expect, "\n"))
		}
	}
	if extra := c.Received()[cursor:]; len(extra) > 0 {
		got[-1] = rawLines(extra)
		failOrUpdate(t, update, "the server sent more than the transcript expects:\n%s", strings.Join(rawLines(extra), "\n"))
	}
	return got, nil
}

func failOrUpdate(t reporter, update bool, format string, args ...any) {
	t.Helper()
	if update {
		t.Logf("updating: "+format, args...)
		return
	}
	t.Errorf(format, args...)
}

// matchGroup matches expected lines against actual messages in any order.
// It returns the lines to write on update: each expected line's actual
// message, templated with the line's placeholders, in the order of the
// expected lines (so that updating a group that arrives in another order
// changes nothing), then the messages no line stood for, in the order they
// arrived. Expected lines that match nothing are paired, in order, with the
// messages left over, which they template and whose values bind their
// placeholders loosely, so that later lines can still use them.
func matchGroup(expect []string, actual []*Received, vars map[string]any) ([]string, bool) {
	ok := true
	exps := make([]any, len(expect))
	parsed := make([]bool, len(expect))
	for i, line := range expect {
		v, err := decodeJSON([]byte(line))
		exps[i], parsed[i] = v, err == nil
		if err != nil {
			ok = false
		}
	}
	acts := make([]any, len(actual))
	for j, r := range actual {
		if v, err := decodeJSON(r.Raw); err == nil {
			acts[j] = v
		}
	}
	used := make([]bool, len(actual))
	lines := make([]string, len(expect)) // by expected line; "" when it stood for nothing
	if pick := make([]int, len(expect)); ok && assign(exps, acts, 0, used, pick, vars) {
		for i, j := range pick {
			lines[i] = compact(template(exps[i], acts[j]))
		}
	} else {
		// No way to match every line: match what can be, greedily.
		for i, exp := range exps {
			if !parsed[i] {
				continue
			}
			for j, act := range acts {
				if !used[j] && act != nil && matchJSON(exp, act, vars) {
					used[j] = true
					lines[i] = compact(template(exp, act))
					break
				}
			}
		}
	}
	j := 0
	for i, exp := range exps {
		if lines[i] != "" {
			continue
		}
		ok = false
		for j < len(acts) && (used[j] || acts[j] == nil) {
			j++
		}
		if j == len(acts) {
			break
		}
		used[j] = true
		if parsed[i] {
			bindLoose(exp, acts[j], vars)
		}
		lines[i] = compact(template(exp, acts[j]))
	}
	var out []string
	for _, l := range lines {
		if l != "" {
			out = append(out, l)
		}
	}
	for j, r := range actual {
		if !used[j] {
			out = append(out, string(r.Raw))
		}
	}
	return out, ok
}

// assign finds distinct messages for the expected lines from i on, each
// matching its line with one consistent set of bindings, by backtracking
// (groups are small), so that a line like {"p":"$ANY"} cannot take the one
// message a later, stricter line needs. It records the choice in pick and
// used, and commits the bindings to vars, only when it succeeds.
func assign(exps, acts []any, i int, used []bool, pick []int, vars map[string]any) bool {
	if i == len(exps) {
		return true
	}
	for j, act := range acts {
		if used[j] || act == nil {
			continue
		}
		trial := maps.Clone(vars)
		if !matchInto(exps[i], act, trial) {
			continue
		}
		used[j], pick[i] = true, j
		if assign(exps, acts, i+1, used, pick, trial) {
			maps.Copy(vars, trial)
			return true
		}
		used[j] = false
	}
	return false
}

func rawLines(rs []*Received) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = string(r.Raw)
	}
	return out
}

// rewrite replaces each expect group in text with the lines got holds for
// it (by the group's first line number), keeps the groups got has nothing
// for (never played), and appends unexpected extras.
func rewrite(text string, got map[int][]string) string {
	lines := strings.Split(text, "\n")
	var out []string
	inGroup, keep := false, false
	for i, line := range lines {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "< ") {
			if !inGroup {
				inGroup = true
				g, played := got[i+1]
				keep = !played
				for _, l := range g {
					out = append(out, "< "+l)
				}
			}
			if keep {
				out = append(out, line)
			}
			continue
		}
		inGroup = false
		out = append(out, line)
	}
	if extra := got[-1]; len(extra) > 0 {
		for len(out) > 0 && out[len(out)-1] == "" {
			out = out[:len(out)-1]
		}
		for _, g := range extra {
			out = append(out, "< "+g)
		}
		out = append(out, "")
	}
	return strings.Join(out, "\n")
}
