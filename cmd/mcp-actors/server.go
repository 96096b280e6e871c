package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/messages"
	"github.com/mcp-actors/mcp-actors/reftools"
)

// closeTimeout bounds how long a command waits for sessions to end when it
// shuts its server down.
const closeTimeout = 5 * time.Second

// newServer returns the server every command serves: named "mcp-actors",
// with the reference set when referenceTools is set and an empty catalog
// otherwise. nodeID is the cluster node's ID ("" without one), which the
// reference set's test_hold reports.
func newServer(log *slog.Logger, referenceTools bool, nodeID string, configure ...func(*mcpactors.Options)) (*mcpactors.Server, error) {
	opts := &mcpactors.Options{Logger: log}
	for _, c := range configure {
		c(opts)
	}
	srv := mcpactors.NewServer(messages.Implementation{Name: "mcp-actors", Version: release()}, opts)
	if referenceTools {
		if err := reftools.Register(srv, reftools.WithNodeID(nodeID), reftools.WithLogger(log)); err != nil {
			return nil, fmt.Errorf("registering the reference tools: %w", err)
		}
	}
	return srv, nil
}

// closeServer ends srv's sessions, waiting at most closeTimeout.
func closeServer(log *slog.Logger, srv *mcpactors.Server) {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	if err := srv.Close(ctx); err != nil {
		log.Warn("closing the server", "err", err)
	}
}
