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
