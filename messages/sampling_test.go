package messages_test

import (
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/messages"
)

func TestSamplingMessageRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		msg  *messages.SamplingMessage
		wire string
	}{
		{
			name: "one block is a single object",
			msg:  &messages.SamplingMessage{Role: messages.RoleUser, Content: messages.ContentList{&messages.TextContent{Text: "hi"}}},
			wire: `{"role":"user","content":{"type":"text","text":"hi"}}`,
		},
		{
			name: "two blocks are an array",
			msg: &messages.SamplingMessage{Role: messages.RoleAssistant, Content: messages.ContentList{
				&messages.TextContent{Text: "let me check"},
				&messages.ToolUseContent{ID: "c1", Name: "weather", Input: jsontext.Value(`{}`)},
			}},
			wire: `{"role":"assistant","content":[{"type":"text","text":"let me check"},{"type":"tool_use","id":"c1","name":"weather","input":{}}]}`,
		},
		{
			name: "no blocks are an empty array",
			msg:  &messages.SamplingMessage{Role: messages.RoleUser, Content: messages.ContentList{}},
			wire: `{"role":"user","content":[]}`,
		},
		{
			name: "meta",
			msg: &messages.SamplingMessage{Role: messages.RoleUser, Meta: messages.Meta{"a": jsontext.Value(`true`)},
				Content: messages.ContentList{&messages.ToolResultContent{ToolUseID: "c1", Content: messages.ContentList{&messages.TextContent{Text: "sunny"}}}}},
			wire: `{"role":"user","content":{"type":"tool_result","toolUseId":"c1","content":[{"type":"text","text":"sunny"}]},"_meta":{"a":true}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.msg)
			require.NoError(t, err)
			assert.JSONEq(t, tt.wire, string(b))

			var got messages.SamplingMessage
			require.NoError(t, json.Unmarshal(b, &got))
			assert.Equal(t, tt.msg, &got)
		})
	}
}

func TestSamplingMessageAcceptsSingleBlockArray(t *testing.T) {
	var got messages.SamplingMessage
	require.NoError(t, json.Unmarshal([]byte(`{"role":"user","content":[{"type":"text","text":"hi"}]}`), &got))
	assert.Equal(t, messages.ContentList{&messages.TextContent{Text: "hi"}}, got.Content)
}

func TestSamplingMessageErrors(t *testing.T) {
	for name, raw := range map[string]string{
		"missing content": `{"role":"user"}`,
		"null content":    `{"role":"user","content":null}`,
		"unknown block":   `{"role":"user","content":{"type":"video"}}`,
		"unknown in list": `{"role":"user","content":[{"type":"video"}]}`,
		"string content":  `{"role":"user","content":"hi"}`,
	} {
		t.Run(name, func(t *testing.T) {
			var got messages.SamplingMessage
			require.Error(t, json.Unmarshal([]byte(raw), &got))
		})
	}
}

func TestCreateMessageResultRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		res  *messages.CreateMessageResult
		wire string
	}{
		{
			name: "single",
			res: &messages.CreateMessageResult{Role: messages.RoleAssistant, Model: "m", StopReason: messages.StopReasonEndTurn,
				Content: messages.ContentList{&messages.TextContent{Text: "ok"}}},
			wire: `{"role":"assistant","content":{"type":"text","text":"ok"},"model":"m","stopReason":"endTurn"}`,
		},
		{
			name: "array",
			res: &messages.CreateMessageResult{Role: messages.RoleAssistant, Model: "m", StopReason: messages.StopReasonToolUse,
				Content: messages.ContentList{
					&messages.ToolUseContent{ID: "a", Name: "x", Input: jsontext.Value(`{"n":1}`)},
					&messages.ToolUseContent{ID: "b", Name: "y", Input: jsontext.Value(`{}`)},
				}},
			wire: `{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"x","input":{"n":1}},{"type":"tool_use","id":"b","name":"y","input":{}}],"model":"m","stopReason":"toolUse"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.res)
			require.NoError(t, err)
			assert.JSONEq(t, tt.wire, string(b))

			var got messages.CreateMessageResult
			require.NoError(t, json.Unmarshal(b, &got))
			assert.Equal(t, tt.res, &got)
		})
	}
}

func TestCreateMessageParamsRoundTrip(t *testing.T) {
	in := &messages.CreateMessageParams{
		Messages: []*messages.SamplingMessage{
			{Role: messages.RoleUser, Content: messages.ContentList{&messages.TextContent{Text: "weather?"}}},
		},
		ModelPreferences: &messages.ModelPreferences{Hints: []*messages.ModelHint{{Name: "claude"}}, SpeedPriority: ptr(0.2)},
		SystemPrompt:     "be brief",
		IncludeContext:   messages.IncludeContextNone,
		Temperature:      ptr(0.7),
		MaxTokens:        100,
		StopSequences:    []string{"\n\n"},
		Metadata:         jsontext.Value(`{"x":1}`),
		Tools:            []*messages.Tool{{Name: "weather", InputSchema: jsontext.Value(`{"type":"object"}`)}},
		ToolChoice:       &messages.ToolChoice{Mode: messages.ToolChoiceAuto},
		Task:             &messages.TaskMetadata{TTL: ptr[int64](1000)},
	}
	b, err := json.Marshal(in)
	require.NoError(t, err)
	var out messages.CreateMessageParams
	require.NoError(t, json.Unmarshal(b, &out))
	assert.Equal(t, in, &out)

	b, err = json.Marshal(&messages.CreateMessageParams{MaxTokens: 1})
	require.NoError(t, err)
	assert.JSONEq(t, `{"messages":[],"maxTokens":1}`, string(b))
}
