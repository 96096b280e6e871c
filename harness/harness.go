package harness

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/actors/router"
	"github.com/mcp-actors/mcp-actors/internal/access"
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
	c, err := open(context.Background(), h.Server, cfg)
	if err != nil {
		h.tb.Fatalf("harness: %v", err)
	}
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

// Dial opens a session on srv and completes the handshake, as Connect
// does, outside a test (an example, a tool of your own). Close the client
// when done; closing the server is yours.
func Dial(ctx context.Context, srv *mcpactors.Server, opts ...Option) (*Client, error) {
	c, err := open(ctx, srv, newConfig(opts))
	if err != nil {
		return nil, err
	}
	if err := c.Initialize(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// open opens a session through srv's router and returns a client for it.
func open(ctx context.Context, srv *mcpactors.Server, cfg clientConfig) (*Client, error) {
	return openVia(ctx, []router.Router{access.Router(srv)}, cfg)
}

// openVia opens a session through the node cfg picks first among rts.
func openVia(ctx context.Context, rts []router.Router, cfg clientConfig) (*Client, error) {
	home := 0
	if cfg.pick != nil {
		home = cfg.pick(0, len(rts))
	}
	id, err := rts[home].Open(ctx, router.OpenOptions{Principal: cfg.principal})
	if err != nil {
		return nil, fmt.Errorf("harness: opening a session: %w", err)
	}
	c := newClient(rts, home, id, cfg)
	c.sent.Store(1) // the open went through the first pick
	return c, nil
}
