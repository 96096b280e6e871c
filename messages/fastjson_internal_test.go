package messages

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stdString is encoding/json's encoding of s without HTML escaping.
func stdString(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return string(bytes.TrimRight(buf.Bytes(), "\n"))
}

func FuzzAppendStringMatchesEncodingJSON(f *testing.F) {
	for _, s := range []string{"", "plain", `q"b\s`, "\n\r\t\b\f\x00\x1f\x7f", "é€😀", "\u2028\u2029", "\xff\xfe", "a\xc3", "<&>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		assert.Equal(t, stdString(s), string(appendString(nil, s)))
	})
}

func TestCallToolResultEncodingMatchesEncodingJSON(t *testing.T) {
	prio := 0.5
	for _, r := range []*CallToolResult{
		{},
		{Content: ContentList{&TextContent{Text: "hi \"there\"\n"}}},
		{Content: ContentList{&TextContent{Text: "a"}, &ImageContent{Data: []byte{1, 2}, MIMEType: "image/png"}}, IsError: true},
		{Content: ContentList{&TextContent{Text: "x", Annotations: &Annotations{Priority: &prio}}}, StructuredContent: json.RawMessage(`{ "a" : [1, 2] }`)},
		{Content: ContentList{&TextContent{Text: "m", Meta: Meta{"k": json.RawMessage(`1`)}}}, Meta: Meta{"z": json.RawMessage(`"q"`)}},
	} {
		fast, err := Marshal(r)
		require.NoError(t, err)
		type plain CallToolResult // no appendJSON: the reflection path
		want, err := json.Marshal((*plain)(r))
		require.NoError(t, err)
		assert.JSONEq(t, string(want), string(fast))
		assert.True(t, json.Valid(fast))
		var back CallToolResult
		require.NoError(t, json.Unmarshal(fast, &back))

		resp, err := EncodeResult(IntID(7), r)
		require.NoError(t, err)
		assert.JSONEq(t, `{"jsonrpc":"2.0","id":7,"result":`+string(want)+`}`, string(resp))
	}
	var nilResult *CallToolResult
	b, err := Marshal(nilResult)
	require.NoError(t, err)
	assert.Equal(t, "null", string(b))
}

func FuzzDecodeCallToolParamsMatchesDecodeParams(f *testing.F) {
	for _, s := range []string{
		`{"name":"t","arguments":{"a":1}}`, `{"name":"t"}`, `{"arguments":{}}`, `{"name":5}`, `{"name":"\u0074"}`,
		`{"name":"t","_meta":{"progressToken":7}}`, `{"name":"t","task":{"ttl":5}}`, `{"name":null}`, `[]`, `{"n\u0061me":"x"}`,
		`{"name":"t","_meta":5}`, `{"name":"t","arguments":[1]}`, `{"name":"t","name":"u"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return
		}
		var want CallToolParams
		werr := DecodeParams(raw, &want)
		got, gerr := DecodeCallToolParams(raw)
		if werr != nil {
			require.NotNil(t, gerr, "%s", raw)
			return
		}
		require.Nil(t, gerr, "%s", raw)
		assert.Equal(t, want.Name, got.Name)
		assert.Equal(t, string(want.Arguments), string(got.Arguments))
		assert.Equal(t, want.Meta, got.Meta)
		assert.Equal(t, want.Task, got.Task)
	})
}

func TestElicitParamsEncodingMatchesEncodingJSON(t *testing.T) {
	ttl := int64(5)
	for _, p := range []*ElicitParams{
		{Message: "who?"},
		{Mode: "form", Message: "n\"ame", RequestedSchema: json.RawMessage(`{"type": "object", "properties": {}}`)},
		{Mode: "url", Message: "go", URL: "https://e.example/x?a=1&b=<2>", ElicitationID: "e1"},
		{Message: "t", Task: &TaskMetadata{TTL: &ttl}, Meta: Meta{"k": json.RawMessage(`true`)}},
	} {
		fast, err := Marshal(p)
		require.NoError(t, err)
		type plain ElicitParams
		want, err := json.Marshal((*plain)(p))
		require.NoError(t, err)
		assert.JSONEq(t, string(want), string(fast))
	}
}

func TestCreateMessageParamsEncodingMatchesEncodingJSON(t *testing.T) {
	temp := 0.5
	for _, p := range []*CreateMessageParams{
		{MaxTokens: 100},
		{Messages: []*SamplingMessage{{Role: RoleUser, Content: ContentList{&TextContent{Text: "hi"}}}}, MaxTokens: 100},
		{Messages: []*SamplingMessage{{Role: RoleUser, Content: ContentList{&TextContent{Text: "a"}, &TextContent{Text: "b"}}}, {Role: RoleAssistant}}, SystemPrompt: "s\n", IncludeContext: "none", MaxTokens: 7},
		{Messages: []*SamplingMessage{{Role: RoleUser, Content: ContentList{&TextContent{Text: "x"}}, Meta: Meta{"k": json.RawMessage(`1`)}}}, Temperature: &temp, StopSequences: []string{"."}, MaxTokens: 1},
	} {
		fast, err := Marshal(p)
		require.NoError(t, err)
		want, err := p.MarshalJSON() // the reflection path
		require.NoError(t, err)
		assert.JSONEq(t, string(want), string(fast))
	}
}

func FuzzElicitResultDecodeMatchesEncodingJSON(f *testing.F) {
	for _, s := range []string{
		`{"action":"accept","content":{"a":1}}`, `{"action":"decline"}`, `{"action":"cancel","content":null}`,
		`{"Action":"accept"}`, `{"action":"a\u0063cept"}`, `{"action":5}`, `{"action":"accept","_meta":{"k":1}}`,
		`{"action":"accept","extra":[1,2]}`, `[]`, `{"act\u0069on":"x"}`, `{"action":"accept","content":{"a":1},"content":{"b":2}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			var got ElicitResult
			require.Error(t, got.UnmarshalJSON(raw), "called directly (Session.callInto), it still validates")
			return
		}
		type plain ElicitResult
		var want plain
		werr := json.Unmarshal(raw, &want)
		var got ElicitResult
		gerr := json.Unmarshal(raw, &got)
		if werr != nil {
			require.Error(t, gerr, "%s", raw)
			return
		}
		require.NoError(t, gerr, "%s", raw)
		assert.Equal(t, want.Action, got.Action)
		assert.Equal(t, string(want.Content), string(got.Content))
		assert.Equal(t, want.Meta, got.Meta)
	})
}

func TestCreateMessageResultDecode(t *testing.T) {
	for raw, want := range map[string]CreateMessageResult{
		`{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m","stopReason":"endTurn"}`:                      {Role: RoleAssistant, Content: ContentList{&TextContent{Text: "hi"}}, Model: "m", StopReason: "endTurn"},
		`{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"model":"m"}`:                 {Role: RoleAssistant, Content: ContentList{&TextContent{Text: "a"}, &TextContent{Text: "b"}}, Model: "m"},
		`{"role":"assistant","content":{"type":"text","text":"x","annotations":{"priority":1}},"model":"m","_meta":{"k":1}}`: {},
	} {
		var got CreateMessageResult
		require.NoError(t, json.Unmarshal([]byte(raw), &got))
		if want.Model == "" { // compare with the reflection path
			var w struct {
				Role    Role            `json:"role"`
				Content json.RawMessage `json:"content"`
				Model   string          `json:"model"`
				Meta    Meta            `json:"_meta"`
			}
			require.NoError(t, json.Unmarshal([]byte(raw), &w))
			assert.Equal(t, w.Model, got.Model)
			assert.Equal(t, w.Meta, got.Meta)
			tc := got.Content[0].(*TextContent)
			assert.Equal(t, "x", tc.Text)
			require.NotNil(t, tc.Annotations)
			continue
		}
		assert.Equal(t, want, got)
	}
}

func FuzzFastTextMatchesUnmarshalContent(f *testing.F) {
	for _, s := range []string{
		`{"type":"text","text":"hi"}`, `{"text":"a\nb","type":"text"}`, `{"type":"text","text":"x","_meta":{}}`,
		`{"type":"image","data":"","mimeType":"a"}`, `{"type":"text","text":1}`, `{"type":"text","text":"é\u00e9"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, ok := fastText(raw)
		if !ok {
			return
		}
		want, err := UnmarshalContent(raw)
		require.NoError(t, err, "%s", raw)
		assert.Equal(t, want, Content(got), "%s", raw)
	})
}

func FuzzCreateMessageResultDecodeMatchesReflection(f *testing.F) {
	for _, s := range []string{
		`{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m","stopReason":"endTurn"}`,
		`{"role":"user","content":[{"type":"text","text":"a"}],"model":"m"}`, `{"role":null,"content":{"type":"text","text":"a"},"model":"m"}`,
		`{"Role":"user","content":{"type":"text","text":"a"},"model":"m"}`, `{"role":"user","content":{"type":"text","text":"a"},"model":"m","model":"n"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			var got CreateMessageResult
			require.Error(t, got.UnmarshalJSON(raw), "called directly (Session.callInto), it still validates")
			return
		}
		var w struct {
			Role       Role            `json:"role"`
			Content    json.RawMessage `json:"content"`
			Model      string          `json:"model"`
			StopReason string          `json:"stopReason"`
			Meta       Meta            `json:"_meta"`
		}
		var want CreateMessageResult
		werr := json.Unmarshal(raw, &w)
		if werr == nil {
			want.Content, werr = unmarshalSamplingContent(w.Content)
			want.Role, want.Model, want.StopReason, want.Meta = w.Role, w.Model, w.StopReason, w.Meta
		}
		var got CreateMessageResult
		gerr := json.Unmarshal(raw, &got)
		if werr != nil {
			require.Error(t, gerr, "%s", raw)
			return
		}
		require.NoError(t, gerr, "%s", raw)
		assert.Equal(t, want, got, "%s", raw)
	})
}

func FuzzInitializeParamsDecodeMatchesEncodingJSON(f *testing.F) {
	for _, s := range []string{
		`{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true},"sampling":{},"elicitation":{"form":{},"url":{}}},"clientInfo":{"name":"c","version":"1"}}`,
		`{"protocolVersion":"2025-06-18","capabilities":{"sampling":{"context":{},"tools":{}},"tasks":{"list":{}},"experimental":{"x":{"a":1}}},"clientInfo":{"name":"c","title":"T","version":"1","description":"d","websiteUrl":"https://x","icons":[{"src":"data:,"}]},"_meta":{"k":1}}`,
		`{"protocolVersion":null,"capabilities":null,"clientInfo":null}`, `{"ProtocolVersion":"x"}`, `{"protocolVersion":5}`,
		`{"capabilities":{"roots":null,"sampling":{"context":null},"elicitation":{"form":"x"}}}`, `{"capabilities":{"roots":{"listChanged":1}}}`,
		`{"capabilities":{"roots":{"listChanged":true}},"capabilities":{"sampling":{}}}`, `{"clientInfo":{"name":"a\u0062"}}`, `{"client\u0049nfo":{}}`,
		`[]`, `{}`, `{"capabilities":{"Roots":{}}}`, `{"capabilities":{"tasks":null}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		type plain InitializeParams
		var want plain
		werr := DecodeParams(raw, &want)
		got, gerr := DecodeInitializeParams(raw)
		if len(raw) == 0 {
			require.Nil(t, gerr)
			return
		}
		if werr != nil {
			require.NotNil(t, gerr, "%s", raw)
			assert.Equal(t, werr.Message, gerr.Message)
			return
		}
		require.Nil(t, gerr, "%s", raw)
		assert.Equal(t, InitializeParams(want), got, "%s", raw)

		var viaJSON InitializeParams
		require.NoError(t, json.Unmarshal(raw, &viaJSON))
		assert.Equal(t, got, viaJSON, "%s", raw)
	})
}

func FuzzAppendRawMatchesCompact(f *testing.F) {
	for _, s := range []string{
		`{"a":1}`, ` {"a" : [1, 2]} `, `{"d":"User's response"}`, "{\"a\":\n\"x y\"}", `"\u0020"`, `[]`, `{`, `{"a":1}x`, ``, `  `, `1 2`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, gerr := appendRaw([]byte("pre"), raw)
		var want bytes.Buffer
		werr := json.Compact(&want, raw)
		if werr != nil || !json.Valid(raw) {
			require.Error(t, gerr, "%q", raw)
			return
		}
		require.NoError(t, gerr, "%q", raw)
		assert.Equal(t, "pre"+want.String(), string(got), "%q", raw)
	})
}
