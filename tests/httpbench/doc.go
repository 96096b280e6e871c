// Package httpbench measures mcp-actors over Streamable HTTP on loopback:
// an echo round trip, an elicitation round trip and session setup, each
// with a lean raw HTTP client so that the figures are dominated by the
// server. Run with:
//
//	go test -run XXX -bench . -benchmem ./tests/httpbench/
package httpbench
