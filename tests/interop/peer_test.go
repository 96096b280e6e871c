package interop_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	// protocolVersion is the version every session asks for and must get.
	protocolVersion = "2025-11-25"
	// testTimeout bounds one subtest's session, from start to exit.
	testTimeout = 60 * time.Second
	// waitTimeout bounds each single wait for a message or an event.
	waitTimeout = 10 * time.Second
	// exitTimeout is how long the SDK waits for the server to exit after
	// closing its stdin before it sends SIGTERM; a clean server needs far
	// less.
	exitTimeout = 5 * time.Second
)

// peer is one mcp-actors subprocess and the SDK client session talking to
// it.
type peer struct {
	t      *testing.T
	ctx    context.Context // ends after testTimeout
	cmd    *exec.Cmd
	client *mcp.Client
	cs     *mcp.ClientSession
	wire   *wire
	stderr *syncBuffer
	closed bool
}

// start runs `mcp-actors stdio --reference-tools` and connects an SDK
// client with opts (nil for none) and roots, pinned to protocolVersion.
// The session is closed, and the exit status checked, at the end of t.
func start(t *testing.T, opts *mcp.ClientOptions, roots ...*mcp.Root) *peer {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	t.Cleanup(cancel)

	p := &peer{
		t:      t,
		ctx:    ctx,
		cmd:    exec.Command(serverBinary(t), "stdio", "--reference-tools"),
		client: mcp.NewClient(&mcp.Implementation{Name: "mcp-actors-interop", Version: "0.0.1"}, opts),
		wire:   newWire(),
		stderr: &syncBuffer{},
	}
	p.cmd.Stderr = p.stderr
	if raceEnabled {
		// The race runtime waits a second at exit by default; a race it
		// found still makes the exit status 66.
		p.cmd.Env = append(os.Environ(), "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	}
	p.client.AddRoots(roots...)
	t.Cleanup(func() {
		if !p.closed {
			p.close()
		}
		if t.Failed() {
			t.Logf("wire transcript:\n%s", p.wire)
			t.Logf("server stderr:\n%s", p.stderr)
		}
	})

	transport := &recordingTransport{
		inner: &mcp.CommandTransport{Command: p.cmd, TerminateDuration: exitTimeout},
		wire:  p.wire,
	}
	cctx, ccancel := p.wait()
	defer ccancel()
	cs, err := p.client.Connect(cctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
	require.NoError(t, err, "connecting")
	p.cs = cs
	return p
}

// wait returns a context for one wait: waitTimeout, within the test's.
func (p *peer) wait() (context.Context, context.CancelFunc) {
	return context.WithTimeout(p.ctx, waitTimeout)
}

// close closes the session (the SDK closes the server's stdin and waits for
// it) and checks that the server exited on its own with status 0.
func (p *peer) close() {
	p.t.Helper()
	p.closed = true
	if p.cs == nil {
		if p.cmd.Process != nil {
			_ = p.cmd.Process.Kill()
			_ = p.cmd.Wait()
		}
		return
	}
	start := time.Now()
	err := p.cs.Close()
	elapsed := time.Since(start)
	assert.NoError(p.t, err, "closing the session")
	if assert.NotNil(p.t, p.cmd.ProcessState, "the server process was not waited for") {
		assert.Equal(p.t, 0, p.cmd.ProcessState.ExitCode(), "server exit status (%s)", p.cmd.ProcessState)
	}
	assert.Less(p.t, elapsed, exitTimeout, "the server did not exit at EOF on stdin; the SDK had to signal it")
}

// callTool calls a tool, bounded by waitTimeout, and requires a result.
func (p *peer) callTool(params *mcp.CallToolParams) *mcp.CallToolResult {
	p.t.Helper()
	ctx, cancel := p.wait()
	defer cancel()
	res, err := p.cs.CallTool(ctx, params)
	require.NoError(p.t, err, "calling %s", params.Name)
	return res
}

// call calls a tool by name with args (nil for none).
func (p *peer) call(name string, args map[string]any) *mcp.CallToolResult {
	p.t.Helper()
	return p.callTool(&mcp.CallToolParams{Name: name, Arguments: args})
}

// toolCall returns the transcript of the last call of name, which must have
// been answered.
func (p *peer) toolCall(name string) toolCall {
	p.t.Helper()
	c, ok := p.wire.lastCall(name)
	require.True(p.t, ok, "no tools/call %s on the wire", name)
	require.NotNil(p.t, c.reply, "no response to tools/call %s (id %v) on the wire", name, c.id)
	return c
}

// recv waits for the next value on ch, bounded by waitTimeout.
func recv[T any](p *peer, ch <-chan T, what string) T {
	p.t.Helper()
	ctx, cancel := p.wait()
	defer cancel()
	select {
	case v := <-ch:
		return v
	case <-ctx.Done():
	}
	require.FailNow(p.t, "timed out", "waiting for %s: %v", what, ctx.Err())
	var zero T
	return zero
}

// send delivers v on ch from a client handler without ever blocking the
// SDK past the test's end.
func send[T any](ctx context.Context, ch chan<- T, v T) {
	select {
	case ch <- v:
	case <-ctx.Done():
	}
}

// syncBuffer is a bytes.Buffer safe for the exec package's copying
// goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
