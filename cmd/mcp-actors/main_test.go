package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// exitTimeout bounds how long the binary may take to exit once told to.
const exitTimeout = 10 * time.Second

// binary builds the command once per test run and returns its path.
var binary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "mcp-actors-test-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "mcp-actors")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

func TestMain(m *testing.M) {
	code := m.Run()
	if bin, err := binary(); err == nil {
		os.RemoveAll(filepath.Dir(bin))
	}
	os.Exit(code)
}

// proc is the binary running as a subprocess, spoken to over pipes.
type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  *bufio.Scanner
	stdout []string // every line read from stdout
	stderr *syncBuffer
	done   chan error
}

// syncBuffer is a bytes.Buffer that the test may read while the process
// writes to it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// start runs the binary with args and env (added to a clean MCP_ACTORS_*
// environment).
func start(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	return startWrapped(t, env, nil, args...)
}

// startWrapped runs the binary with args under wrapper (a command line
// that runs its last argument with the rest: sh -c '…; exec "$@"' sh, say),
// as start does.
func startWrapped(t *testing.T, env, wrapper []string, args ...string) *proc {
	t.Helper()
	bin, err := binary()
	require.NoError(t, err)
	argv := append(append(slices.Clone(wrapper), bin), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MCP_ACTORS_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	p := &proc{t: t, cmd: cmd, stderr: &syncBuffer{}, done: make(chan error, 1)}
	cmd.Stderr = p.stderr
	p.stdin, err = cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	p.lines = bufio.NewScanner(out)
	p.lines.Buffer(make([]byte, 1<<20), 1<<20)
	require.NoError(t, cmd.Start())
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// send writes one message line.
func (p *proc) send(msg string) {
	p.t.Helper()
	_, err := io.WriteString(p.stdin, msg+"\n")
	require.NoError(p.t, err)
}

// next reads the next stdout line and decodes it as a JSON-RPC message.
func (p *proc) next() map[string]jsontext.Value {
	p.t.Helper()
	line := make(chan bool, 1)
	go func() { line <- p.lines.Scan() }()
	select {
	case ok := <-line:
		require.True(p.t, ok, "stdout ended early: %v; stderr:\n%s", p.lines.Err(), p.stderr)
	case <-time.After(exitTimeout):
		p.t.Fatalf("no output within %v; stderr:\n%s", exitTimeout, p.stderr)
	}
	text := p.lines.Text()
	p.stdout = append(p.stdout, text)
	var m map[string]jsontext.Value
	require.NoError(p.t, json.Unmarshal([]byte(text), &m), "stdout line %q", text)
	assert.JSONEq(p.t, `"2.0"`, string(m["jsonrpc"]))
	return m
}

// wait waits for the process to exit and returns its exit code; it drains
// stdout first, checking that every remaining line is a JSON message.
func (p *proc) wait() int {
	p.t.Helper()
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for p.lines.Scan() {
			p.stdout = append(p.stdout, p.lines.Text())
		}
	}()
	select {
	case err := <-p.done:
		<-drained
		p.done <- err // for the cleanup
		for _, l := range p.stdout {
			assert.True(p.t, jsontext.Value([]byte(l)).IsValid() && strings.HasPrefix(l, "{"), "stdout line %q is not a JSON message", l)
		}
		if err == nil {
			return 0
		}
		var exit *exec.ExitError
		require.ErrorAs(p.t, err, &exit)
		return exit.ExitCode()
	case <-time.After(exitTimeout):
		p.t.Fatalf("the process did not exit within %v; stderr:\n%s", exitTimeout, p.stderr)
		return -1
	}
}

// initialize does the handshake and returns the initialize result.
func (p *proc) initialize() map[string]jsontext.Value {
	p.t.Helper()
	p.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"cli-test","version":"1.0.0"}}}`)
	res := p.next()
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return res
}

func toolNames(t *testing.T, resp map[string]jsontext.Value) []string {
	t.Helper()
	var res struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(resp["result"], &res))
	names := []string{}
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

func TestStdioReferenceTools(t *testing.T) {
	p := start(t, nil, "stdio", "--reference-tools")

	init := p.initialize()
	assert.JSONEq(t, `1`, string(init["id"]))
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
		ServerInfo      struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"serverInfo"`
	}
	require.NoError(t, json.Unmarshal(init["result"], &res))
	assert.Equal(t, "2025-11-25", res.ProtocolVersion)
	assert.Equal(t, "mcp-actors", res.ServerInfo.Name)
	assert.Equal(t, "dev", res.ServerInfo.Version)

	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	list := p.next()
	assert.JSONEq(t, `2`, string(list["id"]))
	names := toolNames(t, list)
	assert.Len(t, names, referenceTools)
	assert.Contains(t, names, "test_echo")

	p.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"test_echo","arguments":{"text":"hello from the test"}}}`)
	echo := p.next()
	assert.JSONEq(t, `3`, string(echo["id"]))
	assert.JSONEq(t, `{"content":[{"type":"text","text":"hello from the test"}]}`, string(echo["result"]))

	require.NoError(t, p.stdin.Close())
	assert.Equal(t, 0, p.wait(), "stderr:\n%s", p.stderr)
	assert.Len(t, p.stdout, 3, "nothing but the three responses on stdout")
	assert.NotContains(t, p.stderr.String(), `"jsonrpc"`, "no MCP on stderr")
	assert.Contains(t, p.stderr.String(), "level=INFO")
}

func TestStdioEmptyCatalog(t *testing.T) {
	p := start(t, nil, "stdio")
	p.initialize()
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	assert.Empty(t, toolNames(t, p.next()))
	require.NoError(t, p.stdin.Close())
	assert.Equal(t, 0, p.wait())
}

// referenceTools is how many tools --reference-tools lists: the reference
// set's 22 and the 14 fixtures of the 2026-07-28 conformance suite.
const referenceTools = 36

func TestStdioEnvironment(t *testing.T) {
	p := start(t, []string{"MCP_ACTORS_REFERENCE_TOOLS=true", "MCP_ACTORS_LOG_FORMAT=json", "MCP_ACTORS_LOG_LEVEL=debug"}, "stdio")
	p.initialize()
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	assert.Len(t, toolNames(t, p.next()), referenceTools)
	require.NoError(t, p.stdin.Close())
	require.Equal(t, 0, p.wait())

	logs := strings.Split(strings.TrimSpace(p.stderr.String()), "\n")
	require.NotEmpty(t, logs)
	for _, l := range logs {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &rec), "stderr line %q", l)
		assert.Contains(t, rec, "level")
		assert.NotContains(t, rec, "jsonrpc")
	}
}

func TestStdioSignal(t *testing.T) {
	p := start(t, nil, "stdio", "--reference-tools")
	p.initialize()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, 0, p.wait(), "stderr:\n%s", p.stderr)
	assert.Contains(t, p.stderr.String(), "stopped by a signal")
}

func TestVersion(t *testing.T) {
	bin, err := binary()
	require.NoError(t, err)
	out, err := exec.Command(bin, "--version").Output()
	require.NoError(t, err)
	// The go command stamps a checkout's commit as a pseudo-version; a build
	// without version control information says dev.
	assert.Regexp(t, `^mcp-actors (dev|v\d+\.\d+\.\d+\S*)\n$`, string(out))
}

// TestVersionCommand: `mcp-actors version` names the release and the
// formats this release writes and reads.
func TestVersionCommand(t *testing.T) {
	bin, err := binary()
	require.NoError(t, err)
	out, err := exec.Command(bin, "version").Output()
	require.NoError(t, err)
	assert.Regexp(t, `^mcp-actors (dev|v\S+) \(go1\.\d+`, string(out))
	assert.Regexp(t, `routing envelope +writes v1, reads v0 to v1`, string(out))
	assert.Regexp(t, `directory record +writes v1, reads v1 to v1`, string(out))
	assert.Regexp(t, `lease record +writes v1, reads v1 to v1`, string(out))
	assert.Regexp(t, `catalog entry +writes v1, reads v1 to v1`, string(out))
}

// runBin runs the binary with args to its end and returns its exit code,
// stdout and stderr.
func runBin(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runBinEnv(t, nil, args...)
}

// runBinEnv is runBin with env added to the test's environment.
func runBinEnv(t *testing.T, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	bin, err := binary()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), 3*exitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...) // killed if it does not exit in time
	cmd.Env = append(os.Environ(), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.WaitDelay = exitTimeout
	err = cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%v did not exit within %v; stderr:\n%s", args, 3*exitTimeout, errOut.String())
	}
	if err != nil {
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit, "%v", args)
		code = exit.ExitCode()
	}
	return code, out.String(), errOut.String()
}

// TestBadFlags: a command line that does not parse exits 2 with one line
// on stderr and nothing on stdout.
func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"stdio", "--log-level", "verbose"},
		{"stdio", "--log-format", "xml"},
		{"serve-nothing"},
		{},
	} {
		code, stdout, stderr := runBin(t, args...)
		assert.Equal(t, exitConfig, code, "%v", args)
		assert.Empty(t, stdout, "%v: stdout belongs to MCP", args)
		assert.Regexp(t, `^mcp-actors: [^\n]+\n$`, stderr, "%v: one line", args)
	}
}
