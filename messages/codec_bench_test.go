package messages_test

import (
	"testing"

	"github.com/mcp-actors/mcp-actors/messages"
)

// BenchmarkEncodeDecodeHandleRequest is one routed client request: the
// sending node encodes it, the owner decodes it.
func BenchmarkEncodeDecodeHandleRequest(b *testing.B) {
	in := &messages.HandleRequest{
		Principal: "alice",
		Msg: wire(b, `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"search",`+
			`"arguments":{"query":"actors on a cluster","limit":10,"tags":["nats","mcp"]},"_meta":{"progressToken":"p-42"}}}`),
		Stream: messages.StreamID{Node: "node-1", N: 1234},
	}
	b.ReportAllocs()
	var size int
	for b.Loop() {
		data, err := messages.EncodeActorMessage(in)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := messages.DecodeActorMessage(data); err != nil {
			b.Fatal(err)
		}
		size = len(data)
	}
	b.ReportMetric(float64(size), "bytes/msg")
}

// BenchmarkEncodeDecodeStreamEvent is one frame on its way back to the
// node that holds the client's stream: the response to a tool call.
func BenchmarkEncodeDecodeStreamEvent(b *testing.B) {
	ev := messages.StreamEvent{Stream: messages.StreamID{Node: "node-1", N: 1234}, Frame: messages.Frame{
		EventID: "17-3",
		Data: []byte(`{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"found 3 results: ` +
			`actors, clusters and routed requests <with> & without \u00e9"}],"structuredContent":{"hits":3},"isError":false}}`),
		End: true,
	}}
	b.ReportAllocs()
	var size int
	for b.Loop() {
		data, err := messages.EncodeStreamEvent(ev)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := messages.DecodeStreamEvent(data); err != nil {
			b.Fatal(err)
		}
		size = len(data)
	}
	b.ReportMetric(float64(size), "bytes/msg")
}
