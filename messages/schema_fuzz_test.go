package messages_test

import (
	"bytes"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/messages"
)

// wireCase is one $defs entry of the official schema and the Go type that
// stands for it.
type wireCase struct {
	def    string
	decode func([]byte) (any, error)
}

func decodeAs[T any](b []byte) (any, error) {
	v := new(T)
	return v, json.Unmarshal(b, v)
}

// wireCases are the shapes a peer sends that the runtime decodes, and the
// results and params it writes.
var wireCases = []wireCase{
	{"InitializeRequestParams", decodeAs[messages.InitializeParams]},
	{"CallToolRequestParams", decodeAs[messages.CallToolParams]},
	{"CallToolResult", decodeAs[messages.CallToolResult]},
	{"CreateMessageRequestParams", decodeAs[messages.CreateMessageParams]},
	{"CreateMessageResult", decodeAs[messages.CreateMessageResult]},
	{"ElicitRequestParams", decodeAs[messages.ElicitParams]},
	{"ElicitResult", decodeAs[messages.ElicitResult]},
	{"ListRootsResult", decodeAs[messages.ListRootsResult]},
	{"GetPromptResult", decodeAs[messages.GetPromptResult]},
	{"ReadResourceResult", decodeAs[messages.ReadResourceResult]},
	{"ContentBlock", func(b []byte) (any, error) { return messages.UnmarshalContent(b) }},
}

// FuzzWireMatchesSchema holds the wire types to the official schema: what
// the schema accepts for a definition, the Go type decodes, and what it
// writes back the schema accepts too. Input that is not I-JSON (invalid
// UTF-8, a member named twice), which encoding/json/v2 refuses, is out of
// scope.
func FuzzWireMatchesSchema(f *testing.F) {
	for i, seed := range []string{
		`{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true},"sampling":{"tools":{}},"elicitation":{"form":{}}},"clientInfo":{"name":"c","version":"1"}}`,
		`{"name":"echo","arguments":{"text":"hi"},"_meta":{"progressToken":3}}`,
		`{"content":[{"type":"text","text":"ok"},{"type":"resource_link","uri":"file:///a","name":"a"}],"structuredContent":{"a":1},"isError":false}`,
		`{"messages":[{"role":"user","content":{"type":"text","text":"q"}}],"maxTokens":10,"temperature":0.5}`,
		`{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"tool_use","id":"1","name":"n","input":{}}],"model":"m","stopReason":"toolUse"}`,
		`{"mode":"form","message":"name?","requestedSchema":{"type":"object","properties":{"n":{"type":"string"}}}}`,
		`{"action":"accept","content":{"n":"x","k":3,"b":true,"l":["a"]}}`,
		`{"roots":[{"uri":"file:///r","name":"r"}]}`,
		`{"description":"d","messages":[{"role":"user","content":{"type":"image","data":"aGk=","mimeType":"image/png"}}]}`,
		`{"contents":[{"uri":"file:///a","blob":""},{"uri":"file:///b","text":""}]}`,
		`{"type":"resource","resource":{"uri":"file:///a","text":"t","mimeType":"text/plain"},"annotations":{"priority":1}}`,
	} {
		f.Add(uint8(i), []byte(seed))
	}
	c := officialSchema(f)
	schemas := make([]*jsonschema.Schema, len(wireCases))
	for i, wc := range wireCases {
		var err error
		schemas[i], err = c.Compile(schemaURL + "#/$defs/" + wc.def)
		require.NoError(f, err, wc.def)
	}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		i := int(which) % len(wireCases)
		wc, sch := wireCases[i], schemas[i]
		if !jsontext.Value(data).IsValid() {
			return
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil || sch.Validate(inst) != nil {
			return // not a wire value of this definition: nothing to hold
		}
		v, err := wc.decode(data)
		require.NoError(t, err, "the schema accepts %s as %s", data, wc.def)
		out, err := messages.Marshal(v)
		require.NoError(t, err)
		back, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
		require.NoError(t, err)
		require.NoError(t, sch.Validate(back), "%s: %s was written back as %s", wc.def, data, out)
	})
}
