package mcpactors_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/actors/router"
	"github.com/mcp-actors/mcp-actors/actors/session"
	"github.com/mcp-actors/mcp-actors/harness"
	"github.com/mcp-actors/mcp-actors/internal/access"
	"github.com/mcp-actors/mcp-actors/messages"
)

func TestServerCloseEndsSessions(t *testing.T) {
	srv := newServer(&mcpactors.Options{Instructions: "be nice"})
	release := make(chan struct{})
	defer close(release)
	started := make(chan struct{})
	require.NoError(t, srv.AddTool(&messages.Tool{Name: "block"},
		func(ctx context.Context, _ *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			close(started)
			select {
			case <-ctx.Done():
			case <-release:
			}
			return textResult("done"), nil
		}))
	h := harness.New(t, srv)
	open := []*harness.Client{h.Connect(), h.Connect()}
	fresh := h.Open() // not initialized
	require.Equal(t, 2, srv.OpenSessions())
	for _, c := range append(open, fresh) {
		got, ok := access.Session(srv, c.ID())
		require.True(t, ok)
		assert.Equal(t, c.ID(), got.ID())
	}
	assert.Equal(t, "be nice", open[0].InitializeResult.Instructions)
	assert.Equal(t, messages.Implementation{Name: "mcpactors-test", Version: "1.0.0"}, srv.Info())

	// A call in flight when the server closes is cancelled with its session.
	require.NoError(t, open[0].SendRequest(messages.IntID(99), messages.MethodCallTool, map[string]string{"name": "block"}))
	<-started

	require.NoError(t, srv.Close(t.Context()))

	for i, c := range append(open, fresh) {
		select {
		case <-c.Done():
		default:
			t.Fatalf("session %d is still running after Close", i)
		}
		_, ok := access.Session(srv, c.ID())
		assert.False(t, ok, "session %d is still listed", i)
	}
	assert.Zero(t, srv.OpenSessions())

	t.Run("opening a session after Close", func(t *testing.T) {
		id, err := access.Router(srv).Open(t.Context(), router.OpenOptions{})
		require.ErrorIs(t, err, router.ErrDraining)
		assert.Empty(t, id)
	})
	t.Run("ServeStdio after Close", func(t *testing.T) {
		var out bytes.Buffer
		err := srv.ServeStdio(t.Context(), strings.NewReader(""), &out)
		require.ErrorIs(t, err, router.ErrDraining)
		assert.Zero(t, out.Len())
	})
	t.Run("Close again", func(t *testing.T) {
		require.NoError(t, srv.Close(t.Context()))
	})
	// The harness closes the server once more when the test ends.
}

func TestNewSessionRacingCloseNeverOutlivesIt(t *testing.T) {
	for range 20 {
		srv := newServer(nil)
		var wg sync.WaitGroup
		refs := make([]*session.Ref, 8)
		start := make(chan struct{})
		for i := range refs {
			wg.Go(func() {
				<-start
				id, err := access.Router(srv).Open(t.Context(), router.OpenOptions{})
				if err != nil {
					if !errors.Is(err, router.ErrDraining) {
						assert.ErrorIs(t, err, mcpactors.ErrServerClosed)
					}
					return
				}
				if ref, ok := access.Session(srv, id); ok {
					refs[i] = ref
				}
			})
		}
		close(start)
		require.NoError(t, srv.Close(t.Context()))
		wg.Wait()
		for i, ref := range refs {
			if ref != nil {
				assert.True(t, ref.Closed(), "session %d was created during Close and outlived it", i)
			}
		}
		_, err := access.Router(srv).Open(t.Context(), router.OpenOptions{})
		require.ErrorIs(t, err, router.ErrDraining)
		assert.Zero(t, srv.OpenSessions())
	}
}

func TestNewSessionIDs(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		id := router.NewSessionID()
		assert.Len(t, id, 22, "128 bits of base64url without padding")
		for _, r := range id {
			assert.True(t, r > 0x20 && r < 0x7f, "%q is not visible ASCII", id)
		}
		assert.False(t, seen[id], "duplicate %q", id)
		seen[id] = true
	}
}
