package interop_test

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/internal/serverbin"
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

// starter starts a server, connects an SDK client with opts (nil for none)
// and roots to it, pinned to protocolVersion, and returns the peer. The
// session is closed, and the server checked, at the end of t. startStdio and
// startHTTP are the two; the reference cases run with both.
type starter func(t *testing.T, opts *mcp.ClientOptions, roots ...*mcp.Root) *peer

// peer is one SDK client session and the mcp-actors server it talks to.
type peer struct {
	t      *testing.T
	ctx    context.Context // ends after testTimeout
	client *mcp.Client
	cs     *mcp.ClientSession
	wire   *wire
	// end closes cs (nil when connecting failed) and checks how the
	// transport ended the session; set by the starter.
	end func(cs *mcp.ClientSession)
	// logs are reported, after the wire transcript, when the test fails;
	// the starter adds them.
	logs   []namedLog
	closed bool
}

// namedLog is a transcript reported by name when a test fails.
type namedLog struct {
	name string
	log  fmt.Stringer
}

// newPeer returns a peer whose client has opts and roots. Its session is
// closed through p.end, and the transcripts reported on failure, at the end
// of t.
func newPeer(t *testing.T, opts *mcp.ClientOptions, roots []*mcp.Root) *peer {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	t.Cleanup(cancel)
	p := &peer{
		t:      t,
		ctx:    ctx,
		client: mcp.NewClient(&mcp.Implementation{Name: "mcp-actors-interop", Version: "0.0.1"}, opts),
		wire:   newWire(),
	}
	p.client.AddRoots(roots...)
	t.Cleanup(func() {
		if !p.closed {
			p.close()
		}
		if t.Failed() {
			t.Logf("wire transcript:\n%s", p.wire)
			for _, l := range p.logs {
				t.Logf("%s:\n%s", l.name, l.log)
			}
		}
	})
	return p
}

// connect connects the client through transport, which records p.wire,
// pinned to protocolVersion.
func (p *peer) connect(transport mcp.Transport) {
	p.t.Helper()
	ctx, cancel := p.wait()
	defer cancel()
	cs, err := p.client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
	require.NoError(p.t, err, "connecting")
	p.cs = cs
}

// startStdio runs `mcp-actors stdio --reference-tools` as the peer's
// server. Closing the session closes the server's stdin; the server must
// then exit on its own with status 0.
func startStdio(t *testing.T, opts *mcp.ClientOptions, roots ...*mcp.Root) *peer {
	t.Helper()
	cmd := exec.Command(serverbin.Path(t), "stdio", "--reference-tools")
	cmd.Env = serverbin.Env()
	stderr := &syncBuffer{}
	cmd.Stderr = stderr

	p := newPeer(t, opts, roots)
	p.logs = append(p.logs, namedLog{"server stderr", stderr})
	p.end = func(cs *mcp.ClientSession) {
		if cs == nil {
			if cmd.Process != nil {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
			}
			return
		}
		start := time.Now()
		err := cs.Close()
		elapsed := time.Since(start)
		assert.NoError(t, err, "closing the session")
		if assert.NotNil(t, cmd.ProcessState, "the server process was not waited for") {
			assert.Equal(t, 0, cmd.ProcessState.ExitCode(), "server exit status (%s)", cmd.ProcessState)
		}
		assert.Less(t, elapsed, exitTimeout, "the server did not exit at EOF on stdin; the SDK had to signal it")
	}
	p.connect(&recordingTransport{
		inner: &mcp.CommandTransport{Command: cmd, TerminateDuration: exitTimeout},
		wire:  p.wire,
	})
	return p
}

// wait returns a context for one wait: waitTimeout, within the test's.
func (p *peer) wait() (context.Context, context.CancelFunc) {
	return context.WithTimeout(p.ctx, waitTimeout)
}

// close ends the session through the transport's end.
func (p *peer) close() {
	p.t.Helper()
	p.closed = true
	p.end(p.cs)
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
