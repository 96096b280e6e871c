package faults_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

// binDir holds the server binary for the whole test binary; TestMain
// removes it.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcp-actors-faults-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "faults:", err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	if err := os.RemoveAll(dir); err != nil {
		fmt.Fprintln(os.Stderr, "faults:", err)
	}
	// goleak.VerifyTestMain would exit before the removal above.
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "faults: leaked goroutines:", err)
			code = 1
		}
	}
	os.Exit(code)
}

var build struct {
	once sync.Once
	path string
	err  error
}

// serverBinary builds ./cmd/mcp-actors once per test binary (with -race when
// the tests run with -race) and returns its path.
func serverBinary(t *testing.T) string {
	t.Helper()
	build.once.Do(func() {
		build.path = filepath.Join(binDir, "mcp-actors")
		args := []string{"build", "-o", build.path}
		if raceEnabled {
			args = append(args, "-race")
		}
		args = append(args, "github.com/mcp-actors/mcp-actors/cmd/mcp-actors")
		// go test puts its own go first on PATH.
		out, err := exec.Command("go", args...).CombinedOutput()
		if err != nil {
			build.err = fmt.Errorf("go %v: %w\n%s", args, err, out)
		}
	})
	if build.err != nil {
		t.Fatal(build.err)
	}
	return build.path
}

// serverEnv is the environment of a server process: under -race, one
// that does not hold the exit for a second.
func serverEnv() []string {
	if !raceEnabled {
		return nil
	}
	return append(os.Environ(), "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
}

// pendingEnv un-skips the tests that fail on today's cluster.
const pendingEnv = "MCP_ACTORS_FAULTS_PENDING"

// skipUntilStreamIdentity skips a test that fails until stream IDs are
// unique across restarts (issue 19, point 2) unless
// MCP_ACTORS_FAULTS_PENDING=1.
func skipUntilStreamIdentity(t *testing.T) {
	t.Helper()
	if os.Getenv(pendingEnv) != "1" {
		t.Skip("until stream IDs are unique across restarts: issue 19")
	}
}

// skipUntilEveryRequestEnds skips a test that fails until a routed
// request whose final frame is lost between nodes still ends (issue 19,
// point 5) unless MCP_ACTORS_FAULTS_PENDING=1.
func skipUntilEveryRequestEnds(t *testing.T) {
	t.Helper()
	if os.Getenv(pendingEnv) != "1" {
		t.Skip("until a routed request whose final frame is lost between nodes still ends: " +
			"today its POST waits as long as the owner lives (issue 19, point 5)")
	}
}
