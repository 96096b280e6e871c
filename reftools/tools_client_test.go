package reftools_test

import (
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/harness"
	"github.com/mcp-actors/mcp-actors/messages"
)

func TestSampling(t *testing.T) {
	h := newHarness(t)
	var (
		mu  sync.Mutex
		got []*messages.CreateMessageParams
	)
	c := h.Connect(harness.WithSampling(func(p *messages.CreateMessageParams) (*messages.CreateMessageResult, error) {
		mu.Lock()
		got = append(got, p)
		mu.Unlock()
		return &messages.CreateMessageResult{
			Role:    messages.RoleAssistant,
			Content: messages.ContentList{&messages.TextContent{Text: "This is a test response from the client"}},
			Model:   "test-model",
		}, nil
	}))

	assert.Equal(t, "LLM response: This is a test response from the client",
		callText(t, c, "test_sampling", map[string]any{"prompt": "Test prompt for sampling"}))

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, got, 1)
	p := got[0]
	assert.EqualValues(t, 100, p.MaxTokens)
	require.Len(t, p.Messages, 1)
	assert.Equal(t, messages.RoleUser, p.Messages[0].Role)
	require.Len(t, p.Messages[0].Content, 1)
	tc, ok := p.Messages[0].Content[0].(*messages.TextContent)
	require.True(t, ok, "content %T", p.Messages[0].Content[0])
	assert.Equal(t, "Test prompt for sampling", tc.Text)
}

func TestSamplingFailures(t *testing.T) {
	h := newHarness(t)

	t.Run("no capability", func(t *testing.T) {
		c := h.Connect()
		res := call(t, c, "test_sampling", map[string]any{"prompt": "p"})
		assert.True(t, res.IsError)
		assert.Contains(t, res.Content[0].Text, "sampling")
		assert.Empty(t, requestsOf(c, messages.MethodCreateMessage), "nothing is sent without the capability")
	})
	t.Run("client error", func(t *testing.T) {
		c := h.Connect(harness.WithSampling(func(*messages.CreateMessageParams) (*messages.CreateMessageResult, error) {
			return nil, messages.Errorf(-1, "user rejected sampling")
		}))
		res := call(t, c, "test_sampling", map[string]any{"prompt": "p"})
		assert.True(t, res.IsError, "a failed client call is a tool error, not a JSON-RPC error")
		assert.Contains(t, res.Content[0].Text, "user rejected sampling")
	})
	t.Run("no text", func(t *testing.T) {
		c := h.Connect(harness.WithSampling(func(*messages.CreateMessageParams) (*messages.CreateMessageResult, error) {
			return &messages.CreateMessageResult{Role: messages.RoleAssistant, Model: "m",
				Content: messages.ContentList{&messages.ImageContent{Data: []byte{1}, MIMEType: "image/png"}}}, nil
		}))
		res := call(t, c, "test_sampling", map[string]any{"prompt": "p"})
		assert.True(t, res.IsError)
	})
}

// elicitRecorder answers elicitation/create with a fixed result and keeps
// the requests.
type elicitRecorder struct {
	mu     sync.Mutex
	params []*messages.ElicitParams
	answer *messages.ElicitResult
}

func (r *elicitRecorder) handle(p *messages.ElicitParams) (*messages.ElicitResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.params = append(r.params, p)
	return r.answer, nil
}

func (r *elicitRecorder) only(t *testing.T) *messages.ElicitParams {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	require.Len(t, r.params, 1)
	return r.params[0]
}

func TestElicitation(t *testing.T) {
	tests := []struct {
		name   string
		answer *messages.ElicitResult
		want   string
	}{
		{"accept", &messages.ElicitResult{Action: messages.ElicitAccept, Content: jsontext.Value(`{"username":"yes","email":"ann@example.com"}`)},
			`User response: action=accept, content={"username":"yes","email":"ann@example.com"}`},
		{"accept verbatim", &messages.ElicitResult{Action: messages.ElicitAccept, Content: jsontext.Value(`{"email":"b@example.com","username":"b","extra":[1,2.50]}`)},
			`User response: action=accept, content={"email":"b@example.com","username":"b","extra":[1,2.50]}`},
		{"decline", &messages.ElicitResult{Action: messages.ElicitDecline}, `User response: action=decline, content={}`},
		{"cancel", &messages.ElicitResult{Action: messages.ElicitCancel}, `User response: action=cancel, content={}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &elicitRecorder{answer: tt.answer}
			c := newHarness(t).Connect(harness.WithElicitation(rec.handle))
			assert.Equal(t, tt.want, callText(t, c, "test_elicitation", map[string]any{"message": "Please provide your information"}))

			p := rec.only(t)
			assert.Equal(t, "Please provide your information", p.Message)
			assert.Equal(t, messages.ElicitModeForm, p.EffectiveMode())
			assert.JSONEq(t, `{"type":"object","properties":{"username":{"type":"string","description":"User's response"},"email":{"type":"string","description":"User's email address"}},"required":["username","email"]}`,
				string(p.RequestedSchema))
		})
	}
}

func TestElicitationWithoutCapability(t *testing.T) {
	c := newHarness(t).Connect()
	res := call(t, c, "test_elicitation", map[string]any{"message": "m"})
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content[0].Text, "elicitation")
	assert.Empty(t, requestsOf(c, messages.MethodElicit))
}

func TestElicitationSEP1034Defaults(t *testing.T) {
	content := `{"name":"Jane Smith","age":25,"score":88,"status":"inactive","verified":false}`
	rec := &elicitRecorder{answer: &messages.ElicitResult{Action: messages.ElicitAccept, Content: jsontext.Value(content)}}
	c := newHarness(t).Connect(harness.WithElicitation(rec.handle))

	assert.Equal(t, "Elicitation completed: action=accept, content="+content,
		callText(t, c, "test_elicitation_sep1034_defaults", map[string]any{}))

	var schema struct {
		Type       string `json:"type"`
		Properties map[string]struct {
			Type        string         `json:"type"`
			Description string         `json:"description"`
			Default     jsontext.Value `json:"default"`
			Enum        []string       `json:"enum"`
		} `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(rec.only(t).RequestedSchema, &schema))
	assert.Equal(t, "object", schema.Type)
	want := map[string]struct{ typ, def string }{
		"name":     {"string", `"John Doe"`},
		"age":      {"integer", `30`},
		"score":    {"number", `95.5`},
		"status":   {"string", `"active"`},
		"verified": {"boolean", `true`},
	}
	require.Len(t, schema.Properties, len(want))
	for name, w := range want {
		p := schema.Properties[name]
		assert.Equal(t, w.typ, p.Type, name)
		assert.Equal(t, w.def, string(p.Default), name)
		assert.NotEmpty(t, p.Description, name)
	}
	assert.Equal(t, []string{"active", "inactive", "pending"}, schema.Properties["status"].Enum)
}

func TestElicitationSEP1330Enums(t *testing.T) {
	content := `{"untitledSingle":"option1","titledSingle":"value1","legacyEnum":"opt1","untitledMulti":["option1","option2"],"titledMulti":["value1","value2"]}`
	rec := &elicitRecorder{answer: &messages.ElicitResult{Action: messages.ElicitAccept, Content: jsontext.Value(content)}}
	c := newHarness(t).Connect(harness.WithElicitation(rec.handle))

	assert.Equal(t, "Elicitation completed: action=accept, content="+content,
		callText(t, c, "test_elicitation_sep1330_enums", nil))

	type option struct {
		Const string `json:"const"`
		Title string `json:"title"`
	}
	var schema struct {
		Properties map[string]struct {
			Type        string   `json:"type"`
			Description string   `json:"description"`
			Enum        []string `json:"enum"`
			EnumNames   []string `json:"enumNames"`
			OneOf       []option `json:"oneOf"`
			Items       *struct {
				Type  string   `json:"type"`
				Enum  []string `json:"enum"`
				AnyOf []option `json:"anyOf"`
			} `json:"items"`
		} `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(rec.only(t).RequestedSchema, &schema))
	props := schema.Properties
	require.Len(t, props, 5)
	for name, p := range props {
		assert.NotEmpty(t, p.Description, name)
	}

	options := []string{"option1", "option2", "option3"}
	us := props["untitledSingle"]
	assert.Equal(t, "string", us.Type)
	assert.Equal(t, options, us.Enum)
	assert.Nil(t, us.OneOf)
	assert.Nil(t, us.EnumNames)

	ts := props["titledSingle"]
	assert.Equal(t, "string", ts.Type)
	assert.Nil(t, ts.Enum)
	assert.Equal(t, []option{{"value1", "First Option"}, {"value2", "Second Option"}, {"value3", "Third Option"}}, ts.OneOf)

	le := props["legacyEnum"]
	assert.Equal(t, "string", le.Type)
	assert.Equal(t, []string{"opt1", "opt2", "opt3"}, le.Enum)
	assert.Equal(t, []string{"Option One", "Option Two", "Option Three"}, le.EnumNames)

	um := props["untitledMulti"]
	assert.Equal(t, "array", um.Type)
	require.NotNil(t, um.Items)
	assert.Equal(t, "string", um.Items.Type)
	assert.Equal(t, options, um.Items.Enum)
	assert.Nil(t, um.Items.AnyOf)

	tm := props["titledMulti"]
	assert.Equal(t, "array", tm.Type)
	require.NotNil(t, tm.Items)
	assert.Nil(t, tm.Items.Enum)
	assert.Equal(t, []option{{"value1", "First Choice"}, {"value2", "Second Choice"}, {"value3", "Third Choice"}}, tm.Items.AnyOf)
}

func TestRoots(t *testing.T) {
	roots := []*messages.Root{
		{URI: "file:///home/ann/project", Name: "project"},
		{URI: "file:///tmp/b"},
		{URI: "file:///srv/a", Name: "a", Meta: messages.Meta{"k": jsontext.Value(`"v"`)}},
	}
	c := newHarness(t).Connect(harness.WithRoots(func() []*messages.Root { return roots }))
	want := `{"roots":[{"uri":"file:///home/ann/project","name":"project"},{"uri":"file:///tmp/b"},{"uri":"file:///srv/a","name":"a","_meta":{"k":"v"}}]}`

	for i := 1; i <= 2; i++ {
		res := call(t, c, "test_roots", nil)
		require.False(t, res.IsError, "%+v", res.Content)
		require.Len(t, res.Content, 1)
		assert.Equal(t, "text", res.Content[0].Type)
		assert.JSONEq(t, want, res.Content[0].Text)
		assert.JSONEq(t, want, string(res.StructuredContent))
		assert.Len(t, requestsOf(c, messages.MethodListRoots), i, "roots/list is sent on every call")
	}
}

func TestRootsEmptyAndMissing(t *testing.T) {
	h := newHarness(t)

	c := h.Connect(harness.WithRoots(func() []*messages.Root { return nil }))
	res := call(t, c, "test_roots", nil)
	require.False(t, res.IsError)
	assert.JSONEq(t, `{"roots":[]}`, string(res.StructuredContent))

	c = h.Connect()
	res = call(t, c, "test_roots", nil)
	assert.True(t, res.IsError)
	assert.True(t, strings.Contains(res.Content[0].Text, "roots"), res.Content[0].Text)
}

// requestsOf returns the server requests of method c received so far.
func requestsOf(c *harness.Client, method string) []*harness.Received {
	var out []*harness.Received
	for _, r := range c.Received() {
		if r.Msg != nil && r.Msg.Kind() == messages.KindRequest && r.Msg.Method == method {
			out = append(out, r)
		}
	}
	return out
}
