// Package interop drives the mcp-actors binary with the official MCP Go SDK
// client (github.com/modelcontextprotocol/go-sdk/mcp), the way a real
// client would: it builds ./cmd/mcp-actors once, starts
// `mcp-actors stdio --reference-tools` as a subprocess per test through
// mcp.CommandTransport, and checks every reference tool, resource and prompt
// (REFERENCE-TOOLS.md) on a session pinned to protocol 2025-11-25.
//
//	go-sdk Client ──recording transport──► CommandTransport ──stdin/stdout──► mcp-actors
//	  handlers (sampling, elicitation,        │
//	  roots, progress, logging, …)            └─ every JSON-RPC message, in wire order
//
// The recording transport keeps the messages in the order they crossed the
// pipe, because the SDK runs notification handlers on their own goroutine:
// a response can reach the caller before the handler of a notification that
// preceded it on the wire. Ordering ("progress before the result") is
// therefore checked on the wire; handlers are checked for what they saw.
//
// The SDK is a test-only dependency: only _test.go files import it. Nothing
// sleeps; every wait is bounded by a context, and the test binary checks for
// leaked goroutines. Under -race the server binary is built with -race too.
package interop
