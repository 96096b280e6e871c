// Command gosdk is the benchmark peer built on the official
// github.com/modelcontextprotocol/go-sdk server. It serves Streamable HTTP
// with stateful sessions (mcp.NewStreamableHTTPHandler, default options) at
// http://ADDR/mcp, with the reference tools test_echo, test_elicitation,
// test_sampling, test_roots and test_slow (tools.go). It behaves like
// peers/mcpgo and like our server's --reference-tools.
//
//	gosdk -addr 127.0.0.1:18100 [-pprof]
package main

import (
	"flag"
	"log"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-actors/mcp-actors/bench/internal/peerserve"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18081", "listen address (loopback only)")
	prof := flag.Bool("pprof", false, "also serve /debug/pprof/ (for profiling runs only)")
	flag.Parse()

	s := newServer()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	if err := peerserve.Run(peerserve.Options{Name: "gosdk", Addr: *addr, MCP: h, Pprof: *prof}); err != nil {
		log.Fatal(err)
	}
}
