// Package serverbin builds the mcp-actors binary once per test binary, for
// the tests that run it as a process (tests/interop, tests/faults): with
// -race when the tests run with -race, into a temporary directory that
// Main removes when the tests end.
package serverbin

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

// dir holds the binary for the whole test binary; Main removes it.
var dir string

// builds holds one build per package path: each is made once.
var builds sync.Map // package path → *binary

// binary is one package's build.
type binary struct {
	once sync.Once
	path string
	err  error
}

// Main runs m, the tests of package name, removes the binary, checks that
// no goroutine leaked, and exits with the tests' status: call it from
// TestMain.
func Main(m *testing.M, name string) {
	d, err := os.MkdirTemp("", "mcp-actors-"+name+"-")
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
	}
	dir = d
	// Goroutines that run before any test (a library's, started when it
	// is loaded, such as panjf2000/ants's default pool) are not leaks.
	before := goleak.IgnoreCurrent()
	code := m.Run()
	if err := os.RemoveAll(d); err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
	}
	// goleak.VerifyTestMain would exit before the removal above.
	if code == 0 {
		if err := goleak.Find(before); err != nil {
			fmt.Fprintln(os.Stderr, name+": leaked goroutines:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// Path builds ./cmd/mcp-actors once per test binary (with -race when the
// tests run with -race) and returns its path.
func Path(t testing.TB) string {
	t.Helper()
	return Build(t, "mcp-actors", "github.com/mcp-actors/mcp-actors/cmd/mcp-actors", Race)
}

// Build builds the main package pkg (of this module or one its go.mod
// pins) as name, with -race when race is set, once per test binary, and
// returns its path.
func Build(t testing.TB, name, pkg string, race bool) string {
	t.Helper()
	v, _ := builds.LoadOrStore(pkg, &binary{})
	b := v.(*binary)
	b.once.Do(func() {
		b.path = filepath.Join(dir, name)
		args := []string{"build", "-o", b.path}
		if race {
			args = append(args, "-race")
		}
		args = append(args, pkg)
		// go test puts its own go first on PATH.
		out, err := exec.Command("go", args...).CombinedOutput()
		if err != nil {
			b.err = fmt.Errorf("go %v: %w\n%s", args, err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// Env is the environment of a server process. Under -race, the race
// runtime's wait at exit is turned off; a race it found still makes the
// exit status 66.
func Env() []string {
	if !Race {
		return nil
	}
	return append(os.Environ(), "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
}
