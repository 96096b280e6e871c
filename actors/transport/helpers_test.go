package transport_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/actors/router"
	"github.com/mcp-actors/mcp-actors/actors/session"
	"github.com/mcp-actors/mcp-actors/actors/transport"
	"github.com/mcp-actors/mcp-actors/internal/access"
	"github.com/mcp-actors/mcp-actors/messages"
)

// watchdog bounds every wait in these tests. It only turns a deadlock into a
// failure; nothing waits for it to pass.
const watchdog = 10 * time.Second

// fixture is a server with the tools the stdio tests call, and the channels
// those tools report on. The channels are buffered so that a tool never
// blocks on a test that does not listen.
type fixture struct {
	srv *mcpactors.Server
	// blockStarted receives when "block" is running; blockEnded receives
	// ctx.Err() when its ctx ends.
	blockStarted chan struct{}
	blockEnded   chan error
	// rootsErr receives the error "roots" got from ListRoots.
	rootsErr chan error
	// gateStarted receives when "gate" is running; it answers "opened" once
	// gate is closed.
	gateStarted chan struct{}
	gate        chan struct{}
}

// newFixture returns a server with three tools: "echo" answers its "text"
// argument; "block" waits for its ctx to end; "roots" asks the client for
// its roots (waiting until the client answers or the session ends) and
// answers their URIs, one per line. The server is closed when
// the test ends.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{
		srv:          mcpactors.NewServer(messages.Implementation{Name: "stdio-test", Version: "1"}, nil),
		blockStarted: make(chan struct{}, 16),
		blockEnded:   make(chan error, 16),
		rootsErr:     make(chan error, 16),
		gateStarted:  make(chan struct{}, 16),
		gate:         make(chan struct{}),
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), watchdog)
		defer cancel()
		assert.NoError(t, f.srv.Close(ctx), "closing the server")
	})

	require.NoError(t, f.srv.AddTool(&messages.Tool{
		Name:        "echo",
		InputSchema: jsontext.Value(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
	}, func(_ context.Context, _ *mcpactors.Session, req *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
		var in struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(req.Arguments, &in); err != nil {
			return nil, err
		}
		return text(in.Text), nil
	}))
	require.NoError(t, f.srv.AddTool(&messages.Tool{Name: "block"},
		func(ctx context.Context, _ *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			f.blockStarted <- struct{}{}
			<-ctx.Done()
			f.blockEnded <- ctx.Err()
			return nil, ctx.Err()
		}))
	require.NoError(t, f.srv.AddTool(&messages.Tool{Name: "gate"},
		func(ctx context.Context, _ *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			f.gateStarted <- struct{}{}
			select {
			case <-f.gate:
				return text("opened"), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}))
	require.NoError(t, f.srv.AddTool(&messages.Tool{Name: "roots"},
		func(ctx context.Context, s *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			// The session cancels ctx as it closes, and dispatcher.Client.Run
			// may then report ctx.Err() instead of the session's end (it does
			// not prefer a call already finished over a ctx already done). A
			// detached ctx leaves the session's end, or the client's answer,
			// as the only way out of the wait.
			roots, err := s.ListRoots(context.WithoutCancel(ctx))
			if err != nil {
				f.rootsErr <- err
				return nil, err
			}
			uris := make([]string, len(roots))
			for i, r := range roots {
				uris[i] = r.URI
			}
			return text(strings.Join(uris, "\n")), nil
		}))
	return f
}

// text is a tool result with one text block.
func text(s string) *messages.CallToolResult {
	return &messages.CallToolResult{Content: messages.ContentList{&messages.TextContent{Text: s}}}
}

// peer is the client end of one ServeStdio: it writes the server's stdin
// and reads the server's stdout, checking that every line there is exactly
// one JSON-RPC message.
type peer struct {
	t     *testing.T
	ref   *session.Ref   // the session ServeStdio opened
	stdin *io.PipeWriter // our end of the server's r
	lines chan []byte    // lines the server wrote, newline included; closed at EOF

	served   chan error // ServeStdio's result
	returned bool       // served has been received into err
	err      error
}

// serve starts ServeStdio on a new session of f's server over a pair of
// pipes. The test's end of stdin is closed when the test ends (EOF), and
// then the peer waits for ServeStdio to return and checks what is left on
// stdout.
func (f *fixture) serve(t *testing.T, ctx context.Context, opts *transport.StdioOptions) *peer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	opened := make(chan string, 1)
	rt := &recordingRouter{Router: access.Router(f.srv), opened: opened}
	p := &peer{t: t, stdin: inW, lines: make(chan []byte, 1024), served: make(chan error, 1)}
	stop := make(chan struct{}) // closed when the test ends: stop reading stdout

	go func() {
		err := transport.ServeStdio(ctx, inR, outW, rt, opts)
		outW.Close()
		p.served <- err
	}()
	go func() {
		defer close(p.lines)
		br := bufio.NewReader(outR)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				select {
				case p.lines <- line:
				case <-stop:
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()

	id := recv(t, opened, "ServeStdio to open its session")
	ref, ok := access.Session(f.srv, id)
	require.True(t, ok, "the session ServeStdio opened is not live")
	p.ref = ref
	t.Cleanup(func() {
		defer outR.Close()
		defer close(stop)
		inW.Close()
		p.wait()
		for {
			select {
			case line, ok := <-p.lines:
				if !ok {
					return
				}
				checkLine(t, line)
			case <-time.After(watchdog):
				require.FailNow(t, "stdout did not end after ServeStdio returned")
			}
		}
	})
	return p
}

// checkLine asserts that line (with its newline) is exactly one JSON-RPC
// 2.0 message and returns it decoded.
func checkLine(t *testing.T, line []byte) *messages.Message {
	t.Helper()
	body, ok := bytes.CutSuffix(line, []byte("\n"))
	require.True(t, ok, "stdout line without a newline: %q", line)
	require.Equal(t, bytes.TrimSpace(body), body, "stdout line with surrounding space: %q", line)
	require.True(t, jsontext.Value(body).IsValid(), "stdout line is not one JSON value: %q", line)
	var envelope struct {
		JSONRPC string `json:"jsonrpc"`
	}
	require.NoError(t, json.Unmarshal(body, &envelope))
	require.Equal(t, "2.0", envelope.JSONRPC, "stdout line: %q", line)
	m, derr := messages.Decode(body)
	require.Nil(t, derr, "stdout line is not a JSON-RPC message: %q: %v", line, derr)
	require.NotEqual(t, messages.KindInvalid, m.Kind())
	return m
}

// write writes s to the server's stdin as it is.
func (p *peer) write(s string) {
	p.t.Helper()
	_, err := io.WriteString(p.stdin, s)
	require.NoError(p.t, err)
}

// send writes s and a newline.
func (p *peer) send(s string) { p.t.Helper(); p.write(s + "\n") }

// request sends a request.
func (p *peer) request(id messages.ID, method string, params any) {
	p.t.Helper()
	b, err := messages.EncodeRequest(id, method, params)
	require.NoError(p.t, err)
	p.send(string(b))
}

// notify sends a notification.
func (p *peer) notify(method string, params any) {
	p.t.Helper()
	b, err := messages.EncodeNotification(method, params)
	require.NoError(p.t, err)
	p.send(string(b))
}

// next returns the next message the server wrote.
func (p *peer) next() *messages.Message {
	p.t.Helper()
	select {
	case line, ok := <-p.lines:
		require.True(p.t, ok, "stdout ended")
		return checkLine(p.t, line)
	case <-time.After(watchdog):
		require.FailNow(p.t, "no message on stdout")
		return nil
	}
}

// response returns the next message, which must answer id.
func (p *peer) response(id messages.ID) *messages.Message {
	p.t.Helper()
	m := p.next()
	require.Contains(p.t, []messages.Kind{messages.KindResponse, messages.KindError}, m.Kind(), "got %+v", m)
	require.Equal(p.t, id, m.ID)
	return m
}

// result answers a request and decodes its result into out.
func (p *peer) result(id messages.ID, method string, params, out any) {
	p.t.Helper()
	p.request(id, method, params)
	m := p.response(id)
	require.Nil(p.t, m.Error)
	require.NoError(p.t, json.Unmarshal(m.Result, out))
}

// wantError asserts that m is an error response with code and id.
func wantError(t *testing.T, m *messages.Message, code int64, id messages.ID) {
	t.Helper()
	require.Equal(t, messages.KindError, m.Kind(), "got %+v", m)
	assert.Equal(t, code, m.Error.Code, "message: %s", m.Error.Message)
	assert.Equal(t, id, m.ID)
}

// initialize performs the handshake, declaring the roots capability.
func (p *peer) initialize() {
	p.t.Helper()
	var res messages.InitializeResult
	p.result(messages.StringID("init"), messages.MethodInitialize, &messages.InitializeParams{
		ProtocolVersion: messages.LatestVersion,
		Capabilities:    messages.ClientCapabilities{Roots: &messages.RootsCapabilities{}},
		ClientInfo:      messages.Implementation{Name: "stdio-test-client", Version: "1"},
	}, &res)
	require.Equal(p.t, messages.LatestVersion, res.ProtocolVersion)
	require.Equal(p.t, "stdio-test", res.ServerInfo.Name)
	p.notify(messages.MethodInitialized, nil)
}

// callTool sends tools/call for name without waiting for the answer.
func (p *peer) callTool(id messages.ID, name string, args any) {
	p.t.Helper()
	p.request(id, messages.MethodCallTool, map[string]any{"name": name, "arguments": args})
}

// ping checks that the session still answers.
func (p *peer) ping(id messages.ID) {
	p.t.Helper()
	var res map[string]any
	p.result(id, messages.MethodPing, nil, &res)
	assert.Empty(p.t, res)
}

// wait returns what ServeStdio returned.
func (p *peer) wait() error {
	p.t.Helper()
	if !p.returned {
		p.err = recv(p.t, p.served, "ServeStdio to return")
		p.returned = true
	}
	return p.err
}

// stdinClosed asserts that the server no longer reads stdin.
func (p *peer) stdinClosed() {
	p.t.Helper()
	_, err := io.WriteString(p.stdin, "{}\n")
	require.ErrorIs(p.t, err, io.ErrClosedPipe)
}

// recv receives from ch within the watchdog.
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(watchdog):
		require.FailNow(t, "timed out waiting for "+what)
		var zero T
		return zero
	}
}

// firstText returns the text of the first content block of a tool result.
func firstText(t *testing.T, raw jsontext.Value) (string, bool) {
	t.Helper()
	var res messages.CallToolResult
	require.NoError(t, json.Unmarshal(raw, &res))
	return textOf(t, &res), res.IsError
}

// textOf returns the text of a tool result's first content block.
func textOf(t *testing.T, res *messages.CallToolResult) string {
	t.Helper()
	require.NotEmpty(t, res.Content)
	tc, ok := res.Content[0].(*messages.TextContent)
	require.True(t, ok, "content %T", res.Content[0])
	return tc.Text
}

// recordingRouter tells the ID of the session ServeStdio opens.
type recordingRouter struct {
	router.Router
	opened chan<- string
}

func (r *recordingRouter) Open(ctx context.Context, o router.OpenOptions) (string, error) {
	id, err := r.Router.Open(ctx, o)
	if err == nil {
		r.opened <- id
	}
	return id, err
}
