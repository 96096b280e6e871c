package transport_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/actors/session"
	"github.com/mcp-actors/mcp-actors/actors/transport"
	"github.com/mcp-actors/mcp-actors/messages"
)

func TestServeStdioRoundTrip(t *testing.T) {
	f := newFixture(t)
	p := f.serve(t, context.Background(), nil)

	p.initialize()

	var tools messages.ListToolsResult
	p.result(messages.IntID(1), messages.MethodListTools, nil, &tools)
	names := make([]string, len(tools.Tools))
	for i, tool := range tools.Tools {
		names[i] = tool.Name
	}
	assert.ElementsMatch(t, []string{"echo", "block", "gate", "roots"}, names)

	p.callTool(messages.IntID(2), "echo", map[string]any{"text": "hello\nworld"})
	m := p.response(messages.IntID(2))
	require.Nil(t, m.Error)
	got, isError := firstText(t, m.Result)
	assert.False(t, isError)
	assert.Equal(t, "hello\nworld", got, "a newline in a string stays escaped inside one line")

	p.stdin.Close()
	require.NoError(t, p.wait())
	_, more := <-p.lines
	assert.False(t, more, "nothing but the three responses reached stdout")
}

func TestServeStdioBadInput(t *testing.T) {
	null := messages.ID{}
	cases := []struct {
		name string
		line string
		code int64
		id   messages.ID
	}{
		{"truncated JSON", `{"jsonrpc":"2.0","id":1,`, messages.CodeParseError, null},
		{"not JSON", `hello`, messages.CodeParseError, null},
		{"JSON then garbage", `{"jsonrpc":"2.0","id":1,"method":"ping"} x`, messages.CodeParseError, null},
		{"version 1.0", `{"jsonrpc":"1.0","id":7,"method":"ping"}`, messages.CodeInvalidRequest, messages.IntID(7)},
		{"no version", `{"id":"s","method":"ping"}`, messages.CodeInvalidRequest, messages.StringID("s")},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"x"}`, messages.CodeInvalidRequest, null},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, messages.CodeInvalidRequest, null},
		{"empty method", `{"jsonrpc":"2.0","id":3,"method":""}`, messages.CodeInvalidRequest, messages.IntID(3)},
		{"string params", `{"jsonrpc":"2.0","id":4,"method":"ping","params":"x"}`, messages.CodeInvalidRequest, messages.IntID(4)},
		{"not an object", `"ping"`, messages.CodeInvalidRequest, null},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, messages.CodeInvalidRequest, null},
		{"empty batch", ` []`, messages.CodeInvalidRequest, null},
	}
	f := newFixture(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := f.serve(t, context.Background(), nil)
			p.send(c.line)
			wantError(t, p.next(), c.code, c.id)
			p.ping(messages.StringID("after"))
		})
	}

	t.Run("blank lines are ignored", func(t *testing.T) {
		p := f.serve(t, context.Background(), nil)
		p.write("\n  \n\t\n\r\n \r\n")
		p.ping(messages.StringID("after"))
	})

	t.Run("CRLF line endings", func(t *testing.T) {
		p := f.serve(t, context.Background(), nil)
		p.write(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}` + "\r\n")
		m := p.response(messages.IntID(1))
		require.Nil(t, m.Error)
		p.write(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\r\n")
		p.write(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"crlf"}}}` + "\r\n")
		m = p.response(messages.IntID(2))
		require.Nil(t, m.Error)
		got, _ := firstText(t, m.Result)
		assert.Equal(t, "crlf", got)
		p.write("hello\r\n")
		wantError(t, p.next(), messages.CodeParseError, null)
	})
}

func TestServeStdioEOF(t *testing.T) {
	f := newFixture(t)
	p := f.serve(t, context.Background(), &transport.StdioOptions{DrainTimeout: 50 * time.Millisecond})
	p.initialize()

	p.callTool(messages.IntID(1), "block", nil)
	recv(t, f.blockStarted, "block to start")
	p.callTool(messages.IntID(2), "roots", nil)
	m := p.next()
	require.Equal(t, messages.KindRequest, m.Kind())
	require.Equal(t, messages.MethodListRoots, m.Method)

	p.stdin.Close()
	require.NoError(t, p.wait())
	recv(t, p.ref.Done(), "the session to end")
	assert.ErrorIs(t, recv(t, f.blockEnded, "block to be cancelled"), context.Canceled)
	assert.ErrorIs(t, recv(t, f.rootsErr, "ListRoots to fail"), session.ErrSessionClosed)
}

// At EOF the requests already running still answer (within DrainTimeout),
// while calls waiting for the client fail at once: nobody will answer them.
func TestServeStdioEOFDrainsRunningRequests(t *testing.T) {
	f := newFixture(t)
	p := f.serve(t, context.Background(), &transport.StdioOptions{DrainTimeout: watchdog})
	p.initialize()

	p.callTool(messages.IntID(1), "gate", nil)
	recv(t, f.gateStarted, "gate to start")
	p.callTool(messages.IntID(2), "roots", nil)
	require.Equal(t, messages.MethodListRoots, p.next().Method)

	p.stdin.Close()
	assert.ErrorIs(t, recv(t, f.rootsErr, "ListRoots to fail at EOF"), session.ErrSessionClosed)
	close(f.gate)
	var got []string
	for range 2 { // the failed roots call's answer and gate's, in either order
		m := p.next()
		require.Equal(t, messages.KindResponse, m.Kind(), "got %+v", m)
		got = append(got, m.ID.Raw()+":"+string(m.Result))
	}
	assert.Contains(t, strings.Join(got, "\n"), `1:{"content":[{"type":"text","text":"opened"}]}`)
	require.NoError(t, p.wait())
	recv(t, p.ref.Done(), "the session to end")
}

func TestServeStdioContextCancelled(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := f.serve(t, ctx, nil)
	p.initialize()
	p.callTool(messages.IntID(1), "block", nil)
	recv(t, f.blockStarted, "block to start")

	cancel()
	require.ErrorIs(t, p.wait(), context.Canceled)
	recv(t, p.ref.Done(), "the session to end")
	assert.ErrorIs(t, recv(t, f.blockEnded, "block to be cancelled"), context.Canceled)
	p.stdinClosed()
}

func TestServeStdioSessionClosed(t *testing.T) {
	f := newFixture(t)
	p := f.serve(t, context.Background(), nil)
	p.initialize()

	p.ref.Send(&messages.CloseSession{Reason: "test"})
	require.NoError(t, p.wait())
	p.stdinClosed()
}

func TestServeStdioClientResponses(t *testing.T) {
	cases := []struct {
		name   string
		answer func(id messages.ID) string // the client's answer to roots/list
		check  func(t *testing.T, m *messages.Message, f *fixture)
	}{
		{
			name: "result",
			answer: func(id messages.ID) string {
				return `{"jsonrpc":"2.0","id":` + id.Raw() + `,"result":{"roots":[{"uri":"file:///a","name":"a"},{"uri":"file:///b"}]}}`
			},
			check: func(t *testing.T, m *messages.Message, _ *fixture) {
				require.Nil(t, m.Error)
				got, isError := firstText(t, m.Result)
				assert.False(t, isError)
				assert.Equal(t, "file:///a\nfile:///b", got)
			},
		},
		{
			name: "error",
			answer: func(id messages.ID) string {
				return `{"jsonrpc":"2.0","id":` + id.Raw() + `,"error":{"code":-32601,"message":"no roots here"}}`
			},
			// The client's error reaches ListRoots and the call is answered;
			// how a tool's failure is shown is the server's business.
			check: func(t *testing.T, _ *messages.Message, f *fixture) {
				assert.ErrorIs(t, recv(t, f.rootsErr, "ListRoots to fail"), messages.ErrMethodNotFound)
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			p := f.serve(t, context.Background(), nil)
			p.initialize()

			p.callTool(messages.IntID(1), "roots", nil)
			req := p.next()
			require.Equal(t, messages.KindRequest, req.Kind())
			require.Equal(t, messages.MethodListRoots, req.Method)

			// Answers to requests the server never made are dropped.
			p.send(`{"jsonrpc":"2.0","id":` + strings.Repeat("9", 6) + `,"result":{"roots":[]}}`)
			p.send(`{"jsonrpc":"2.0","id":"unknown","error":{"code":-32603,"message":"x"}}`)
			p.send(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`)
			p.ping(messages.StringID("still here"))

			p.send(c.answer(req.ID))
			c.check(t, p.response(messages.IntID(1)), f)

			// A second answer to the same request is dropped too.
			p.send(c.answer(req.ID))
			p.ping(messages.StringID("still here after"))
		})
	}
}
