package session

import (
	"encoding/json/jsontext"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/mcp-actors/mcp-actors/messages"
)

// resultModern is a Modern with what encodeResult reads.
func resultModern() *Modern {
	return &Modern{cfg: &Config{ServerInfo: messages.Implementation{Name: "srv", Version: "1"}}, opts: ModernOptions{ListTTL: time.Minute}}
}

// TestModernResultFields: every modern result carries resultType and the
// server's identity in _meta, in front of the handler's own members; a
// list its caching hints, a read ttlMs 0 and cacheScope private; a _meta
// of the handler's own is merged with the server's.
func TestModernResultFields(t *testing.T) {
	m := resultModern()
	id := messages.IntID(7)
	for _, c := range []struct {
		name, method string
		res          any
		want         string
	}{
		{"a tool's result", messages.MethodCallTool, jsontext.Value(`{"content":[]}`),
			`{"jsonrpc":"2.0","id":7,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"srv","version":"1"}},"content":[]}}`},
		{"an empty result", messages.MethodPing, jsontext.Value(`{}`),
			`{"jsonrpc":"2.0","id":7,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"srv","version":"1"}}}}`},
		{"a list", messages.MethodListTools, &messages.ListToolsResult{Tools: []*messages.Tool{}},
			`{"jsonrpc":"2.0","id":7,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"srv","version":"1"}},"ttlMs":60000,"cacheScope":"public","tools":[]}}`},
		{"a read", messages.MethodReadResource, jsontext.Value(`{"contents":[]}`),
			`{"jsonrpc":"2.0","id":7,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"srv","version":"1"}},"ttlMs":0,"cacheScope":"private","contents":[]}}`},
		{"a _meta of its own", messages.MethodCallTool, jsontext.Value(`{"content":[],"_meta":{"mine":1}}`),
			`{"jsonrpc":"2.0","id":7,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"srv","version":"1"},"mine":1},"content":[],"resultType":"complete"}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.JSONEq(t, c.want, string(m.encodeResult(c.method, id, c.res, nil)))
		})
	}
}

// BenchmarkModernEncodeResult is the encoding of a tool's small result,
// on every modern answer.
func BenchmarkModernEncodeResult(b *testing.B) {
	m := resultModern()
	res := &messages.CallToolResult{Content: messages.ContentList{&messages.TextContent{Text: "hello"}}}
	b.ReportAllocs()
	for b.Loop() {
		m.encodeResult(messages.MethodCallTool, messages.IntID(1), res, nil)
	}
}
