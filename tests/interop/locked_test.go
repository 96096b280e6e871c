package interop_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/messages"
)

// TestHTTPLockedThreadElicitation has Go SDK clients answer elicitations
// from tool handlers that lock their OS thread (and never unlock it): more
// such handlers wait at once than there are processors, another session is
// served meanwhile, and every call returns the client's answer. Unlike the
// other tests here, the server runs in-process (mcpactors.Server.Serve on
// a loopback port): the handler is the test's own, not a reference tool of
// the binary.
func TestHTTPLockedThreadElicitation(t *testing.T) {
	srv := mcpactors.NewServer(messages.Implementation{Name: "interop-locked", Version: "1"},
		&mcpactors.Options{Logger: slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))})
	require.NoError(t, srv.AddTool(&messages.Tool{Name: "locked_ask", Description: "locks its thread, then elicits a name"},
		func(ctx context.Context, s *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			runtime.LockOSThread() // and never unlocked
			var answer struct {
				Name string `json:"name"`
			}
			if _, err := s.Elicit(ctx, "name?", &answer); err != nil {
				return nil, err
			}
			return &messages.CallToolResult{Content: messages.ContentList{&messages.TextContent{Text: "name=" + answer.Name}}}, nil
		}))
	url := serveInProcess(t, srv)

	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	defer tr.CloseIdleConnections()
	connect := func(opts *mcp.ClientOptions) *mcp.ClientSession {
		t.Helper()
		c := mcp.NewClient(&mcp.Implementation{Name: "mcp-actors-interop-locked", Version: "0.0.1"}, opts)
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: tr}},
			&mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
		require.NoError(t, err, "connecting")
		return cs
	}

	n := runtime.GOMAXPROCS(0) + 2
	asked := make(chan string, n) // a client's name, when its elicitation arrives
	answer := make(chan struct{}) // closed: the clients answer
	sessions := make([]*mcp.ClientSession, n)
	for i := range sessions {
		name := fmt.Sprintf("user-%d", i)
		sessions[i] = connect(&mcp.ClientOptions{
			ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				send(ctx, asked, name)
				select {
				case <-answer:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": name}}, nil
			},
		})
	}

	type outcome struct {
		i    int
		text string
		err  error
	}
	done := make(chan outcome, n)
	var calls sync.WaitGroup
	defer func() {
		cancel() // on a failure, the calls still running end with it
		calls.Wait()
	}()
	for i, cs := range sessions {
		calls.Go(func() {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "locked_ask"})
			if err == nil && (res.IsError || len(res.Content) == 0) {
				err = fmt.Errorf("result %+v", res)
			}
			o := outcome{i: i, err: err}
			if err == nil {
				if tc, ok := res.Content[0].(*mcp.TextContent); ok {
					o.text = tc.Text
				}
			}
			done <- o
		})
	}
	for range n {
		select {
		case <-asked:
		case <-time.After(waitTimeout):
			close(answer)
			require.FailNow(t, "an elicitation did not arrive")
		}
	}

	// Every locked handler waits for its client; another session is served.
	other := connect(nil)
	assert.NoError(t, other.Ping(ctx, nil), "a session served while the locked handlers wait")
	assert.NoError(t, other.Close())

	close(answer)
	for range n {
		select {
		case o := <-done:
			if assert.NoError(t, o.err, "call %d", o.i) {
				assert.Equal(t, fmt.Sprintf("name=user-%d", o.i), o.text, "call %d", o.i)
			}
		case <-time.After(waitTimeout):
			require.FailNow(t, "a locked call did not return")
		}
	}
	for i, cs := range sessions {
		assert.NoError(t, cs.Ping(ctx, nil), "session %d serves on", i)
		assert.NoError(t, cs.Close(), "closing session %d", i)
	}
}

// serveInProcess serves srv over Streamable HTTP on a loopback port until
// the test ends, and returns the endpoint's URL. Serve must then return
// nil within stopTimeout.
func serveInProcess(t *testing.T, srv *mcpactors.Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln, nil, nil) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-served:
			assert.NoError(t, err, "Serve")
		case <-time.After(stopTimeout):
			assert.Fail(t, "Serve did not return")
		}
	})
	return "http://" + ln.Addr().String() + "/mcp"
}
