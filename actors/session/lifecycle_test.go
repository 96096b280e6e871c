package session_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/actors/router"
	"github.com/mcp-actors/mcp-actors/harness"
	"github.com/mcp-actors/mcp-actors/internal/access"
	"github.com/mcp-actors/mcp-actors/messages"
)

func TestLifecycle(t *testing.T) {
	ctx := context.Background()

	t.Run("requests before initialize are refused, ping is not", func(t *testing.T) {
		c := harness.New(t, nil).Open()
		m, err := c.Call(ctx, messages.MethodListTools, nil)
		require.NoError(t, err)
		require.NotNil(t, m.Error)
		assert.Equal(t, int64(messages.CodeInvalidRequest), m.Error.Code)
		assert.Contains(t, m.Error.Message, "initialize")

		m, err = c.Call(ctx, messages.MethodPing, nil)
		require.NoError(t, err)
		assert.JSONEq(t, `{}`, string(m.Result))
	})

	versions := []struct{ asked, got string }{
		{"2024-11-05", "2024-11-05"},
		{"2025-03-26", "2025-03-26"},
		{"2025-06-18", "2025-06-18"},
		{"2025-11-25", "2025-11-25"},
		{"2099-01-01", messages.LatestVersion},
		{"", messages.LatestVersion},
	}
	for _, v := range versions {
		t.Run("version "+v.asked, func(t *testing.T) {
			c := harness.New(t, nil).Connect(harness.WithProtocolVersion(v.asked))
			assert.Equal(t, v.got, c.InitializeResult.ProtocolVersion)
			assert.Equal(t, "harness", c.InitializeResult.ServerInfo.Name)
			require.NotNil(t, c.InitializeResult.Capabilities.Tools)
			assert.True(t, c.InitializeResult.Capabilities.Tools.ListChanged)
		})
	}

	t.Run("a second initialize is refused", func(t *testing.T) {
		c := harness.New(t, nil).Connect()
		err := c.CallResult(ctx, messages.MethodInitialize, &messages.InitializeParams{ProtocolVersion: messages.LatestVersion}, nil)
		require.ErrorIs(t, err, messages.ErrInvalidRequest)
	})

	t.Run("initialize with bad params gets -32602", func(t *testing.T) {
		c := harness.New(t, nil).Open()
		err := c.CallResult(ctx, messages.MethodInitialize, map[string]any{"protocolVersion": 7}, nil)
		require.ErrorIs(t, err, messages.ErrInvalidParams)
	})

	t.Run("unknown method gets -32601", func(t *testing.T) {
		c := harness.New(t, nil).Connect()
		err := c.CallResult(ctx, "no/such", nil, nil)
		require.ErrorIs(t, err, messages.ErrMethodNotFound)
	})

	t.Run("a reused request id is refused while the first runs", func(t *testing.T) {
		release := make(chan struct{})
		srv := newServer(t, func(ctx context.Context, s *mcpactors.Session, req *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			<-release
			return text("ok"), nil
		})
		c := harness.New(t, srv).Connect()
		id := messages.StringID("same")
		require.NoError(t, c.SendRequest(id, messages.MethodCallTool, map[string]any{"name": "run"}))
		require.NoError(t, c.SendRequest(id, messages.MethodCallTool, map[string]any{"name": "run"}))
		r, err := c.WaitResponse(ctx, id, 0)
		require.NoError(t, err)
		require.NotNil(t, r.Msg.Error)
		assert.Contains(t, r.Msg.Error.Message, "already in use")
		close(release)
		r, err = c.WaitResponse(ctx, id, r.Seq+1)
		require.NoError(t, err)
		assert.Nil(t, r.Msg.Error)
	})
}

func TestNoServerRequestBeforeInitialized(t *testing.T) {
	ctx := context.Background()
	srv := newServer(t, func(ctx context.Context, s *mcpactors.Session, req *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
		roots, err := s.ListRoots(ctx)
		if err != nil {
			return nil, err
		}
		return text(roots[0].URI), nil
	})
	h := harness.New(t, srv)
	c := h.Open(harness.WithRoots(func() []*messages.Root { return []*messages.Root{{URI: "file:///a"}} }))
	var res messages.InitializeResult
	require.NoError(t, c.CallResult(ctx, messages.MethodInitialize, &messages.InitializeParams{
		ProtocolVersion: messages.LatestVersion,
		Capabilities:    messages.ClientCapabilities{Roots: &messages.RootsCapabilities{}},
	}, &res))

	// The tool runs while the session is pending: its roots/list must wait.
	id := messages.IntID(100)
	require.NoError(t, c.SendRequest(id, messages.MethodCallTool, map[string]any{"name": "run"}))
	// A ping answered proves the session processed the tools/call first.
	_, err := c.Call(ctx, messages.MethodPing, nil)
	require.NoError(t, err)
	assert.NotContains(t, methods(c), messages.MethodListRoots)

	c.Notify(messages.MethodInitialized, nil)
	r, err := c.WaitResponse(ctx, id, 0)
	require.NoError(t, err)
	require.Nil(t, r.Msg.Error)
	assert.Contains(t, string(r.Msg.Result), "file:///a")
	assert.Contains(t, methods(c), messages.MethodListRoots)
}

// TestPrincipalIsChecked checks that a session answers only its own
// principal: anyone else's messages are refused as for a session that does
// not exist, and do nothing.
func TestPrincipalIsChecked(t *testing.T) {
	h := harness.New(t, nil)
	c := h.Connect(harness.WithPrincipal("alice"))
	rt := access.Router(h.Server)
	ctx := context.Background()

	q := router.NewQueue(ctx, 16, nil)
	sid := rt.Streams().Register(c.ID(), q)
	defer rt.Streams().Unregister(sid)
	ping := &messages.Message{ID: messages.IntID(7), Method: messages.MethodPing}
	require.ErrorIs(t, rt.Deliver(ctx, c.ID(), &messages.HandleRequest{Principal: "mallory", Msg: ping, Stream: sid}), router.ErrSessionNotFound)

	require.ErrorIs(t, rt.Deliver(ctx, c.ID(), &messages.DeleteSession{Principal: "mallory"}), router.ErrSessionNotFound)
	m, err := c.Call(ctx, messages.MethodPing, nil)
	require.NoError(t, err)
	assert.Nil(t, m.Error, "someone else's DELETE does not end the session")
	require.NoError(t, rt.Check(ctx, c.ID()))

	require.NoError(t, rt.Deliver(ctx, c.ID(), &messages.DeleteSession{Principal: "alice"}))
	err = rt.Check(ctx, c.ID())
	require.ErrorIs(t, err, router.ErrSessionNotFound, "refused from the moment it is deleted")
	<-c.Done()
	require.ErrorIs(t, rt.Deliver(ctx, c.ID(), &messages.HandleNotification{Principal: "alice", Msg: ping}), router.ErrSessionNotFound)
}
