package interop_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"image/png"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// referenceTools are the tool names of docs/reference-tools.md.
var referenceTools = []string{
	"test_simple_text",
	"test_image_content",
	"test_audio_content",
	"test_embedded_resource",
	"test_multiple_content_types",
	"test_tool_with_logging",
	"test_tool_with_progress",
	"test_error_handling",
	"test_sampling",
	"test_elicitation",
	"test_elicitation_sep1034_defaults",
	"test_elicitation_sep1330_enums",
	"test_reconnection",
	"json_schema_2020_12_tool",
	"test_roots",
	"test_slow",
	"test_echo",
	"test_touch_watched",
	"test_toggle_tool",
	"test_counter",
	"test_counter_get",
	"test_hold",
	// The fixtures of the 2026-07-28 conformance suite (reftools/tools_modern.go).
	"test_input_required_result_elicitation",
	"test_input_required_result_sampling",
	"test_input_required_result_list_roots",
	"test_input_required_result_request_state",
	"test_input_required_result_tampered_state",
	"test_input_required_result_multiple_inputs",
	"test_input_required_result_multi_round",
	"test_input_required_result_capabilities",
	"test_missing_capability",
	"test_streaming_elicitation",
	"test_logging_tool",
	"test_trigger_tool_change",
	"test_trigger_prompt_change",
	"test_custom_headers",
}

func testInitialize(t *testing.T, start starter) {
	p := start(t, nil)

	init := p.cs.InitializeResult()
	require.NotNil(t, init)
	require.NotNil(t, init.ServerInfo)
	assert.Equal(t, "mcp-actors", init.ServerInfo.Name)
	assert.NotEmpty(t, init.ServerInfo.Version)
	assert.Equal(t, protocolVersion, init.ProtocolVersion)

	caps := init.Capabilities
	require.NotNil(t, caps)
	if assert.NotNil(t, caps.Tools, "tools capability") {
		assert.True(t, caps.Tools.ListChanged, "tools.listChanged")
	}
	if assert.NotNil(t, caps.Resources, "resources capability") {
		assert.True(t, caps.Resources.Subscribe, "resources.subscribe")
	}
	assert.NotNil(t, caps.Prompts, "prompts capability")
	assert.NotNil(t, caps.Logging, "logging capability")
	assert.NotNil(t, caps.Completions, "completions capability")

	// The SDK really asked for 2025-11-25 (no server/discover first) and
	// completed the handshake.
	msgs := p.wire.snapshot()
	require.GreaterOrEqual(t, len(msgs), 3)
	first := msgs[0].request("initialize")
	require.NotNil(t, first, "first message: %s", msgs[0].raw)
	var params struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	require.NoError(t, json.Unmarshal(first.Params, &params))
	assert.Equal(t, protocolVersion, params.ProtocolVersion)
	assert.NotNil(t, msgs[2].request("notifications/initialized"), "third message: %s", msgs[2].raw)

	ctx, cancel := p.wait()
	defer cancel()
	require.NoError(t, p.cs.Ping(ctx, nil))
	assertEmptyResult(t, p, "ping")
}

func testToolsList(t *testing.T, start starter) {
	p := start(t, nil)
	ctx, cancel := p.wait()
	defer cancel()

	res, err := p.cs.ListTools(ctx, nil)
	require.NoError(t, err)
	assert.Empty(t, res.NextCursor)
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		assert.NotEmpty(t, tool.Description, "description of %s", tool.Name)
		if assert.NotNil(t, tool.InputSchema, "inputSchema of %s", tool.Name) {
			var schema struct {
				Type string `json:"type"`
			}
			raw, err := json.Marshal(tool.InputSchema)
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(raw, &schema))
			assert.Equal(t, "object", schema.Type, "inputSchema type of %s", tool.Name)
		}
	}
	for _, name := range referenceTools {
		assert.Contains(t, names, name)
	}
	assert.NotContains(t, names, "test_dynamic", "test_dynamic exists only after test_toggle_tool")

	// json_schema_2020_12_tool's inputSchema reaches the client as declared,
	// byte for byte apart from key order.
	var listed struct {
		Tools []struct {
			Name        string         `json:"name"`
			InputSchema jsontext.Value `json:"inputSchema"`
		} `json:"tools"`
	}
	reply := p.wire.lastReply("tools/list")
	require.NotNil(t, reply, "no response to tools/list on the wire")
	require.NoError(t, json.Unmarshal(reply.Result, &listed))
	found := false
	for _, tool := range listed.Tools {
		if tool.Name == "json_schema_2020_12_tool" {
			found = true
			assert.JSONEq(t, `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",`+
				`"$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},`+
				`"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},`+
				`"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],`+
				`"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},"then":{"required":["phone"]},"else":{"required":["email"]},`+
				`"additionalProperties":false}`, string(tool.InputSchema), "inputSchema of json_schema_2020_12_tool")
		}
	}
	assert.True(t, found, "json_schema_2020_12_tool on the wire")

	again, err := p.cs.ListTools(ctx, nil)
	require.NoError(t, err)
	var againNames []string
	for _, tool := range again.Tools {
		againNames = append(againNames, tool.Name)
	}
	assert.Equal(t, names, againNames, "tools/list order must not change between calls")
}

func testToolContent(t *testing.T, start starter) {
	p := start(t, nil)

	res := p.call("test_simple_text", nil)
	assert.False(t, res.IsError)
	assert.Equal(t, "This is a simple text response for testing.", textOf(t, res))

	res = p.call("test_image_content", nil)
	assert.False(t, res.IsError)
	if assert.Len(t, res.Content, 1) {
		assertPNG(t, res.Content[0])
	}

	res = p.call("test_audio_content", nil)
	assert.False(t, res.IsError)
	if assert.Len(t, res.Content, 1) {
		audio, ok := res.Content[0].(*mcp.AudioContent)
		if assert.True(t, ok, "content is %T, want audio", res.Content[0]) {
			assert.Equal(t, "audio/wav", audio.MIMEType)
			assertWAV(t, audio.Data)
		}
	}

	res = p.call("test_embedded_resource", nil)
	assert.False(t, res.IsError)
	if assert.Len(t, res.Content, 1) {
		assertEmbedded(t, res.Content[0], "test://embedded-resource", "text/plain", "This is an embedded resource content.")
	}

	res = p.call("test_multiple_content_types", nil)
	assert.False(t, res.IsError)
	if assert.Len(t, res.Content, 3) {
		text, ok := res.Content[0].(*mcp.TextContent)
		if assert.True(t, ok, "content[0] is %T, want text", res.Content[0]) {
			assert.Equal(t, "Multiple content types test:", text.Text)
		}
		assertPNG(t, res.Content[1])
		if r := assertEmbedded(t, res.Content[2], "test://mixed-content-resource", "application/json", ""); r != nil {
			assert.JSONEq(t, `{"test":"data","value":123}`, r.Text)
		}
	}

	// A tool's own failure is a result, not a JSON-RPC error.
	res = p.call("test_error_handling", nil)
	assert.True(t, res.IsError)
	assert.Equal(t, "This tool intentionally returns an error for testing", textOf(t, res))

	res = p.call("json_schema_2020_12_tool", map[string]any{"name": "Ada", "email": "ada@example.com", "address": map[string]any{"street": "1 Loop", "city": "Localhost"}})
	assert.False(t, res.IsError)
	text := textOf(t, res)
	const prefix = "JSON Schema 2020-12 tool called with: "
	if assert.True(t, strings.HasPrefix(text, prefix), "text %q", text) {
		assert.JSONEq(t, `{"name":"Ada","email":"ada@example.com","address":{"street":"1 Loop","city":"Localhost"}}`, strings.TrimPrefix(text, prefix))
	}

	// On stdio there is no stream to close; over HTTP the SDK gets the
	// result by reconnecting (TestHTTPReconnection looks at the wire).
	res = p.call("test_reconnection", nil)
	assert.False(t, res.IsError)
	assert.Equal(t, "Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure.", textOf(t, res))

	const echo = "héllo \"wörld\"\n\t<&> 🦀 \\u0000"
	res = p.call("test_echo", map[string]any{"text": echo})
	assert.False(t, res.IsError)
	assert.Equal(t, echo, textOf(t, res))
}

// textOf returns the text of a result made of one text block.
func textOf(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	require.Len(t, res.Content, 1, "content of %+v", res)
	text, ok := res.Content[0].(*mcp.TextContent)
	require.True(t, ok, "content is %T, want text", res.Content[0])
	return text.Text
}

// assertPNG checks that c is an image/png block whose data (base64 on the
// wire, decoded by the SDK) is a PNG image.
func assertPNG(t *testing.T, c mcp.Content) {
	t.Helper()
	img, ok := c.(*mcp.ImageContent)
	if !assert.True(t, ok, "content is %T, want image", c) {
		return
	}
	assert.Equal(t, "image/png", img.MIMEType)
	_, err := png.Decode(bytes.NewReader(img.Data))
	assert.NoError(t, err, "decoding the image as PNG")
}

// assertWAV checks that data is a RIFF/WAVE file whose RIFF size matches.
func assertWAV(t *testing.T, data []byte) {
	t.Helper()
	if !assert.GreaterOrEqual(t, len(data), 12, "WAV header") {
		return
	}
	assert.Equal(t, "RIFF", string(data[0:4]))
	assert.Equal(t, uint32(len(data)-8), binary.LittleEndian.Uint32(data[4:8]), "RIFF chunk size")
	assert.Equal(t, "WAVE", string(data[8:12]))
}

// assertEmbedded checks that c embeds a text resource with uri and mimeType
// (and text, unless empty) and returns it.
func assertEmbedded(t *testing.T, c mcp.Content, uri, mimeType, text string) *mcp.ResourceContents {
	t.Helper()
	e, ok := c.(*mcp.EmbeddedResource)
	if !assert.True(t, ok, "content is %T, want resource", c) || !assert.NotNil(t, e.Resource) {
		return nil
	}
	assert.Equal(t, uri, e.Resource.URI)
	assert.Equal(t, mimeType, e.Resource.MIMEType)
	if text != "" {
		assert.Equal(t, text, e.Resource.Text)
	}
	return e.Resource
}

// assertEmptyResult checks that the server answered the last method request
// with exactly {} (clients parse these results strictly).
func assertEmptyResult(t *testing.T, p *peer, method string) {
	t.Helper()
	r := p.wire.lastReply(method)
	if assert.NotNil(t, r, "no response to %s on the wire", method) {
		assert.Nil(t, r.Error)
		assert.Equal(t, "{}", string(r.Result), "result of %s", method)
	}
}
