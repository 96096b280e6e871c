// Package peerserve runs a benchmark peer's HTTP server: the MCP handler at
// /mcp, the memory probe at /debug/mem, optionally /debug/pprof/, and a
// graceful stop on SIGINT or SIGTERM. Both peers share it, so that they
// differ only in the MCP library behind /mcp.
package peerserve

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcp-actors/mcp-actors/bench/internal/debugmem"
)

// Options say what Run serves and where.
type Options struct {
	Name  string       // peer name, for the log line
	Addr  string       // listen address, host:port
	MCP   http.Handler // served at /mcp
	Pprof bool         // also serve /debug/pprof/
}

// shutdownGrace bounds how long open requests (GET streams, mostly) may
// keep the process alive after a signal.
const shutdownGrace = 2 * time.Second

// Run serves until SIGINT or SIGTERM, then shuts down within shutdownGrace.
// It returns nil after a signal, or the error that stopped the listener.
func Run(o Options) error {
	mux := http.NewServeMux()
	mux.Handle("/mcp", o.MCP)
	mux.Handle("/debug/mem", debugmem.Handler())
	if o.Pprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	}
	srv := &http.Server{Addr: o.Addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.ListenAndServe() }()
	log.Printf("%s peer listening on http://%s/mcp pid=%d", o.Name, o.Addr, os.Getpid())

	select {
	case err := <-served:
		return fmt.Errorf("serving %s: %w", o.Addr, err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("shutting down: %w", err)
	}
	return nil
}
