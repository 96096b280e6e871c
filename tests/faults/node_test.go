package faults_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
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
	// readyTimeout bounds the wait for a node's /readyz to answer 200: a
	// new cluster's JetStream elects a leader before the buckets exist.
	readyTimeout = 90 * time.Second
	// probeTimeout bounds one request of the harness itself (/readyz,
	// /metrics).
	probeTimeout = 5 * time.Second
)

// node is one `mcp-actors serve` process on loopback ports (or in a
// network namespace of its own: netcluster_test.go), started with the same
// arguments every time (restart keeps its node ID, data dir and route
// address; only its HTTP port changes).
type node struct {
	t    *testing.T
	id   string   // its --node-id
	args []string // its serve arguments after the common ones (a --listen among them wins)
	wrap []string // the command that runs the binary, before its path (`ip netns exec <ns>`), or none

	mu     sync.Mutex // guards the fields below, which restart replaces
	url    string     // the MCP endpoint, from the server's log
	cmd    *exec.Cmd
	stderr *stderrLog
	exited chan struct{} // closed once cmd.Wait returned
	killed atomic.Bool   // killed on purpose: its exit is expected
	paused atomic.Bool   // stopped with SIGSTOP
}

// startNode runs `mcp-actors serve --listen 127.0.0.1:0 --reference-tools
// --keepalive 1s` with args and waits until it logs its URL. At the end of
// t it gets SIGTERM (SIGCONT first if paused) and must exit with status 0
// within stopTimeout.
func startNode(t *testing.T, id string, args ...string) *node {
	t.Helper()
	n := &node{t: t, id: id, args: args}
	n.start()
	t.Cleanup(n.stop)
	return n
}

// start starts the process and waits for its URL.
func (n *node) start() {
	t := n.t
	t.Helper()
	argv := append(slices.Clone(n.wrap), serverbin.Path(t), "serve",
		"--listen", "127.0.0.1:0", "--reference-tools", "--keepalive", "1s")
	cmd := exec.Command(argv[0], append(argv[1:], n.args...)...)
	cmd.Env = serverbin.Env()
	stderr := newStderrLog()
	cmd.Stderr = stderr
	exited := make(chan struct{})
	require.NoError(t, cmd.Start(), "starting %s", n.id)
	go func() { // owned by the process: it ends when the process does
		_ = cmd.Wait()
		close(exited)
	}()
	n.mu.Lock()
	n.cmd, n.stderr, n.exited, n.url = cmd, stderr, exited, ""
	n.mu.Unlock()
	n.killed.Store(false)
	n.paused.Store(false)

	ctx, cancel := context.WithTimeout(t.Context(), listenTimeout)
	defer cancel()
	select {
	case u := <-stderr.url:
		n.mu.Lock()
		n.url = u
		n.mu.Unlock()
	case <-exited:
		require.FailNow(t, "the server exited before listening", "%s: %s\nstderr:\n%s", n.id, cmd.ProcessState, stderr)
	case <-ctx.Done():
		require.FailNow(t, "the server did not log its URL", "%s: %v\nstderr:\n%s", n.id, ctx.Err(), stderr)
	}
}

// endpoint is the node's MCP URL.
func (n *node) endpoint() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.url
}

// base is http://host:port of the node's HTTP listener.
func (n *node) base() string {
	u, _ := url.Parse(n.endpoint())
	return "http://" + u.Host
}

// process returns the running process's command and exit channel.
func (n *node) process() (*exec.Cmd, chan struct{}) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.cmd, n.exited
}

// kill ends the server at once (SIGKILL), as a crash would.
func (n *node) kill() {
	cmd, exited := n.process()
	n.killed.Store(true)
	_ = cmd.Process.Kill()
	<-exited
	n.paused.Store(false)
}

// quit ends a running node with SIGQUIT (SIGCONT first if paused): a Go
// program prints every goroutine's stack to its stderr and exits. For a
// failure's post-mortem.
func (n *node) quit() {
	cmd, exited := n.process()
	select {
	case <-exited:
		return
	default:
	}
	n.killed.Store(true)
	if n.paused.Load() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
	}
	_ = cmd.Process.Signal(syscall.SIGQUIT)
	timer := time.NewTimer(stopTimeout)
	defer timer.Stop()
	select {
	case <-exited:
	case <-timer.C:
		_ = cmd.Process.Kill()
		<-exited
	}
	n.paused.Store(false)
}

// restart starts a killed node again with the same arguments.
func (n *node) restart() {
	n.t.Helper()
	_, exited := n.process()
	select {
	case <-exited:
	default:
		require.FailNow(n.t, "restarting a running node", "%s", n.id)
	}
	n.start()
}

// pause stops the process (SIGSTOP): its sockets stay open, nothing
// answers, as in a GC stall or a frozen VM.
func (n *node) pause() {
	n.t.Helper()
	cmd, _ := n.process()
	require.NoError(n.t, cmd.Process.Signal(syscall.SIGSTOP), "pausing %s", n.id)
	n.paused.Store(true)
}

// resume continues a paused process (SIGCONT).
func (n *node) resume() {
	n.t.Helper()
	cmd, _ := n.process()
	require.NoError(n.t, cmd.Process.Signal(syscall.SIGCONT), "resuming %s", n.id)
	n.paused.Store(false)
}

// signalStop sends SIGTERM (after SIGCONT if paused) to a running node
// and reports whether it was running.
func (n *node) signalStop() bool {
	cmd, exited := n.process()
	select {
	case <-exited:
		return false
	default:
	}
	if n.paused.Load() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		n.paused.Store(false)
	}
	assert.NoError(n.t, cmd.Process.Signal(syscall.SIGTERM), "sending SIGTERM to %s", n.id)
	return true
}

// awaitExit waits until deadline for a node sent SIGTERM to exit with
// status 0; past it, the node is killed and the test fails.
func (n *node) awaitExit(deadline time.Time) {
	t := n.t
	cmd, exited := n.process()
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case <-exited:
		if code := cmd.ProcessState.ExitCode(); code != 0 {
			log := n.stderrText()
			assert.Fail(t, "a node's exit status after SIGTERM is not 0", "%s: %s; the end of its stderr:\n%s", n.id, cmd.ProcessState, log[max(0, len(log)-32<<10):])
		}
	case <-timer.C:
		_ = cmd.Process.Kill()
		<-exited
		assert.Fail(t, "a node did not exit in time after SIGTERM; killed it", "%s", n.id)
	}
	n.killed.Store(true) // its own cleanup has nothing left to do
}

// stop is the node's cleanup: SIGTERM, and exit status 0 within
// stopTimeout. A node that exited unasked fails the test.
func (n *node) stop() {
	t := n.t
	defer func() {
		if t.Failed() {
			t.Logf("%s stderr:\n%s", n.id, n.stderrText())
		}
	}()
	if n.killed.Load() {
		return
	}
	if !n.signalStop() {
		cmd, _ := n.process()
		assert.Fail(t, "the server exited before the end of the test", "%s: %s", n.id, cmd.ProcessState)
		return
	}
	n.awaitExit(time.Now().Add(stopTimeout))
}

func (n *node) stderrText() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.stderr.String()
}

// get GETs path on the node's HTTP listener, bounded by probeTimeout, and
// returns the status and body.
func (n *node) get(ctx context.Context, path string) (int, string, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, n.base()+path, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, err = b.ReadFrom(resp.Body)
	return resp.StatusCode, strings.TrimSpace(b.String()), err
}

// readyz returns the node's /readyz status and body (0 and the error when
// it does not answer).
func (n *node) readyz(ctx context.Context) (int, string) {
	code, body, err := n.get(ctx, "/readyz")
	if err != nil {
		return 0, err.Error()
	}
	return code, body
}

// waitReady polls the node's /readyz (real I/O) until it answers 200,
// for readyTimeout at most.
func (n *node) waitReady() {
	n.t.Helper()
	ctx, cancel := context.WithTimeout(n.t.Context(), readyTimeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	last := "none"
	for {
		code, body := n.readyz(ctx)
		if code == http.StatusOK {
			return
		}
		if code != 0 {
			last = fmt.Sprintf("%d %s", code, body)
		}
		select {
		case <-ctx.Done():
			n.quit() // its goroutines, in its stderr
			require.FailNow(n.t, "a node never became ready", "%s: last answer of /readyz: %s\nstderr (ending with its goroutines):\n%s", n.id, last, n)
		case <-tick.C:
		}
	}
}

// String is the node's stderr, for failure messages.
func (n *node) String() string { return n.stderrText() }

// metric reads the node's /metrics and returns the value of series (a
// name with its labels as exposed), or an error.
func (n *node) metric(ctx context.Context, series string) (float64, error) {
	code, body, err := n.get(ctx, "/metrics")
	if err != nil {
		return 0, err
	}
	if code != http.StatusOK {
		return 0, fmt.Errorf("/metrics: %d", code)
	}
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if ok && name == series {
			return strconv.ParseFloat(value, 64)
		}
	}
	return 0, fmt.Errorf("no series %s on %s", series, n.id)
}

// takeoversMetric counts the sessions a node took over.
const takeoversMetric = "mcp_cluster_takeovers_total"

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
