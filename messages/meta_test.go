package messages_test

import (
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/messages"
)

func TestMetaProgressToken(t *testing.T) {
	tests := []struct {
		name string
		meta string
		want messages.ID
		ok   bool
	}{
		{"string", `{"progressToken":"abc"}`, messages.StringID("abc"), true},
		{"number", `{"progressToken":7}`, messages.IntID(7), true},
		{"absent", `{"other":1}`, messages.ID{}, false},
		{"null", `{"progressToken":null}`, messages.ID{}, false},
		{"object", `{"progressToken":{}}`, messages.ID{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p messages.CallToolParams
			require.NoError(t, json.Unmarshal([]byte(`{"name":"x","_meta":`+tt.meta+`}`), &p))
			got, ok := p.Meta.ProgressToken()
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got)
		})
	}
	t.Run("nil meta", func(t *testing.T) {
		_, ok := messages.Meta(nil).ProgressToken()
		assert.False(t, ok)
	})
}

func TestMetaRelatedTask(t *testing.T) {
	m := messages.Meta{messages.MetaKeyRelatedTask: jsontext.Value(`{"taskId":"t-1"}`)}
	id, ok := m.RelatedTask()
	assert.True(t, ok)
	assert.Equal(t, "t-1", id)

	_, ok = messages.Meta{messages.MetaKeyRelatedTask: jsontext.Value(`"t-1"`)}.RelatedTask()
	assert.False(t, ok)
}

func TestRequiredListsNeverNull(t *testing.T) {
	tests := []struct {
		name string
		v    any
		wire string
	}{
		{"tools", &messages.ListToolsResult{}, `{"tools":[]}`},
		{"resources", &messages.ListResourcesResult{}, `{"resources":[]}`},
		{"templates", &messages.ListResourceTemplatesResult{}, `{"resourceTemplates":[]}`},
		{"read", &messages.ReadResourceResult{}, `{"contents":[]}`},
		{"prompts", &messages.ListPromptsResult{}, `{"prompts":[]}`},
		{"get prompt", &messages.GetPromptResult{}, `{"messages":[]}`},
		{"roots", &messages.ListRootsResult{}, `{"roots":[]}`},
		{"tasks", &messages.ListTasksResult{}, `{"tasks":[]}`},
		{"completion", &messages.CompleteResult{}, `{"completion":{"values":[]}}`},
		{"call tool", &messages.CallToolResult{}, `{"content":[]}`},
		{"url elicitation data", &messages.URLElicitationRequiredData{}, `{"elicitations":[]}`},
		{"values too", messages.ListToolsResult{NextCursor: "n"}, `{"tools":[],"nextCursor":"n"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.v)
			require.NoError(t, err)
			assert.JSONEq(t, tt.wire, string(b))
		})
	}
}

func TestEmptyShapes(t *testing.T) {
	tests := []struct {
		name string
		v    any
		wire string
	}{
		{"empty result", &messages.EmptyResult{}, `{}`},
		{"empty", &messages.Empty{}, `{}`},
		{"paginated", &messages.PaginatedParams{}, `{}`},
		{"initialized", &messages.InitializedParams{}, `{}`},
		{"list changed", &messages.ListChangedParams{}, `{}`},
		{"cancelled without id", &messages.CancelledParams{Reason: "r"}, `{"reason":"r"}`},
		{"cancelled with id", &messages.CancelledParams{RequestID: messages.StringID("a")}, `{"requestId":"a"}`},
		{"tool without schema", &messages.Tool{Name: "t"}, `{"name":"t","inputSchema":{"type":"object"}}`},
		{"logging data nil", &messages.LoggingMessageParams{Level: messages.LevelInfo}, `{"level":"info","data":null}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.v)
			require.NoError(t, err)
			assert.JSONEq(t, tt.wire, string(b))
		})
	}
}

func TestProgressAndCancelledRoundTrip(t *testing.T) {
	p := &messages.ProgressParams{ProgressToken: messages.IntID(3), Progress: 50, Total: ptr(100.0), Message: "half"}
	b, err := json.Marshal(p)
	require.NoError(t, err)
	assert.JSONEq(t, `{"progressToken":3,"progress":50,"total":100,"message":"half"}`, string(b))
	var gotP messages.ProgressParams
	require.NoError(t, json.Unmarshal(b, &gotP))
	assert.Equal(t, p, &gotP)

	var gotC messages.CancelledParams
	require.NoError(t, json.Unmarshal([]byte(`{"requestId":"x-1","reason":"user"}`), &gotC))
	assert.Equal(t, messages.CancelledParams{RequestID: messages.StringID("x-1"), Reason: "user"}, gotC)
}

func TestLoggingLevelRank(t *testing.T) {
	levels := []messages.LoggingLevel{
		messages.LevelDebug, messages.LevelInfo, messages.LevelNotice, messages.LevelWarning,
		messages.LevelError, messages.LevelCritical, messages.LevelAlert, messages.LevelEmergency,
	}
	for i, l := range levels {
		assert.Equal(t, i, l.Rank(), string(l))
		assert.True(t, l.Valid(), string(l))
	}
	assert.Equal(t, -1, messages.LoggingLevel("verbose").Rank())
	assert.False(t, messages.LoggingLevel("").Valid())
}

func TestElicitEffectiveMode(t *testing.T) {
	assert.Equal(t, messages.ElicitModeForm, (&messages.ElicitParams{}).EffectiveMode())
	assert.Equal(t, messages.ElicitModeURL, (&messages.ElicitParams{Mode: messages.ElicitModeURL}).EffectiveMode())
}

// TestDecodeErrorText checks that what a peer is told of a bad value names
// the member and never a Go type.
func TestDecodeErrorText(t *testing.T) {
	for raw, want := range map[string]string{
		`{"name":7}`:                         "invalid params: field name must not be a JSON number",
		`[1]`:                                "invalid params: params must be an object, not a JSON array",
		`{"name":"x"`:                        "invalid params: malformed JSON",
		`{"name":"x","task":{"ttl":"soon"}}`: "invalid params: field task.ttl must not be a JSON string",
		`{"name":"x","_meta":{"progressToken":[1,2]}}`: "",
	} {
		var p messages.CallToolParams
		err := messages.DecodeParams(jsontext.Value(raw), &p)
		if want == "" {
			assert.Nil(t, err, raw)
			continue
		}
		require.NotNil(t, err, raw)
		assert.Equal(t, want, err.Message, raw)
		assert.NotContains(t, err.Message, "Go ", raw)
	}
	var r messages.CreateMessageResult
	err := messages.DecodeParams(jsontext.Value(`{"role":"assistant","model":"m","content":{"type":"video"}}`), &r)
	require.NotNil(t, err)
	assert.NotContains(t, err.Message, "Go ")
}
