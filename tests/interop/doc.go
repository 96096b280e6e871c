// Package interop drives the mcp-actors binary with the official MCP SDK
// clients, the way real clients would. It builds ./cmd/mcp-actors once and
// checks every reference tool, resource and prompt (docs/reference-tools.md) on
// sessions pinned to protocol 2025-11-25:
//
//   - TestReferenceTools: the Go SDK client (github.com/modelcontextprotocol/
//     go-sdk/mcp) runs `mcp-actors stdio --reference-tools` per subtest
//     through mcp.CommandTransport.
//   - TestHTTPReferenceTools: the same cases over Streamable HTTP, against
//     `mcp-actors serve --listen 127.0.0.1:0 --reference-tools` per subtest,
//     through mcp.StreamableClientTransport; TestHTTPResumption and
//     TestHTTPReconnection drop or end a call's SSE stream and check that
//     the SDK resumes it with GET and Last-Event-ID.
//   - TestTypeScriptClient: ts/client.mjs, the official TypeScript SDK
//     client (pinned in conformance/package.json), run with the Node in
//     conformance/node_modules against a fresh `serve`.
//
// The Go tests record the wire on the client side:
//
//	go-sdk Client ──recording──► CommandTransport ──stdin/stdout──► mcp-actors stdio
//	go-sdk Client ──► StreamableClientTransport ──recording http.Client──► mcp-actors serve
//	  handlers (sampling, elicitation,    │
//	  roots, progress, logging, …)        └─ every JSON-RPC message, in wire order
//
// The recording keeps the messages in the order they crossed the wire
// (over HTTP, as the SDK read them from each response), because the SDK
// runs notification handlers on their own goroutine: a response can reach
// the caller before the handler of a notification that preceded it on the
// wire. Ordering ("progress before the result") is therefore checked on the
// wire; handlers are checked for what they saw.
//
// At the end of a session the client closes it: on stdio the server must
// then exit with status 0 on its own; over HTTP the SDK sends DELETE, the
// server must answer 204 and go on serving new sessions, and at teardown it
// gets SIGTERM and must exit with status 0 within 15 s.
//
// The SDK is a test-only dependency: only _test.go files import it. Nothing
// sleeps; every wait is bounded by a context, and the test binary checks for
// leaked goroutines. Under -race the server binary is built with -race too.
package interop
