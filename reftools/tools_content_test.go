package reftools_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"image/png"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/messages"
)

const noArgsSchema = `{"type":"object","properties":{}}`

// The input schema of json_schema_2020_12_tool, as it must appear in
// tools/list.
const jsonSchema2020 = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},"then":{"required":["phone"]},"else":{"required":["email"]},"additionalProperties":false}`

type listedTool struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	InputSchema jsontext.Value `json:"inputSchema"`
}

func listTools(t *testing.T, c interface {
	Call(context.Context, string, any) (*messages.Message, error)
}) []listedTool {
	t.Helper()
	m, err := c.Call(context.Background(), messages.MethodListTools, nil)
	require.NoError(t, err)
	require.Nil(t, m.Error)
	var res struct {
		Tools      []listedTool `json:"tools"`
		NextCursor string       `json:"nextCursor"`
	}
	require.NoError(t, json.Unmarshal(m.Result, &res))
	require.Empty(t, res.NextCursor)
	return res.Tools
}

func TestToolsList(t *testing.T) {
	c := newHarness(t).Connect()
	tools := listTools(t, c)

	noArgs := []string{
		"test_simple_text", "test_image_content", "test_audio_content", "test_embedded_resource",
		"test_multiple_content_types", "test_tool_with_logging", "test_tool_with_progress",
		"test_error_handling", "test_elicitation_sep1034_defaults", "test_elicitation_sep1330_enums",
		"test_reconnection", "test_roots", "test_touch_watched", "test_toggle_tool", "test_counter",
		"test_counter_get",
		// The fixtures of the 2026-07-28 suite (tools_modern.go).
		"test_input_required_result_elicitation", "test_input_required_result_sampling",
		"test_input_required_result_list_roots", "test_input_required_result_request_state",
		"test_input_required_result_tampered_state", "test_input_required_result_multiple_inputs",
		"test_input_required_result_multi_round", "test_input_required_result_capabilities",
		"test_missing_capability", "test_streaming_elicitation", "test_logging_tool",
		"test_trigger_tool_change", "test_trigger_prompt_change",
	}
	withArgs := map[string]string{
		"test_sampling":            `{"type":"object","properties":{"prompt":{"type":"string","description":"The prompt to send to the LLM"}},"required":["prompt"]}`,
		"test_elicitation":         `{"type":"object","properties":{"message":{"type":"string","description":"The message to show the user"}},"required":["message"]}`,
		"test_echo":                `{"type":"object","properties":{"text":{"type":"string","description":"The text to return unchanged"}},"required":["text"]}`,
		"json_schema_2020_12_tool": jsonSchema2020,
		"test_slow":                "",
		"test_hold":                `{"type":"object","properties":{"seconds":{"type":"number","minimum":0,"maximum":3600,"default":2,"description":"How long to hold, from 0 to 3600; a cancellation ends the hold sooner"}}}`,
		"test_custom_headers":      "",
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
		assert.NotEmpty(t, tl.Description, tl.Name)
	}
	want := append([]string{}, noArgs...)
	for n := range withArgs {
		want = append(want, n)
	}
	assert.ElementsMatch(t, want, names)

	byName := map[string]listedTool{}
	for _, tl := range tools {
		byName[tl.Name] = tl
	}
	for _, n := range noArgs {
		assert.Equal(t, noArgsSchema, string(byName[n].InputSchema), n)
	}
	for n, schema := range withArgs {
		if schema != "" {
			assert.Equal(t, schema, string(byName[n].InputSchema), n) // byte for byte
		}
	}
	var slow struct {
		Type       string `json:"type"`
		Properties map[string]struct {
			Type    string   `json:"type"`
			Default *float64 `json:"default"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	require.NoError(t, json.Unmarshal(byName["test_slow"].InputSchema, &slow))
	assert.Equal(t, "object", slow.Type)
	assert.Equal(t, "number", slow.Properties["seconds"].Type)
	require.NotNil(t, slow.Properties["seconds"].Default)
	assert.Equal(t, 5.0, *slow.Properties["seconds"].Default)
	assert.Equal(t, "integer", slow.Properties["steps"].Type)
	assert.Empty(t, slow.Required)

	assert.Equal(t, tools, listTools(t, c), "tools/list must be stable")
}

func TestTextTools(t *testing.T) {
	c := newHarness(t).Connect()
	tests := []struct {
		tool string
		args any
		want string
	}{
		{"test_simple_text", nil, "This is a simple text response for testing."},
		{"test_simple_text", map[string]any{}, "This is a simple text response for testing."},
		{"test_echo", map[string]any{"text": "hello, wörld \u2603 \"quoted\""}, "hello, wörld \u2603 \"quoted\""},
		{"test_echo", map[string]any{"text": ""}, ""},
		{"test_reconnection", nil, "Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure."},
		{"json_schema_2020_12_tool", map[string]any{"name": "Ann", "email": "ann@example.com", "address": map[string]any{"street": "1 Main St", "city": "Paris"}},
			`JSON Schema 2020-12 tool called with: {"address":{"city":"Paris","street":"1 Main St"},"email":"ann@example.com","name":"Ann"}`},
		{"json_schema_2020_12_tool", map[string]any{"contactMethod": "phone", "phone": "1"}, `JSON Schema 2020-12 tool called with: {"contactMethod":"phone","phone":"1"}`},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			assert.Equal(t, tt.want, callText(t, c, tt.tool, tt.args))
		})
	}
}

func TestInvalidArguments(t *testing.T) {
	c := newHarness(t).Connect()
	for _, tt := range []struct {
		tool string
		args any
	}{
		{"json_schema_2020_12_tool", map[string]any{"nickname": "x"}},                        // additionalProperties: false
		{"json_schema_2020_12_tool", map[string]any{"address": map[string]any{"city": 7}}},   // $ref followed
		{"json_schema_2020_12_tool", map[string]any{"email": "e", "contactMethod": "phone"}}, // if/then: a phone is required
		{"json_schema_2020_12_tool", map[string]any{"name": "no way to reach"}},              // allOf/anyOf: phone or email
		{"test_echo", map[string]any{}},
		{"test_sampling", map[string]any{"prompt": 1}},
	} {
		res := call(t, c, tt.tool, tt.args)
		assert.True(t, res.IsError, "%s %v", tt.tool, tt.args)
	}
}

func TestErrorHandling(t *testing.T) {
	c := newHarness(t).Connect()
	res := call(t, c, "test_error_handling", nil)
	assert.True(t, res.IsError)
	require.Len(t, res.Content, 1)
	assert.Equal(t, "text", res.Content[0].Type)
	assert.Equal(t, "This tool intentionally returns an error for testing", res.Content[0].Text)
}

func TestUnknownTool(t *testing.T) {
	c := newHarness(t).Connect()
	err := c.CallResult(context.Background(), messages.MethodCallTool, callParams("no_such_tool", nil, nil), nil)
	require.ErrorIs(t, err, messages.ErrInvalidParams)
}

func TestImageContent(t *testing.T) {
	c := newHarness(t).Connect()
	res := call(t, c, "test_image_content", map[string]any{})
	require.False(t, res.IsError)
	require.Len(t, res.Content, 1)
	assert.Equal(t, "image", res.Content[0].Type)
	assert.Equal(t, "image/png", res.Content[0].MIMEType)
	requirePNG(t, res.Content[0].Data)
}

func TestAudioContent(t *testing.T) {
	c := newHarness(t).Connect()
	res := call(t, c, "test_audio_content", map[string]any{})
	require.False(t, res.IsError)
	require.Len(t, res.Content, 1)
	assert.Equal(t, "audio", res.Content[0].Type)
	assert.Equal(t, "audio/wav", res.Content[0].MIMEType)
	requireWAV(t, res.Content[0].Data)
}

func TestEmbeddedResource(t *testing.T) {
	c := newHarness(t).Connect()
	res := call(t, c, "test_embedded_resource", nil)
	require.False(t, res.IsError)
	require.Len(t, res.Content, 1)
	assert.Equal(t, "resource", res.Content[0].Type)
	r := res.Content[0].Resource
	require.NotNil(t, r)
	assert.Equal(t, "test://embedded-resource", r.URI)
	assert.Equal(t, "text/plain", r.MIMEType)
	assert.Equal(t, "This is an embedded resource content.", r.Text)
}

func TestMultipleContentTypes(t *testing.T) {
	c := newHarness(t).Connect()
	res := call(t, c, "test_multiple_content_types", nil)
	require.False(t, res.IsError)
	require.Len(t, res.Content, 3)

	assert.Equal(t, "text", res.Content[0].Type)
	assert.Equal(t, "Multiple content types test:", res.Content[0].Text)

	assert.Equal(t, "image", res.Content[1].Type)
	assert.Equal(t, "image/png", res.Content[1].MIMEType)
	requirePNG(t, res.Content[1].Data)

	assert.Equal(t, "resource", res.Content[2].Type)
	r := res.Content[2].Resource
	require.NotNil(t, r)
	assert.Equal(t, "test://mixed-content-resource", r.URI)
	assert.Equal(t, "application/json", r.MIMEType)
	assert.Equal(t, `{"test":"data","value":123}`, r.Text)
}

// requirePNG checks that b64 is standard base64 of a PNG that decodes.
func requirePNG(t *testing.T, b64 string) {
	t.Helper()
	data, err := base64.StdEncoding.Strict().DecodeString(b64)
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")), "PNG signature")
	img, err := png.Decode(bytes.NewReader(data))
	require.NoError(t, err)
	assert.Equal(t, 1, img.Bounds().Dx())
	assert.Equal(t, 1, img.Bounds().Dy())
}

// requireWAV checks that b64 is standard base64 of a RIFF/WAVE file whose
// chunk sizes add up.
func requireWAV(t *testing.T, b64 string) {
	t.Helper()
	data, err := base64.StdEncoding.Strict().DecodeString(b64)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(data), 44)
	assert.Equal(t, "RIFF", string(data[0:4]))
	assert.Equal(t, uint32(len(data)-8), binary.LittleEndian.Uint32(data[4:8]), "RIFF size")
	assert.Equal(t, "WAVE", string(data[8:12]))
	assert.Equal(t, "fmt ", string(data[12:16]))
	assert.Equal(t, uint32(16), binary.LittleEndian.Uint32(data[16:20]))
	assert.Equal(t, uint16(1), binary.LittleEndian.Uint16(data[20:22]), "PCM")
	channels := binary.LittleEndian.Uint16(data[22:24])
	rate := binary.LittleEndian.Uint32(data[24:28])
	byteRate := binary.LittleEndian.Uint32(data[28:32])
	align := binary.LittleEndian.Uint16(data[32:34])
	bits := binary.LittleEndian.Uint16(data[34:36])
	assert.Equal(t, uint32(channels)*uint32(bits/8), uint32(align))
	assert.Equal(t, rate*uint32(align), byteRate)
	assert.Equal(t, "data", string(data[36:40]))
	size := binary.LittleEndian.Uint32(data[40:44])
	assert.Equal(t, uint32(len(data)-44), size, "data size")
	assert.Zero(t, size%uint32(align))
}
