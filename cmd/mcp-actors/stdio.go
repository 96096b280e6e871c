package main

import (
	"context"
	"log/slog"
	"os"
)

// stdioCmd serves one session over newline-delimited JSON on stdin and
// stdout, for clients that start the server as a subprocess. It ends
// cleanly at EOF on stdin and on SIGINT or SIGTERM.
type stdioCmd struct {
	ReferenceTools bool `env:"MCP_ACTORS_REFERENCE_TOOLS" help:"Serve the reference tools, resources and prompts (the conformance suite's and our own)."`
}

// Run serves until stdin ends or ctx is cancelled (by a signal); both are a
// clean exit.
func (c *stdioCmd) Run(ctx context.Context, log *slog.Logger) error {
	srv, err := newServer(log, c.ReferenceTools, "")
	if err != nil {
		return err
	}
	defer closeServer(log, srv)

	log.Info("serving one session on stdio", "version", release(), "reference_tools", c.ReferenceTools)
	err = srv.ServeStdio(ctx, os.Stdin, os.Stdout)
	if ctx.Err() != nil {
		log.Info("stopped by a signal")
		return nil
	}
	if err == nil {
		log.Info("stdin closed; session ended")
	}
	return err
}
