package harness_test

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/tools/txtar"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/harness"
)

func newScenarioServer(tb testing.TB) *mcpactors.Server { return newTestServer(tb) }

func TestScenarios(t *testing.T) {
	harness.RunScenarios(t, "testdata/*.txtar", newScenarioServer)
}

// transcript returns the transcript file of a scenario.
func transcript(t *testing.T, file string) string {
	t.Helper()
	ar, err := txtar.ParseFile(file)
	require.NoError(t, err)
	for _, f := range ar.Files {
		if f.Name == "transcript" {
			return string(f.Data)
		}
	}
	t.Fatalf("%s has no transcript", file)
	return ""
}

func TestUpdate(t *testing.T) {
	orig, err := os.ReadFile("testdata/update/stale.txtar")
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "stale.txtar")
	require.NoError(t, os.WriteFile(file, orig, 0o644))

	t.Run("update", func(t *testing.T) {
		withUpdate(t, func() { harness.RunScenario(t, file, newTestServer(t)) })
	})
	updated, err := os.ReadFile(file)
	require.NoError(t, err)
	text := transcript(t, file)
	t.Logf("updated transcript:\n%s", text)

	// The description and the client's lines are untouched.
	assert.True(t, strings.HasPrefix(string(updated), "A scenario whose expectations are out of date"))
	origLines := strings.Split(transcript(t, "testdata/update/stale.txtar"), "\n")
	var want, got []string
	for _, l := range origLines {
		if !strings.HasPrefix(l, "< ") {
			want = append(want, l)
		}
	}
	for _, l := range strings.Split(text, "\n") {
		if !strings.HasPrefix(l, "< ") {
			got = append(got, l)
		}
	}
	assert.Equal(t, want, got, "only server lines change")

	// Placeholders are kept where the old lines had them; stale values are
	// gone.
	assert.NotContains(t, text, "stale")
	assert.Contains(t, text, `< {"id":1,"jsonrpc":"2.0","result":{"capabilities":"$ANY","protocolVersion":"2025-11-25","serverInfo":"$ANY"}}`)
	assert.Contains(t, text, `< {"id":2,"jsonrpc":"2.0","result":{}}`)
	assert.Contains(t, text, `< {"id":"$S","jsonrpc":"2.0","method":"sampling/createMessage","params":{"maxTokens":10,"messages":[{"content":{"text":"$$1?","type":"text"},"role":"user"}]}}`,
		"the new line keeps $S and escapes the literal dollar")
	assert.Contains(t, text, `> {"jsonrpc":"2.0","id":"$S","result"`)
	assert.Contains(t, text, `< {"id":3,"jsonrpc":"2.0","result":{"content":[{"text":"m: one","type":"text"}]}}`)
	assert.Contains(t, text, `< {"id":4,"jsonrpc":"2.0","result":{"content":[{"text":"added","type":"text"}]}}`+"\n"+
		`< {"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{}}`,
		"a group keeps the order of its lines, whatever order the messages came in")

	t.Run("the updated file passes", func(t *testing.T) {
		harness.RunScenario(t, file, newTestServer(t))
	})

	t.Run("updating a passing file changes nothing", func(t *testing.T) {
		withUpdate(t, func() { harness.RunScenario(t, file, newTestServer(t)) })
		again, err := os.ReadFile(file)
		require.NoError(t, err)
		assert.Equal(t, string(updated), string(again))
	})
}

// The failing scenarios run in a child process (a scenario's failure fails
// the test that runs it): TestFailingScenarioHelper plays the files the
// parent names.

const failingEnv = "HARNESS_FAILING_SCENARIO"

func TestFailingScenarioHelper(t *testing.T) {
	pattern := os.Getenv(failingEnv)
	if pattern == "" {
		t.Skip("run by TestScenarioFailures")
	}
	harness.RunScenarios(t, pattern, newScenarioServer)
}

func TestScenarioFailures(t *testing.T) {
	tests := []struct {
		file string
		want string
	}{
		{"wrong_result.txtar", `line 5: the server sent:`},
		{"wrong_id.txtar", `"id":2`},
		{"rebound.txtar", `line 7: the server sent:`},
		{"unbound.txtar", `line 4: placeholder $X is not bound yet`},
		{"no_transcript.txtar", `has no "transcript" file`},
		{"bad_line.txtar", `transcript line 4: must start with`},
		{"not_json.txtar", `line 1: client message is not JSON`},
		{"no_such_file_*.txtar", `no scenario files match`},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestFailingScenarioHelper$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), failingEnv+"="+filepath.Join("testdata", "failing", tt.file))
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit, "the scenario must fail:\n%s", out)
			assert.Contains(t, string(out), "--- FAIL: TestFailingScenarioHelper")
			assert.Contains(t, string(out), tt.want)
		})
	}
}

// withUpdate runs fn as under go test -update: the harness's flag.
func withUpdate(t *testing.T, fn func()) {
	t.Helper()
	require.NoError(t, flag.Set("update", "true"))
	defer func() { require.NoError(t, flag.Set("update", "false")) }()
	fn()
}
