package transport_test

import (
	"context"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/actors/transport"
	"github.com/mcp-actors/mcp-actors/messages"
)

// plainListener hides the listener's socket, as a wrapping listener does.
type plainListener struct{ net.Listener }

// TestLoopServerLifecycle checks LoopServer's Serve and Shutdown outside
// the happy path: a listener without a socket is refused, Shutdown before
// Serve makes Serve refuse, and a second Serve is refused.
func TestLoopServerLifecycle(t *testing.T) {
	srv := mcpactors.NewServer(messages.Implementation{Name: "loop", Version: "1"}, nil)
	t.Cleanup(func() { _ = srv.Close(context.Background()) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })

	s := transport.NewLoopServer(srv, "/mcp", nil, nil)
	assert.Error(t, s.Serve(plainListener{ln}), "a listener without a socket")

	early := transport.NewLoopServer(srv, "/mcp", nil, nil)
	require.NoError(t, early.Shutdown(context.Background()))
	assert.ErrorIs(t, early.Serve(ln), transport.ErrLoopServerClosed)

	served := make(chan error, 2)
	go func() { served <- s.Serve(ln) }()
	go func() { served <- s.Serve(ln) }()
	assert.ErrorIs(t, recv(t, served, "one Serve to refuse"), transport.ErrLoopServerClosed, "already serving")
	require.NoError(t, s.Shutdown(context.Background()))
	assert.NoError(t, recv(t, served, "the other Serve to return"))
	require.NoError(t, s.Shutdown(context.Background()), "a second Shutdown does nothing")
}
