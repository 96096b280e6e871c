package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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
// Each run of consecutive "<" lines is one group: the server must send
// exactly those messages next, in any order (messages on different streams
// may interleave). A "> " line is sent only after every earlier group has
// arrived. Placeholders (see match.go) stand for volatile values: "$ANY"
// matches anything, "$NAME" binds a value (for example the ID of a
// server-to-client request) that later "> " lines can use.
//
//	> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_sampling","arguments":{"prompt":"hi"}}}
//	< {"jsonrpc":"2.0","id":"$S","method":"sampling/createMessage","params":{…}}
//	> {"jsonrpc":"2.0","id":"$S","result":{"role":"assistant","content":{"type":"text","text":"hello"},"model":"m"}}
//	< {"jsonrpc":"2.0","id":2,"result":{…}}
//
// With update set, RunScenario rewrites the "<" lines from what the server
// actually sent, keeping placeholders where the old lines had them.

// RunScenarios runs every file matching pattern (e.g. "testdata/*.txtar")
// as a subtest, each against a fresh server from newServer.
func RunScenarios(t *testing.T, pattern string, newServer func(testing.TB) *mcpactors.Server, update bool) {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("harness: no scenario files match %q (%v)", pattern, err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), filepath.Ext(f)), func(t *testing.T) {
			RunScenario(t, f, newServer(t), update)
		})
	}
}

// step is one transcript entry: a client message to send, or a group of
// server messages to expect.
type step struct {
	send   string   // client message, when a send step
	expect []string // expected server messages, when a group
	line   int      // first line number, for errors
}

// RunScenario plays one scenario file against srv on a fresh session.
func RunScenario(t *testing.T, file string, srv *mcpactors.Server, update bool) {
	t.Helper()
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatalf("harness: reading %s: %v", file, err)
	}
	idx := -1
	for i, f := range ar.Files {
		if f.Name == "transcript" {
			idx = i
		}
	}
	if idx < 0 {
		t.Fatalf(`harness: %s has no "transcript" file`, file)
	}
	steps, err := parseTranscript(string(ar.Files[idx].Data))
	if err != nil {
		t.Fatalf("harness: %s: %v", file, err)
	}
	c := New(t, srv).Open()
	got := play(t, c, steps, update)
	if update {
		ar.Files[idx].Data = []byte(rewrite(string(ar.Files[idx].Data), got))
		if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
			t.Fatalf("harness: updating %s: %v", file, err)
		}
	}
}

func parseTranscript(text string) ([]step, error) {
	var steps []step
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "> "):
			steps = append(steps, step{send: strings.TrimSpace(line[2:]), line: i + 1})
		case strings.HasPrefix(line, "< "):
			if n := len(steps); n > 0 && steps[n-1].expect != nil {
				steps[n-1].expect = append(steps[n-1].expect, strings.TrimSpace(line[2:]))
			} else {
				steps = append(steps, step{expect: []string{strings.TrimSpace(line[2:])}, line: i + 1})
			}
		default:
			return nil, fmt.Errorf("transcript line %d: must start with \"> \", \"< \" or \"#\"", i+1)
		}
	}
	return steps, nil
}

// play runs the steps and returns, per expect group (by first line), the
// lines the server actually sent, for update.
func play(t *testing.T, c *Client, steps []step, update bool) map[int][]string {
	t.Helper()
	vars := map[string]any{}
	got := map[int][]string{}
	cursor := 0
	for _, st := range steps {
		if st.expect == nil {
			v, err := decodeJSON([]byte(st.send))
			if err != nil {
				t.Fatalf("line %d: client message is not JSON: %v", st.line, err)
			}
			v, missing := substitute(v, vars)
			if missing != "" {
				t.Fatalf("line %d: placeholder $%s is not bound yet", st.line, missing)
			}
			if err := c.SendRaw([]byte(compact(v))); err != nil {
				t.Fatalf("line %d: sending: %v", st.line, err)
			}
			continue
		}
		n := len(st.expect)
		if _, err := c.Wait(context.Background(), cursor+n-1, func(*Received) bool { return true }); err != nil {
			have := c.Received()[cursor:]
			got[st.line] = rawLines(have)
			failOrUpdate(t, update, "line %d: waiting for %d server messages, got %d (%v):\n%s", st.line, n, len(have), err, strings.Join(rawLines(have), "\n"))
			return got
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
	return got
}

func failOrUpdate(t *testing.T, update bool, format string, args ...any) {
	t.Helper()
	if update {
		t.Logf("updating: "+format, args...)
		return
	}
	t.Errorf(format, args...)
}

// matchGroup matches expected lines against actual messages in any order.
// It returns the lines to write on update: actual messages, templated with
// the placeholders of the expected line each matched (or stood against).
func matchGroup(expect []string, actual []*Received, vars map[string]any) ([]string, bool) {
	used := make([]bool, len(actual))
	out := make([]string, len(actual))
	ok := true
	for i, line := range expect {
		exp, err := decodeJSON([]byte(line))
		if err != nil {
			ok = false
			continue
		}
		found := -1
		for j, r := range actual {
			if used[j] {
				continue
			}
			act, err := decodeJSON(r.Raw)
			if err == nil && matchJSON(exp, act, vars) {
				found = j
				break
			}
		}
		if found < 0 {
			ok = false
			if i < len(actual) && !used[i] {
				if act, err := decodeJSON(actual[i].Raw); err == nil {
					out[i] = compact(template(exp, act))
				}
			}
			continue
		}
		used[found] = true
		act, _ := decodeJSON(actual[found].Raw)
		out[found] = compact(template(exp, act))
	}
	for j, r := range actual {
		if out[j] == "" {
			out[j] = string(r.Raw)
		}
	}
	return out, ok
}

func rawLines(rs []*Received) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = string(r.Raw)
	}
	return out
}

// rewrite replaces each expect group in text with the lines got holds for
// it (by the group's first line number), and appends unexpected extras.
func rewrite(text string, got map[int][]string) string {
	lines := strings.Split(text, "\n")
	var out []string
	inGroup := false
	for i, line := range lines {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "< ") {
			if !inGroup {
				inGroup = true
				for _, g := range got[i+1] {
					out = append(out, "< "+g)
				}
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
