package transport_test

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/actors/transport"
	"github.com/mcp-actors/mcp-actors/internal/access"
	"github.com/mcp-actors/mcp-actors/messages"
)

// pingOfSize returns a ping request of exactly n bytes whose ID is a string
// of padding.
func pingOfSize(t *testing.T, n int) (string, messages.ID) {
	t.Helper()
	const frame = `{"jsonrpc":"2.0","id":"","method":"ping"}`
	require.GreaterOrEqual(t, n, len(frame))
	id := strings.Repeat("p", n-len(frame))
	line := `{"jsonrpc":"2.0","id":"` + id + `","method":"ping"}`
	require.Len(t, line, n)
	return line, messages.StringID(id)
}

func TestServeStdioLineLimit(t *testing.T) {
	const limit = 1 << 10
	opts := &transport.StdioOptions{MaxLineBytes: limit}
	f := newFixture(t)

	t.Run("a long line is refused and the next is served", func(t *testing.T) {
		p := f.serve(t, context.Background(), opts)
		p.send(strings.Repeat("x", 1<<20))
		m := p.next()
		wantError(t, m, messages.CodeInvalidRequest, messages.ID{})
		assert.Contains(t, m.Error.Message, fmt.Sprint(limit))
		p.ping(messages.StringID("after"))
	})

	for _, c := range []struct {
		name string
		size int
		end  string
		ok   bool
	}{
		{"at the limit", limit, "\n", true},
		{"at the limit, CRLF", limit, "\r\n", true},
		{"at the limit, at EOF", limit, "", true},
		{"one over", limit + 1, "\n", false},
		{"one over, CRLF", limit + 1, "\r\n", false},
		{"one over, at EOF", limit + 1, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := f.serve(t, context.Background(), opts)
			line, id := pingOfSize(t, c.size)
			p.write(line + c.end)
			if c.end == "" {
				p.stdin.Close()
			}
			if c.ok {
				p.response(id)
			} else {
				wantError(t, p.next(), messages.CodeInvalidRequest, messages.ID{})
			}
			if c.end != "" {
				p.ping(messages.StringID("after"))
			}
		})
	}

	t.Run("a long line is not kept in memory", func(t *testing.T) {
		const size = 64 << 20
		p := f.serve(t, context.Background(), opts)
		chunk := []byte(strings.Repeat("x", 64<<10))

		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range size / len(chunk) {
			_, err := p.stdin.Write(chunk)
			require.NoError(t, err)
		}
		p.write("\n")
		wantError(t, p.next(), messages.CodeInvalidRequest, messages.ID{})
		runtime.ReadMemStats(&after)

		// The reader keeps at most its buffer and one line of the limit;
		// everything else allocated meanwhile is the session's small change.
		assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(8<<20),
			"allocated while reading a %d-byte line with a %d-byte limit", size, limit)
		p.ping(messages.StringID("after"))
	})
}

// TestServeStdioClientNotReading stalls the server's stdout: the test never
// reads it. Responses queue up to MaxQueuedBytes, then the session ends and
// ServeStdio returns.
func TestServeStdioClientNotReading(t *testing.T) {
	f := newFixture(t)
	opened := make(chan string, 1)
	rt := &recordingRouter{Router: access.Router(f.srv), opened: opened}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe() // nobody reads outR
	t.Cleanup(func() {
		inW.Close()
		outR.Close()
	})

	served := make(chan error, 1)
	go func() {
		served <- transport.ServeStdio(context.Background(), inR, outW, rt,
			&transport.StdioOptions{MaxQueuedBytes: 4 << 10})
	}()
	ref, ok := access.Session(f.srv, recv(t, opened, "ServeStdio to open its session"))
	require.True(t, ok)

	// Each ping is answered with ~1 KiB. Writing stops when the server
	// closes its stdin, or when the test ends.
	line, _ := pingOfSize(t, 1<<10)
	writing := make(chan struct{})
	go func() {
		defer close(writing)
		for {
			if _, err := io.WriteString(inW, line+"\n"); err != nil {
				return
			}
		}
	}()

	require.ErrorIs(t, recv(t, served, "ServeStdio to return"), transport.ErrOutputOverflow)
	recv(t, ref.Done(), "the session to end")
	recv(t, writing, "the server to close its stdin")
}
