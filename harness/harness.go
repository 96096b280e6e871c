package harness

import (
	"context"
	"errors"
	"testing"
	"time"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/actors/router"
	"github.com/mcp-actors/mcp-actors/messages"
)

// ErrClosed is returned by waits on a client whose session has ended.
var ErrClosed = errors.New("harness: client closed")

// DefaultTimeout bounds every wait that has no deadline of its own.
const DefaultTimeout = 10 * time.Second

// Harness runs one server for a test.
type Harness struct {
	tb     testing.TB
	Server *mcpactors.Server
}

// New returns a harness for srv (a new empty server when nil). The server is
// closed when the test ends.
func New(tb testing.TB, srv *mcpactors.Server) *Harness {
	tb.Helper()
	if srv == nil {
		srv = mcpactors.NewServer(messages.Implementation{Name: "harness", Version: "0.0.0"}, nil)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), DefaultTimeout)
		defer cancel()
		if err := srv.Close(ctx); err != nil {
			tb.Errorf("harness: closing the server: %v", err)
		}
	})
	return &Harness{tb: tb, Server: srv}
}

// Open spawns a session and returns a client for it without sending
// anything: the test speaks initialize itself.
func (h *Harness) Open(opts ...Option) *Client {
	h.tb.Helper()
	cfg := newConfig(opts)
	rt := h.Server.Router()
	id, err := rt.Open(context.Background(), router.OpenOptions{Principal: cfg.principal})
	if err != nil {
		h.tb.Fatalf("harness: opening a session: %v", err)
	}
	c := newClient(rt, id, cfg)
	h.tb.Cleanup(c.Close)
	return c
}

// Connect opens a session and completes the handshake: initialize with the
// configured version, capabilities and client info, then
// notifications/initialized.
func (h *Harness) Connect(opts ...Option) *Client {
	h.tb.Helper()
	c := h.Open(opts...)
	if err := c.Initialize(context.Background()); err != nil {
		h.tb.Fatalf("harness: %v", err)
	}
	return c
}
