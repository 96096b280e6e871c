package httpbench_test

import (
	"bytes"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"io"
	"net/http"
	"testing"

	"github.com/mcp-actors/mcp-actors/messages"
)

// modernMeta is the _meta a 2026-07-28 client sends with every request.
const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
	`"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},` +
	`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}`

// postModern sends one 2026-07-28 tools/call of tool with params (the
// params object's fields after name, _meta added) and returns its result.
func (n *node) postModern(b *testing.B, tool, params string) jsontext.Value {
	body := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"` + tool + `",` + params + `,` + modernMeta + `}}`
	req, _ := http.NewRequest(http.MethodPost, n.url, bytes.NewReader([]byte(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", messages.Version20260728)
	req.Header.Set("Mcp-Method", messages.MethodCallTool)
	req.Header.Set("Mcp-Name", tool)
	resp, err := n.client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("%d %s %v", resp.StatusCode, data, err)
	}
	m, derr := messages.Decode(data)
	if derr != nil || m.Error != nil {
		b.Fatalf("%s %v", data, derr)
	}
	return m.Result
}

// BenchmarkModernEchoRoundTrip is one 2026-07-28 tools/call of test_echo:
// no session, answered with JSON where it lands.
func BenchmarkModernEchoRoundTrip(b *testing.B) {
	n := startNode(b)
	want := []byte(`"text":"hello"`)
	b.ReportAllocs()
	for b.Loop() {
		if res := n.postModern(b, "test_echo", `"arguments":{"text":"hello"}`); !bytes.Contains(res, want) {
			b.Fatalf("%s", res)
		}
	}
}

// BenchmarkMRTRElicitationRoundTrip is one 2026-07-28 tools/call of
// test_elicitation: the call is answered input_required, and its retry,
// carrying the answer and the requestState, gets the result.
func BenchmarkMRTRElicitationRoundTrip(b *testing.B) {
	n := startNode(b)
	var first struct {
		ResultType    string                           `json:"resultType"`
		RequestState  string                           `json:"requestState"`
		InputRequests map[string]messages.InputRequest `json:"inputRequests"`
	}
	const args = `"arguments":{"message":"who?"}`
	answer := `{"action":"accept","content":{"username":"ada","email":"ada@example.com"}}`
	b.ReportAllocs()
	for b.Loop() {
		first.InputRequests = nil
		if err := json.Unmarshal(n.postModern(b, "test_elicitation", args), &first); err != nil || first.ResultType != "input_required" || len(first.InputRequests) != 1 {
			b.Fatalf("%+v %v", first, err)
		}
		var key string
		for k := range first.InputRequests {
			key = k
		}
		retry := args + `,"requestState":"` + first.RequestState + `","inputResponses":{"` + key + `":` + answer + `}`
		if res := n.postModern(b, "test_elicitation", retry); !bytes.Contains(res, []byte("action=accept")) {
			b.Fatalf("%s", res)
		}
	}
}
