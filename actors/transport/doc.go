// Package transport turns wire traffic into messages for session actors and
// their frames back into wire traffic. Transports hold no protocol state:
// what a session knows lives in its actor.
//
//	stdio:  stdin ──lines──▶ Decode ──HandleRequest/…──▶ session actor
//	        stdout ◀──lines── lineSink ◀──frames───────── session actor
//	HTTP:   connection ──request──▶ endpoint (exchange) ──HandleRequest/…──▶ session actor
//	        connection ◀──JSON or SSE── httpSink, directStream, connStream ◀──frames── session actor
//
// The Streamable HTTP endpoint (http_endpoint*.go) is written once against
// exchange and served by LoopServer (its own epoll event loop and HTTP/1.x
// parser; what mcp-actors serve runs), FastServer (fasthttp) or
// HTTPHandler (net/http). docs/http.md has the rules and bounds.
package transport
