package reftools_test

import (
	"bufio"
	"context"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/messages"
	"github.com/mcp-actors/mcp-actors/reftools"
)

// TestModernStdio: the Go SDK client at 2026-07-28 over stdio probes with
// server/discover, stays modern, and gets elicitation through rounds.
func TestModernStdio(t *testing.T) {
	ctx, toClient, fromClient, end := stdioPipes(t)
	var elicits atomic.Int64
	client := mcp.NewClient(&mcp.Implementation{Name: "stdio", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			elicits.Add(1)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"username": "u", "email": "e"}}, nil
		},
	})
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: toClient, Writer: fromClient}, nil)
	require.NoError(t, err)
	assert.Equal(t, messages.Version20260728, cs.InitializeResult().ProtocolVersion)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_elicitation", Arguments: map[string]any{"message": "m"}})
	require.NoError(t, err)
	require.Len(t, res.Content, 1)
	assert.Contains(t, res.Content[0].(*mcp.TextContent).Text, `"username":"u"`)
	assert.EqualValues(t, 1, elicits.Load())
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_echo", Arguments: map[string]any{"text": "x"}})
	require.NoError(t, err)
	assert.Equal(t, "x", res.Content[0].(*mcp.TextContent).Text)
	require.NoError(t, cs.Close())
	end()
}

// TestModernStdioWire: the modern era's errors on stdio, and
// notifications/cancelled ending a request with no response.
func TestModernStdioWire(t *testing.T) {
	_, toClient, fromClient, end := stdioPipes(t)
	lines := bufio.NewScanner(toClient)
	write := func(s string) {
		_, err := io.WriteString(fromClient, s+"\n")
		require.NoError(t, err)
	}
	read := func() string {
		require.True(t, lines.Scan(), "a line: %v", lines.Err())
		return lines.Text()
	}
	meta := func(v string) string {
		return `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + v + `","io.modelcontextprotocol/clientCapabilities":{}}`
	}
	write(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}`)
	assert.Contains(t, read(), `"code":-32602`, "server/discover without _meta")
	write(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + meta("2099-01-01") + `}}`)
	assert.Contains(t, read(), `"code":-32022`)
	write(`{"jsonrpc":"2.0","id":3,"method":"ping","params":{` + meta("2026-07-28") + `}}`)
	assert.Contains(t, read(), `"code":-32601`)
	// A slow call, cancelled: no response; the next call's comes next.
	write(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"test_slow","arguments":{"seconds":5},` + meta("2026-07-28") + `}}`)
	write(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}}`)
	write(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"test_echo","arguments":{"text":"after"},` + meta("2026-07-28") + `}}`)
	got := read()
	assert.Contains(t, got, `"id":5`, "no answer to the cancelled call: %s", got)
	assert.Contains(t, got, `"after"`)
	require.NoError(t, fromClient.Close())
	end()
}

// stdioPipes serves the reference set over stdio on pipes, bounded by the
// returned ctx: the test reads what the server writes from out and writes
// its messages to in. end, once in is closed, checks that the server
// stopped cleanly at the end of its input, and closes it.
func stdioPipes(t *testing.T) (ctx context.Context, out io.ReadCloser, in io.WriteCloser, end func()) {
	t.Helper()
	srv := mcpactors.NewServer(messages.Implementation{Name: "stdio-modern", Version: "1"}, nil)
	require.NoError(t, reftools.Register(srv))
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	t.Cleanup(cancel)
	served := make(chan error, 1)
	go func() {
		served <- srv.ServeStdio(ctx, toServer, fromServer)
		_ = fromServer.Close()
	}()
	return ctx, toClient, fromClient, func() {
		t.Helper()
		require.NoError(t, <-served)
		closeCtx, stop := context.WithTimeout(context.Background(), 5*time.Second)
		defer stop()
		require.NoError(t, srv.Close(closeCtx))
	}
}
