package interop_test

import (
	"context"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tools that call back to the client: sampling, elicitation, roots.

func testSampling(t *testing.T, start starter) {
	const answer = "Hello from the Go SDK client"
	asked := make(chan *mcp.CreateMessageParams, 16)
	p := start(t, &mcp.ClientOptions{
		CreateMessageHandler: func(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			send(t.Context(), asked, req.Params)
			return &mcp.CreateMessageResult{
				Content:    &mcp.TextContent{Text: answer},
				Model:      "interop-model",
				Role:       "assistant",
				StopReason: "endTurn",
			}, nil
		},
	})

	res := p.call("test_sampling", map[string]any{"prompt": "hi"})
	assert.False(t, res.IsError)
	assert.Equal(t, "LLM response: "+answer, textOf(t, res))

	params := recv(p, asked, "sampling/createMessage")
	assert.Equal(t, int64(100), params.MaxTokens)
	if assert.Len(t, params.Messages, 1) {
		msg := params.Messages[0]
		assert.Equal(t, mcp.Role("user"), msg.Role)
		text, ok := msg.Content.(*mcp.TextContent)
		if assert.True(t, ok, "message content is %T, want text", msg.Content) {
			assert.Equal(t, "hi", text.Text)
		}
	}
	assert.Len(t, p.toolCall("test_sampling").during("sampling/createMessage"), 1)
}

func testElicitation(t *testing.T, start starter) {
	asked := make(chan *mcp.ElicitParams, 16)
	answers := make(chan *mcp.ElicitResult, 2)
	answers <- &mcp.ElicitResult{Action: "accept", Content: map[string]any{"username": "alice", "email": "alice@example.com"}}
	answers <- &mcp.ElicitResult{Action: "decline"}
	p := start(t, &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			send(t.Context(), asked, req.Params)
			select {
			case a := <-answers:
				return a, nil
			default:
				return nil, errors.New("the test has no more answers")
			}
		},
	})

	const message = "Please provide your username and email"
	res := p.call("test_elicitation", map[string]any{"message": message})
	assert.False(t, res.IsError)
	text := textOf(t, res)
	const prefix = "User response: action=accept, content="
	if assert.True(t, strings.HasPrefix(text, prefix), "text %q", text) {
		assert.JSONEq(t, `{"username":"alice","email":"alice@example.com"}`, strings.TrimPrefix(text, prefix))
	}

	params := recv(p, asked, "elicitation/create")
	assert.Equal(t, message, params.Message)
	assert.Contains(t, []string{"", "form"}, params.Mode)
	raw, err := json.Marshal(params.RequestedSchema)
	require.NoError(t, err)
	var schema struct {
		Type       string `json:"type"`
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	require.NoError(t, json.Unmarshal(raw, &schema), "requestedSchema %s", raw)
	assert.Equal(t, "object", schema.Type)
	assert.Len(t, schema.Properties, 2, "requestedSchema %s", raw)
	assert.Equal(t, "string", schema.Properties["username"].Type, "requestedSchema %s", raw)
	assert.Equal(t, "string", schema.Properties["email"].Type, "requestedSchema %s", raw)
	assert.ElementsMatch(t, []string{"username", "email"}, schema.Required)

	res = p.call("test_elicitation", map[string]any{"message": message})
	assert.False(t, res.IsError)
	assert.Equal(t, "User response: action=decline, content={}", textOf(t, res))
	recv(p, asked, "the second elicitation/create")
}

func testRoots(t *testing.T, start starter) {
	zeta := &mcp.Root{URI: "file:///work/zeta", Name: "zeta"}
	alpha := &mcp.Root{URI: "file:///work/alpha", Name: "alpha"}
	p := start(t, nil, zeta, alpha)

	// The SDK answers roots/list sorted by URI, whatever the order of
	// AddRoots; the server must pass on exactly what the client sent.
	assertRoots(t, p, p.call("test_roots", nil), `[{"uri":"file:///work/alpha","name":"alpha"},{"uri":"file:///work/zeta","name":"zeta"}]`)

	// After a change (the SDK notifies roots/list_changed), the next call
	// asks again and sees the new list.
	p.client.AddRoots(&mcp.Root{URI: "file:///work/mid", Name: "mid"})
	assertRoots(t, p, p.call("test_roots", nil), `[{"uri":"file:///work/alpha","name":"alpha"},{"uri":"file:///work/mid","name":"mid"},{"uri":"file:///work/zeta","name":"zeta"}]`)
}

// assertRoots checks a test_roots result: the call sent roots/list, the
// client answered want, and the result carries that list unchanged as text
// and as structuredContent {"roots": …}.
func assertRoots(t *testing.T, p *peer, res *mcp.CallToolResult, want string) {
	t.Helper()
	assert.False(t, res.IsError)
	c := p.toolCall("test_roots")
	require.Len(t, c.during("roots/list"), 1, "test_roots must send roots/list on every call")

	answers := c.answers("roots/list")
	require.Len(t, answers, 1, "the client's roots/list answer is not on the wire")
	var sent struct {
		Roots jsontext.Value `json:"roots"`
	}
	require.NoError(t, json.Unmarshal(answers[0], &sent))
	assert.JSONEq(t, want, string(sent.Roots), "the client's roots/list answer")

	wantResult := `{"roots":` + want + `}`
	assert.JSONEq(t, wantResult, textOf(t, res), "text")
	structured, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	assert.JSONEq(t, wantResult, string(structured), "structuredContent")
}

// testElicitationSchemas covers the elicitation tools with richer forms:
// the client sees each schema as declared, and its answer comes back
// verbatim.
func testElicitationSchemas(t *testing.T, start starter) {
	asked := make(chan *mcp.ElicitParams, 16)
	answers := map[string]map[string]any{
		"Please review and update the form fields with defaults": {
			"name": "Jane", "age": 41, "score": 12.5, "status": "pending", "verified": false,
		},
		"Please select options from the enum fields": {
			"untitledSingle": "option2", "titledSingle": "value3", "legacyEnum": "opt1",
			"untitledMulti": []any{"option1", "option3"}, "titledMulti": []any{"value2"},
		},
	}
	p := start(t, &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			send(t.Context(), asked, req.Params)
			content, ok := answers[req.Params.Message]
			if !ok {
				return nil, errors.New("the test has no answer for this message")
			}
			return &mcp.ElicitResult{Action: "accept", Content: content}, nil
		},
	})

	for _, tc := range []struct {
		tool, schema, content string
	}{
		{
			tool: "test_elicitation_sep1034_defaults",
			schema: `{"type":"object","properties":{` +
				`"name":{"type":"string","description":"User name","default":"John Doe"},` +
				`"age":{"type":"integer","description":"User age","default":30},` +
				`"score":{"type":"number","description":"User score","default":95.5},` +
				`"status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},` +
				`"verified":{"type":"boolean","description":"Verification status","default":true}}}`,
			content: `{"name":"Jane","age":41,"score":12.5,"status":"pending","verified":false}`,
		},
		{
			tool: "test_elicitation_sep1330_enums",
			schema: `{"type":"object","properties":{` +
				`"untitledSingle":{"type":"string","description":"Select one option","enum":["option1","option2","option3"]},` +
				`"titledSingle":{"type":"string","description":"Select one option with titles","oneOf":[` +
				`{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},` +
				`"legacyEnum":{"type":"string","description":"Select one option (legacy)","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},` +
				`"untitledMulti":{"type":"array","description":"Select multiple options","minItems":1,"maxItems":3,"items":{"type":"string","enum":["option1","option2","option3"]}},` +
				`"titledMulti":{"type":"array","description":"Select multiple options with titles","minItems":1,"maxItems":3,"items":{"anyOf":[` +
				`{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}}}`,
			content: `{"untitledSingle":"option2","titledSingle":"value3","legacyEnum":"opt1","untitledMulti":["option1","option3"],"titledMulti":["value2"]}`,
		},
	} {
		res := p.call(tc.tool, nil)
		assert.False(t, res.IsError, tc.tool)
		text := textOf(t, res)
		const prefix = "Elicitation completed: action=accept, content="
		if assert.True(t, strings.HasPrefix(text, prefix), "%s: text %q", tc.tool, text) {
			assert.JSONEq(t, tc.content, strings.TrimPrefix(text, prefix), tc.tool)
		}

		params := recv(p, asked, "elicitation/create of "+tc.tool)
		assert.Contains(t, []string{"", "form"}, params.Mode)
		// The schema as the server sent it, not as the SDK decoded it.
		sent := p.toolCall(tc.tool).during("elicitation/create")
		require.Len(t, sent, 1, "%s must send one elicitation/create", tc.tool)
		var wire struct {
			RequestedSchema jsontext.Value `json:"requestedSchema"`
		}
		require.NoError(t, json.Unmarshal(sent[0], &wire))
		var schema map[string]any
		require.NoError(t, json.Unmarshal(wire.RequestedSchema, &schema))
		delete(schema, "required") // absent or empty: nothing is required
		got, err := json.Marshal(schema)
		require.NoError(t, err)
		assert.JSONEq(t, tc.schema, string(got), "%s: requestedSchema", tc.tool)
	}
}
