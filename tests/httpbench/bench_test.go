package httpbench_test

import (
	"bytes"
	"fmt"
	"net/http"
	"testing"

	"github.com/mcp-actors/mcp-actors/messages"
)

// BenchmarkEchoRoundTrip is one tools/call of test_echo: a POST answered
// with JSON.
func BenchmarkEchoRoundTrip(b *testing.B) {
	n := startNode(b)
	sid, err := n.connect()
	if err != nil {
		b.Fatal(err)
	}
	call := []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_echo","arguments":{"text":"hello"}}}`)
	want := []byte(`"text":"hello"`)
	b.ReportAllocs()
	for b.Loop() {
		status, _, body, err := n.post(sid, call)
		if err != nil || status != http.StatusOK || !bytes.Contains(body, want) {
			b.Fatalf("%d %s %v", status, body, err)
		}
	}
}

// BenchmarkElicitationRoundTrip is one tools/call of test_elicitation: the
// POST turns into an SSE stream carrying elicitation/create, the client
// answers with a second POST, and the result ends the stream.
func BenchmarkElicitationRoundTrip(b *testing.B) {
	n := startNode(b)
	sid, err := n.connect()
	if err != nil {
		b.Fatal(err)
	}
	call := []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_elicitation","arguments":{"message":"who?"}}}`)
	answer := func(m *messages.Message) error {
		resp := mustJSON(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{
			"action": "accept", "content": map[string]string{"username": "ada", "email": "ada@example.com"}}})
		status, _, body, err := n.post(sid, resp)
		if err != nil || status != http.StatusAccepted {
			return fmt.Errorf("answer: %d %s %v", status, body, err)
		}
		return nil
	}
	b.ReportAllocs()
	for b.Loop() {
		req, _ := http.NewRequest(http.MethodPost, n.url, bytes.NewReader(call))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid)
		resp, err := n.client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		m, err := sseEvents(resp.Body, answer)
		resp.Body.Close()
		if err != nil || m.Error != nil || !bytes.Contains(m.Result, []byte("action=accept")) {
			b.Fatalf("%v %+v", err, m)
		}
	}
}

// BenchmarkSessionSetup is initialize, notifications/initialized and
// DELETE.
func BenchmarkSessionSetup(b *testing.B) {
	n := startNode(b)
	b.ReportAllocs()
	for b.Loop() {
		sid, err := n.connect()
		if err != nil {
			b.Fatal(err)
		}
		if err := n.remove(sid); err != nil {
			b.Fatal(err)
		}
	}
}
