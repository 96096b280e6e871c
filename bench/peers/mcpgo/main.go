// Command mcpgo is the benchmark peer built on github.com/mark3labs/mcp-go.
// It serves Streamable HTTP (server.NewStreamableHTTPServer, default options,
// logger at warn) at http://ADDR/mcp, with the reference tools test_echo,
// test_elicitation, test_sampling, test_roots and test_slow (tools.go). It
// behaves like peers/gosdk and like our server's --reference-tools.
//
//	mcpgo -addr 127.0.0.1:18101 [-pprof]
package main

import (
	"flag"
	"log"
	"log/slog"
	"os"

	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-actors/mcp-actors/bench/internal/peerserve"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18082", "listen address (loopback only)")
	prof := flag.Bool("pprof", false, "also serve /debug/pprof/ (for profiling runs only)")
	flag.Parse()

	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	h := server.NewStreamableHTTPServer(newServer(), server.WithStreamableHTTPLogger(quiet))
	if err := peerserve.Run(peerserve.Options{Name: "mcpgo", Addr: *addr, MCP: h, Pprof: *prof}); err != nil {
		log.Fatal(err)
	}
}
