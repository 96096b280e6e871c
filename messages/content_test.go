package messages_test

import (
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/messages"
)

func ptr[T any](v T) *T { return &v }

func TestContentRoundTrip(t *testing.T) {
	tests := []struct {
		name    string
		content messages.Content
		wire    string
	}{
		{
			name:    "empty text keeps text",
			content: &messages.TextContent{},
			wire:    `{"type":"text","text":""}`,
		},
		{
			name: "text with annotations and meta",
			content: &messages.TextContent{
				Text: "hi",
				Annotations: &messages.Annotations{
					Audience:     []messages.Role{messages.RoleUser},
					Priority:     ptr(0.5),
					LastModified: "2025-01-12T15:00:58Z",
				},
				Meta: messages.Meta{"k": jsontext.Value(`1`)},
			},
			wire: `{"type":"text","text":"hi","annotations":{"audience":["user"],"priority":0.5,"lastModified":"2025-01-12T15:00:58Z"},"_meta":{"k":1}}`,
		},
		{
			name:    "image is base64",
			content: &messages.ImageContent{Data: []byte("png!"), MIMEType: "image/png"},
			wire:    `{"type":"image","data":"cG5nIQ==","mimeType":"image/png"}`,
		},
		{
			name:    "audio is base64",
			content: &messages.AudioContent{Data: []byte{0, 1, 2}, MIMEType: "audio/wav"},
			wire:    `{"type":"audio","data":"AAEC","mimeType":"audio/wav"}`,
		},
		{
			name: "resource link",
			content: &messages.ResourceLink{
				URI: "file:///a.txt", Name: "a", Title: "A", Description: "the a",
				MIMEType: "text/plain", Size: ptr[int64](12),
				Icons: []messages.Icon{{Src: "https://x/i.png", Sizes: []string{"48x48"}, Theme: messages.IconThemeDark}},
			},
			wire: `{"type":"resource_link","uri":"file:///a.txt","name":"a","title":"A","description":"the a","mimeType":"text/plain","size":12,"icons":[{"src":"https://x/i.png","sizes":["48x48"],"theme":"dark"}]}`,
		},
		{
			name:    "embedded text resource",
			content: &messages.EmbeddedResource{Resource: &messages.ResourceContents{URI: "file:///a.txt", Text: "x"}},
			wire:    `{"type":"resource","resource":{"uri":"file:///a.txt","text":"x"}}`,
		},
		{
			name:    "embedded blob resource",
			content: &messages.EmbeddedResource{Resource: &messages.ResourceContents{URI: "file:///a.bin", MIMEType: "application/octet-stream", Blob: []byte("hi")}},
			wire:    `{"type":"resource","resource":{"uri":"file:///a.bin","mimeType":"application/octet-stream","blob":"aGk="}}`,
		},
		{
			name:    "tool use",
			content: &messages.ToolUseContent{ID: "t1", Name: "get_weather", Input: jsontext.Value(`{"city":"Paris"}`)},
			wire:    `{"type":"tool_use","id":"t1","name":"get_weather","input":{"city":"Paris"}}`,
		},
		{
			name: "tool result",
			content: &messages.ToolResultContent{
				ToolUseID:         "t1",
				Content:           messages.ContentList{&messages.TextContent{Text: "sunny"}},
				StructuredContent: jsontext.Value(`{"temp":21}`),
				IsError:           true,
			},
			wire: `{"type":"tool_result","toolUseId":"t1","content":[{"type":"text","text":"sunny"}],"structuredContent":{"temp":21},"isError":true}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.content)
			require.NoError(t, err)
			assert.JSONEq(t, tt.wire, string(b))

			got, err := messages.UnmarshalContent(b)
			require.NoError(t, err)
			assert.Equal(t, tt.content, got)
		})
	}
}

func TestContentRequiredFieldsWhenEmpty(t *testing.T) {
	tests := []struct {
		name    string
		content messages.Content
		wire    string
	}{
		{"image", &messages.ImageContent{}, `{"type":"image","data":"","mimeType":""}`},
		{"audio", &messages.AudioContent{}, `{"type":"audio","data":"","mimeType":""}`},
		{"resource link", &messages.ResourceLink{}, `{"type":"resource_link","uri":"","name":""}`},
		{"tool use", &messages.ToolUseContent{}, `{"type":"tool_use","id":"","name":"","input":{}}`},
		{"tool result", &messages.ToolResultContent{}, `{"type":"tool_result","toolUseId":"","content":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.content)
			require.NoError(t, err)
			assert.JSONEq(t, tt.wire, string(b))
		})
	}
}

func TestContentValueMarshalsLikePointer(t *testing.T) {
	b, err := json.Marshal(messages.TextContent{Text: "v"})
	require.NoError(t, err)
	assert.JSONEq(t, `{"type":"text","text":"v"}`, string(b))
}

func TestUnmarshalContentErrors(t *testing.T) {
	tests := []struct {
		name string
		raw  string
	}{
		{"unknown type", `{"type":"video","data":""}`},
		{"missing type", `{"text":"hi"}`},
		{"null", `null`},
		{"array", `[]`},
		{"not json", `{"type":`},
		{"bad base64", `{"type":"image","data":"!!","mimeType":"image/png"}`},
		{"tool result nested in tool result", `{"type":"tool_result","toolUseId":"a","content":[{"type":"tool_result","toolUseId":"b","content":[]}]}`},
		{"tool use nested in tool result", `{"type":"tool_result","toolUseId":"a","content":[{"type":"tool_use","id":"b","name":"n","input":{}}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := messages.UnmarshalContent(jsontext.Value(tt.raw))
			require.Error(t, err)
			assert.Nil(t, c)
		})
	}
	_, err := messages.UnmarshalContent(jsontext.Value(`{"type":"video"}`))
	require.ErrorIs(t, err, messages.ErrUnknownContentType)
}

func TestContentList(t *testing.T) {
	t.Run("nil marshals as empty array", func(t *testing.T) {
		b, err := json.Marshal(messages.ContentList(nil))
		require.NoError(t, err)
		assert.Equal(t, `[]`, string(b))
	})
	t.Run("round trip", func(t *testing.T) {
		in := messages.ContentList{
			&messages.TextContent{Text: "a"},
			&messages.ImageContent{Data: []byte{1}, MIMEType: "image/gif"},
		}
		b, err := json.Marshal(in)
		require.NoError(t, err)
		var out messages.ContentList
		require.NoError(t, json.Unmarshal(b, &out))
		assert.Equal(t, in, out)
	})
	t.Run("one bad block fails the list", func(t *testing.T) {
		var out messages.ContentList
		err := json.Unmarshal([]byte(`[{"type":"text","text":"a"},{"type":"nope"}]`), &out)
		require.ErrorIs(t, err, messages.ErrUnknownContentType)
	})
	t.Run("call tool result content is never null", func(t *testing.T) {
		b, err := json.Marshal(&messages.CallToolResult{})
		require.NoError(t, err)
		assert.JSONEq(t, `{"content":[]}`, string(b))
	})
}

func TestResourceContentsRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		rc   *messages.ResourceContents
		wire string
	}{
		{"text", &messages.ResourceContents{URI: "file:///a", MIMEType: "text/plain", Text: "hello"}, `{"uri":"file:///a","mimeType":"text/plain","text":"hello"}`},
		{"empty text is written", &messages.ResourceContents{URI: "file:///a"}, `{"uri":"file:///a","text":""}`},
		{"blob", &messages.ResourceContents{URI: "file:///b", Blob: []byte("hi")}, `{"uri":"file:///b","blob":"aGk="}`},
		{"empty blob stays binary", &messages.ResourceContents{URI: "file:///b", Blob: []byte{}}, `{"uri":"file:///b","blob":""}`},
		{"meta", &messages.ResourceContents{URI: "file:///c", Text: "t", Meta: messages.Meta{"x": jsontext.Value(`"y"`)}}, `{"uri":"file:///c","text":"t","_meta":{"x":"y"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.rc)
			require.NoError(t, err)
			assert.JSONEq(t, tt.wire, string(b))

			var got messages.ResourceContents
			require.NoError(t, json.Unmarshal(b, &got))
			assert.Equal(t, tt.rc, &got)
		})
	}
	t.Run("bad blob", func(t *testing.T) {
		var got messages.ResourceContents
		require.Error(t, json.Unmarshal([]byte(`{"uri":"file:///b","blob":"%%"}`), &got))
	})
}

func TestPromptMessageRoundTrip(t *testing.T) {
	in := &messages.GetPromptResult{
		Description: "d",
		Messages: []*messages.PromptMessage{
			{Role: messages.RoleUser, Content: &messages.TextContent{Text: "q"}},
			{Role: messages.RoleAssistant, Content: &messages.ResourceLink{URI: "file:///r", Name: "r"}},
		},
	}
	b, err := json.Marshal(in)
	require.NoError(t, err)
	assert.JSONEq(t, `{"description":"d","messages":[
		{"role":"user","content":{"type":"text","text":"q"}},
		{"role":"assistant","content":{"type":"resource_link","uri":"file:///r","name":"r"}}]}`, string(b))

	var out messages.GetPromptResult
	require.NoError(t, json.Unmarshal(b, &out))
	assert.Equal(t, in, &out)

	var bad messages.PromptMessage
	require.Error(t, json.Unmarshal([]byte(`{"role":"user"}`), &bad))
	require.ErrorIs(t, json.Unmarshal([]byte(`{"role":"user","content":{"type":"x"}}`), &bad), messages.ErrUnknownContentType)
}

func TestContentIsNotHTMLEscaped(t *testing.T) {
	b, err := messages.Marshal(&messages.CallToolResult{Content: messages.ContentList{&messages.TextContent{Text: "a<b && c>d"}}})
	require.NoError(t, err)
	assert.Equal(t, `{"content":[{"type":"text","text":"a<b && c>d"}]}`, string(b))
}
