// Package transport turns wire traffic into messages for session actors and
// their frames back into wire traffic. Transports hold no protocol state and
// no session: they reach sessions by ID through a router.Router, and
// register the streams that carry frames back with the node's
// router.Streams.
//
//	stdio:  stdin ──lines──▶ Decode ──Deliver(HandleRequest/…)──▶ Router ──▶ session actor
//	        stdout ◀──lines── lineSink ◀──StreamEvent── Streams ◀───────────────┘
//	HTTP:   net/http ──request──▶ HTTPHandler ──Deliver(HandleRequest{stream}/…)──▶ Router ──▶ session actor
//	        net/http ◀──JSON or SSE── router.Queue ◀──StreamEvent── Streams ◀──────────────────────┘
//
// The Streamable HTTP endpoint is one net/http Handler (HTTPHandler):
// what mcp-actors serve runs, and what embedders mount. docs/http.md has
// its rules and bounds.
package transport
