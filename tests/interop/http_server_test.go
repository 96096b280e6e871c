package interop_test

import (
	"bytes"
	"context"
	"os/exec"
	"regexp"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/internal/serverbin"
)

const (
	// listenTimeout bounds the wait for a server to log its URL.
	listenTimeout = 20 * time.Second
	// stopTimeout is how long a server may take to exit after SIGTERM.
	stopTimeout = 15 * time.Second
)

// httpServer is one `mcp-actors serve` process on a loopback port.
type httpServer struct {
	t      *testing.T
	url    string // the MCP endpoint, from the server's log
	cmd    *exec.Cmd
	stderr *stderrLog
	exited chan struct{} // closed once cmd.Wait returned
	killed atomic.Bool   // killed on purpose: its exit is expected
}

// kill ends the server at once (SIGKILL), as a crash would.
func (s *httpServer) kill() {
	s.killed.Store(true)
	_ = s.cmd.Process.Kill()
	<-s.exited
}

// startServer runs `mcp-actors serve --listen 127.0.0.1:0 --reference-tools
// --keepalive 1s` (and extra arguments) and waits until it logs its URL. At the end of t it gets
// SIGTERM and must exit with status 0 within stopTimeout.
func startServer(t *testing.T, extra ...string) *httpServer {
	t.Helper()
	return startBinary(t, serverbin.Path(t), extra...)
}

// startBinary is startServer with another build of the binary (an older
// release's: serverbin.AtCommit).
func startBinary(t *testing.T, bin string, extra ...string) *httpServer {
	t.Helper()
	s := &httpServer{
		t: t,
		cmd: exec.Command(bin, append([]string{"serve",
			"--listen", "127.0.0.1:0", "--reference-tools", "--keepalive", "1s", "--data-dir", t.TempDir()}, extra...)...),
		stderr: newStderrLog(),
		exited: make(chan struct{}),
	}
	s.cmd.Env = serverbin.Env()
	s.cmd.Stderr = s.stderr
	require.NoError(t, s.cmd.Start(), "starting the server")
	go func() {
		_ = s.cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(s.stop)

	ctx, cancel := context.WithTimeout(t.Context(), listenTimeout)
	defer cancel()
	select {
	case s.url = <-s.stderr.url:
	case <-s.exited:
		require.FailNow(t, "the server exited before listening", "%s\nstderr:\n%s", s.cmd.ProcessState, s.stderr)
	case <-ctx.Done():
		require.FailNow(t, "the server did not log its URL", "%v\nstderr:\n%s", ctx.Err(), s.stderr)
	}
	return s
}

// stop sends SIGTERM and checks that the server exits with status 0
// within stopTimeout.
func (s *httpServer) stop() {
	t := s.t
	defer func() {
		if t.Failed() {
			t.Logf("server stderr:\n%s", s.stderr)
		}
	}()
	select {
	case <-s.exited:
		if !s.killed.Load() {
			assert.Fail(t, "the server exited before the end of the test", "%s", s.cmd.ProcessState)
		}
		return
	default:
	}
	require.NoError(t, s.cmd.Process.Signal(syscall.SIGTERM), "sending SIGTERM")
	timer := time.NewTimer(stopTimeout)
	defer timer.Stop()
	select {
	case <-s.exited:
		assert.Equal(t, 0, s.cmd.ProcessState.ExitCode(), "exit status after SIGTERM (%s)", s.cmd.ProcessState)
	case <-timer.C:
		_ = s.cmd.Process.Kill()
		<-s.exited
		assert.Fail(t, "the server did not exit within 15 s of SIGTERM; killed it")
	}
}

// urlPattern finds the endpoint in the server's "serving" log line.
var urlPattern = regexp.MustCompile(`url=(http://\S+)`)

// stderrLog keeps a server's stderr and passes on the URL of the first
// complete line that names one.
type stderrLog struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	lines int         // complete lines scanned for the URL
	found bool        // the URL was passed on
	url   chan string // receives the URL once
}

func newStderrLog() *stderrLog { return &stderrLog{url: make(chan string, 1)} }

func (l *stderrLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, _ := l.buf.Write(p)
	if l.found {
		return n, nil
	}
	lines := bytes.Split(l.buf.Bytes(), []byte("\n"))
	complete := lines[:len(lines)-1] // the last one is unterminated
	for _, line := range complete[l.lines:] {
		if m := urlPattern.FindSubmatch(line); m != nil {
			l.found = true
			l.url <- string(m[1])
			break
		}
	}
	l.lines = len(complete)
	return n, nil
}

func (l *stderrLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
