package mcpactors_test

import (
	"cmp"
	"context"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/harness"
	"github.com/mcp-actors/mcp-actors/messages"
)

// routeSchema is a JSON Schema 2020-12 document with $schema, $defs/$ref
// and additionalProperties:false, in a key order no encoder would pick.
const routeSchema = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
	`"properties":{"from":{"$ref":"#/$defs/point"},"to":{"$ref":"#/$defs/point"},"label":{"type":"string","maxLength":8}},` +
	`"required":["from","to"],"additionalProperties":false,` +
	`"$defs":{"point":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}},"required":["x","y"],"additionalProperties":false}}}`

// listedTools returns the raw JSON of every tool on the first page of
// tools/list, by name.
func listedTools(t *testing.T, c *harness.Client) map[string]map[string]jsontext.Value {
	t.Helper()
	var page struct {
		Tools []map[string]jsontext.Value `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(rawResult(t, c, messages.MethodListTools, nil), &page))
	out := map[string]map[string]jsontext.Value{}
	for _, tool := range page.Tools {
		var name string
		require.NoError(t, json.Unmarshal(tool["name"], &name))
		out[name] = tool
	}
	return out
}

func TestToolSchemasAreListedAsGiven(t *testing.T) {
	srv := newServer(nil)
	require.NoError(t, srv.AddTool(&messages.Tool{Name: "noargs"}, okTool))
	require.NoError(t, srv.AddTool(&messages.Tool{Name: "route", InputSchema: jsontext.Value(routeSchema)}, okTool))
	h := harness.New(t, srv)
	tools := listedTools(t, h.Connect())

	tests := []struct {
		tool string
		want string
	}{
		{"noargs", `{"type":"object","properties":{}}`},
		{"route", routeSchema},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			require.Contains(t, tools, tt.tool)
			assert.Equal(t, tt.want, string(tools[tt.tool]["inputSchema"]), "inputSchema must be byte-for-byte the one given")
			assert.NotContains(t, tools[tt.tool], "outputSchema")
		})
	}
}

func TestCallToolValidatesArguments(t *testing.T) {
	srv := newServer(nil)
	var calls atomic.Int32
	var got atomic.Pointer[mcpactors.CallToolRequest]
	echo := func(_ context.Context, _ *mcpactors.Session, req *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
		calls.Add(1)
		got.Store(req)
		return textResult(string(req.Arguments)), nil
	}
	require.NoError(t, srv.AddTool(&messages.Tool{Name: "route", InputSchema: jsontext.Value(routeSchema)}, echo))
	require.NoError(t, srv.AddTool(&messages.Tool{Name: "noargs"}, echo))
	c := harness.New(t, srv).Connect()

	const valid = `{"from":{"x":0,"y":0},"to":{"x":1,"y":2.5}}`
	tests := []struct {
		name   string
		params string // raw tools/call params
		// reason is in the isError text when the arguments are refused; ""
		// means the handler runs and receives wantArgs.
		reason   string
		wantArgs string
	}{
		{name: "valid", params: `{"name":"route","arguments":` + valid + `}`, wantArgs: valid},
		{name: "missing arguments key", params: `{"name":"noargs"}`, wantArgs: `{}`},
		{name: "null arguments", params: `{"name":"noargs","arguments":null}`, wantArgs: `{}`},
		{name: "missing arguments against required", params: `{"name":"route"}`, reason: "from"},
		{name: "missing required property", params: `{"name":"route","arguments":{"from":{"x":0,"y":0}}}`, reason: "to"},
		{name: "additional property at the root", params: `{"name":"route","arguments":{"from":{"x":0,"y":0},"to":{"x":1,"y":1},"speed":3}}`, reason: "speed"},
		{name: "additional property through $ref", params: `{"name":"route","arguments":{"from":{"x":0,"y":0,"z":9},"to":{"x":1,"y":1}}}`, reason: "z"},
		{name: "wrong type through $ref", params: `{"name":"route","arguments":{"from":{"x":"0","y":0},"to":{"x":1,"y":1}}}`, reason: "/from/x"},
		{name: "keyword violated", params: `{"name":"route","arguments":{"from":{"x":0,"y":0},"to":{"x":1,"y":1},"label":"far too long"}}`, reason: "/label"},
		{name: "arguments not an object", params: `{"name":"route","arguments":[1,2]}`, reason: "object"},
		{name: "arguments for a tool without any", params: `{"name":"noargs","arguments":"x"}`, reason: "object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := calls.Load()
			res := callTool(t, c, jsontext.Value(tt.params))
			text := firstText(t, res)
			if tt.reason != "" {
				assert.True(t, res.IsError)
				assert.Contains(t, text, "invalid arguments")
				assert.Contains(t, text, tt.reason)
				assert.Equal(t, before, calls.Load(), "the handler must not run on invalid arguments")
				return
			}
			assert.False(t, res.IsError, text)
			require.Equal(t, before+1, calls.Load())
			assert.JSONEq(t, tt.wantArgs, text)
			assert.JSONEq(t, tt.wantArgs, string(got.Load().Arguments))
		})
	}
}

func TestCallToolResults(t *testing.T) {
	srv := newServer(nil)
	add := func(name string, h mcpactors.ToolHandler) {
		t.Helper()
		require.NoError(t, srv.AddTool(&messages.Tool{Name: name}, h))
	}
	add("ok", okTool)
	add("fails", func(context.Context, *mcpactors.Session, *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
		return nil, errors.New("the disk is full")
	})
	add("wire", func(context.Context, *mcpactors.Session, *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
		return nil, messages.Errorf(-32000, "backend unavailable")
	})
	add("wrapped-wire", func(context.Context, *mcpactors.Session, *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
		return nil, fmt.Errorf("checking the input: %w", messages.Errorf(messages.CodeInvalidParams, "invalid params: no such city"))
	})
	add("nil", func(context.Context, *mcpactors.Session, *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
		return nil, nil
	})
	add("own-error", func(context.Context, *mcpactors.Session, *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
		return &messages.CallToolResult{IsError: true, Content: messages.ContentList{&messages.TextContent{Text: "nope"}}}, nil
	})
	c := harness.New(t, srv).Connect()

	tests := []struct {
		tool string
		// Either a JSON-RPC error …
		wantCode    int64
		wantMessage string
		// … or a result, raw.
		wantResult string
	}{
		{tool: "ok", wantResult: `{"content":[{"type":"text","text":"ok"}]}`},
		{tool: "fails", wantResult: `{"content":[{"type":"text","text":"the disk is full"}],"isError":true}`},
		{tool: "own-error", wantResult: `{"content":[{"type":"text","text":"nope"}],"isError":true}`},
		{tool: "nil", wantResult: `{"content":[]}`},
		{tool: "wire", wantCode: -32000, wantMessage: "backend unavailable"},
		{tool: "wrapped-wire", wantCode: messages.CodeInvalidParams, wantMessage: "invalid params: no such city"},
		{tool: "unknown", wantCode: messages.CodeInvalidParams, wantMessage: `invalid params: unknown tool "unknown"`},
		{tool: "", wantCode: messages.CodeInvalidParams},
	}
	for _, tt := range tests {
		t.Run(cmp.Or(tt.tool, "empty name"), func(t *testing.T) {
			var raw jsontext.Value
			err := c.CallResult(t.Context(), messages.MethodCallTool, map[string]any{"name": tt.tool}, &raw)
			if tt.wantCode == 0 {
				require.NoError(t, err)
				assert.JSONEq(t, tt.wantResult, string(raw))
				return
			}
			require.Error(t, err)
			e := wireError(t, err)
			assert.Equal(t, tt.wantCode, e.Code)
			if tt.wantMessage != "" {
				assert.Equal(t, tt.wantMessage, e.Message)
			}
		})
	}

	t.Run("unknown tool is invalid params", func(t *testing.T) {
		err := c.CallResult(t.Context(), messages.MethodCallTool, map[string]any{"name": "nope"}, nil)
		require.ErrorIs(t, err, messages.ErrInvalidParams)
	})
}

// Types of the typed tools below.
type (
	addIn struct {
		A    int    `json:"a" jsonschema:"description=The first addend"`
		B    int    `json:"b" jsonschema:"description=The second addend"`
		Note string `json:"note,omitempty"`
	}
	addOut struct {
		Sum int `json:"sum"`
	}
	countOut struct {
		N int `json:"n" jsonschema:"minimum=0"`
	}
	listOut struct {
		Items []string `json:"items"`
	}
)

func TestAddTypedTool(t *testing.T) {
	srv := newServer(nil)
	var calls atomic.Int32
	require.NoError(t, mcpactors.AddTypedTool(srv, &messages.Tool{Name: "add", Description: "Adds two integers"},
		func(_ context.Context, _ *mcpactors.Session, in addIn) (*messages.CallToolResult, addOut, error) {
			calls.Add(1)
			if in.Note == "fail" {
				return nil, addOut{}, errors.New("asked to fail")
			}
			if in.Note == "say" {
				return textResult(fmt.Sprintf("%d+%d", in.A, in.B)), addOut{Sum: in.A + in.B}, nil
			}
			return nil, addOut{Sum: in.A + in.B}, nil
		}))
	require.NoError(t, mcpactors.AddTypedTool(srv, &messages.Tool{Name: "count"},
		func(_ context.Context, _ *mcpactors.Session, in struct {
			N int `json:"n"`
		}) (*messages.CallToolResult, countOut, error) {
			return nil, countOut{N: in.N}, nil
		}))
	require.NoError(t, mcpactors.AddTypedTool(srv, &messages.Tool{Name: "list"},
		func(_ context.Context, _ *mcpactors.Session, in struct {
			Items []string `json:"items,omitempty"`
		}) (*messages.CallToolResult, listOut, error) {
			return nil, listOut{Items: in.Items}, nil
		}))
	require.NoError(t, mcpactors.AddTypedTool(srv, &messages.Tool{Name: "free"},
		func(context.Context, *mcpactors.Session, struct{}) (*messages.CallToolResult, any, error) {
			return textResult("free-form"), map[string]int{"x": 1}, nil
		}))
	c := harness.New(t, srv).Connect()
	tools := listedTools(t, c)

	t.Run("input schema from the struct", func(t *testing.T) {
		var in struct {
			Type       string   `json:"type"`
			Required   []string `json:"required"`
			Properties map[string]struct {
				Type        string `json:"type"`
				Description string `json:"description"`
			} `json:"properties"`
		}
		require.NoError(t, json.Unmarshal(tools["add"]["inputSchema"], &in))
		assert.Equal(t, "object", in.Type)
		assert.ElementsMatch(t, []string{"a", "b"}, in.Required, "omitempty fields are optional")
		require.Contains(t, in.Properties, "a")
		assert.Equal(t, "integer", in.Properties["a"].Type)
		assert.Equal(t, "The first addend", in.Properties["a"].Description)
		assert.Equal(t, "The second addend", in.Properties["b"].Description)
		assert.Equal(t, "string", in.Properties["note"].Type)
	})

	t.Run("output schema from the struct", func(t *testing.T) {
		var out struct {
			Type       string                    `json:"type"`
			Required   []string                  `json:"required"`
			Properties map[string]jsontext.Value `json:"properties"`
		}
		require.NoError(t, json.Unmarshal(tools["add"]["outputSchema"], &out))
		assert.Equal(t, "object", out.Type)
		assert.Equal(t, []string{"sum"}, out.Required)
		assert.Contains(t, out.Properties, "sum")
		assert.NotContains(t, tools["free"], "outputSchema", "an interface Out has no output schema")
	})

	tests := []struct {
		name       string
		tool       string
		args       string
		wantResult string // raw, compared as JSON; "" when wantError is set
		wantError  string // in the isError text
		wantCalled bool
	}{
		{
			name: "structured content doubles as text", tool: "add", args: `{"a":2,"b":3}`, wantCalled: true,
			wantResult: `{"content":[{"type":"text","text":"{\"sum\":5}"}],"structuredContent":{"sum":5}}`,
		},
		{
			name: "content given is kept", tool: "add", args: `{"a":2,"b":3,"note":"say"}`, wantCalled: true,
			wantResult: `{"content":[{"type":"text","text":"2+3"}],"structuredContent":{"sum":5}}`,
		},
		{name: "handler error", tool: "add", args: `{"a":1,"b":1,"note":"fail"}`, wantCalled: true, wantError: "asked to fail"},
		{name: "missing required field", tool: "add", args: `{"a":1}`, wantError: "b"},
		{name: "wrong type", tool: "add", args: `{"a":"one","b":1}`, wantError: "/a"},
		{name: "output breaks a keyword", tool: "count", args: `{"n":-1}`, wantError: "output schema"},
		{name: "output within the schema", tool: "count", args: `{"n":4}`, wantResult: `{"content":[{"type":"text","text":"{\"n\":4}"}],"structuredContent":{"n":4}}`},
		{name: "nil slice is an empty array", tool: "list", args: `{}`, wantResult: `{"content":[{"type":"text","text":"{\"items\":[]}"}],"structuredContent":{"items":[]}}`},
		{name: "non-nil slice fits", tool: "list", args: `{"items":["a"]}`, wantResult: `{"content":[{"type":"text","text":"{\"items\":[\"a\"]}"}],"structuredContent":{"items":["a"]}}`},
		{name: "interface output is not structured", tool: "free", args: `{}`, wantResult: `{"content":[{"type":"text","text":"free-form"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := calls.Load()
			var raw jsontext.Value
			require.NoError(t, c.CallResult(t.Context(), messages.MethodCallTool,
				map[string]any{"name": tt.tool, "arguments": jsontext.Value(tt.args)}, &raw))
			if tt.tool == "add" {
				assert.Equal(t, tt.wantCalled, calls.Load() == before+1, "handler called")
			}
			if tt.wantError == "" {
				assert.JSONEq(t, tt.wantResult, string(raw))
				return
			}
			var res messages.CallToolResult
			require.NoError(t, json.Unmarshal(raw, &res))
			assert.True(t, res.IsError, string(raw))
			assert.Contains(t, firstText(t, &res), tt.wantError)
		})
	}
}

func TestAddToolRefusesInvalidDefinitions(t *testing.T) {
	typed := func(context.Context, *mcpactors.Session, addIn) (*messages.CallToolResult, addOut, error) {
		return nil, addOut{}, nil
	}
	tests := []struct {
		name string
		add  func(*mcpactors.Server) error
	}{
		{"nil tool", func(s *mcpactors.Server) error { return s.AddTool(nil, okTool) }},
		{"empty name", func(s *mcpactors.Server) error { return s.AddTool(&messages.Tool{}, okTool) }},
		{"nil handler", func(s *mcpactors.Server) error { return s.AddTool(&messages.Tool{Name: "bad"}, nil) }},
		{"input schema of another type", func(s *mcpactors.Server) error {
			return s.AddTool(&messages.Tool{Name: "bad", InputSchema: jsontext.Value(`{"type":"string"}`)}, okTool)
		}},
		{"input schema without a type", func(s *mcpactors.Server) error {
			return s.AddTool(&messages.Tool{Name: "bad", InputSchema: jsontext.Value(`{"properties":{}}`)}, okTool)
		}},
		{"input schema not an object", func(s *mcpactors.Server) error {
			return s.AddTool(&messages.Tool{Name: "bad", InputSchema: jsontext.Value(`["object"]`)}, okTool)
		}},
		{"input schema not JSON", func(s *mcpactors.Server) error {
			return s.AddTool(&messages.Tool{Name: "bad", InputSchema: jsontext.Value(`{"type":"object"`)}, okTool)
		}},
		{"invalid input schema", func(s *mcpactors.Server) error {
			return s.AddTool(&messages.Tool{Name: "bad", InputSchema: jsontext.Value(`{"type":"object","properties":{"a":{"type":"nope"}}}`)}, okTool)
		}},
		{"dangling $ref", func(s *mcpactors.Server) error {
			return s.AddTool(&messages.Tool{Name: "bad", InputSchema: jsontext.Value(`{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}}`)}, okTool)
		}},
		{"remote $ref", func(s *mcpactors.Server) error {
			return s.AddTool(&messages.Tool{Name: "bad", InputSchema: jsontext.Value(`{"type":"object","properties":{"a":{"$ref":"https://example.com/a.json"}}}`)}, okTool)
		}},
		{"output schema of another type", func(s *mcpactors.Server) error {
			return s.AddTool(&messages.Tool{Name: "bad", OutputSchema: jsontext.Value(`{"type":"array"}`)}, okTool)
		}},
		{"invalid output schema", func(s *mcpactors.Server) error {
			return s.AddTool(&messages.Tool{Name: "bad", OutputSchema: jsontext.Value(`{"type":"object","minProperties":-1}`)}, okTool)
		}},
		{"typed: nil tool", func(s *mcpactors.Server) error { return mcpactors.AddTypedTool(s, nil, typed) }},
		{"typed: nil handler", func(s *mcpactors.Server) error {
			return mcpactors.AddTypedTool[addIn, addOut](s, &messages.Tool{Name: "bad"}, nil)
		}},
		{"typed: empty name", func(s *mcpactors.Server) error { return mcpactors.AddTypedTool(s, &messages.Tool{}, typed) }},
		{"typed: input not an object", func(s *mcpactors.Server) error {
			return mcpactors.AddTypedTool(s, &messages.Tool{Name: "bad"},
				func(context.Context, *mcpactors.Session, string) (*messages.CallToolResult, addOut, error) {
					return nil, addOut{}, nil
				})
		}},
		{"typed: output not an object", func(s *mcpactors.Server) error {
			return mcpactors.AddTypedTool(s, &messages.Tool{Name: "bad"},
				func(context.Context, *mcpactors.Session, addIn) (*messages.CallToolResult, int, error) {
					return nil, 0, nil
				})
		}},
	}
	srv := newServer(nil)
	c := harness.New(t, srv).Connect()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.add(srv)
			require.ErrorIs(t, err, mcpactors.ErrInvalidItem)
			assert.False(t, srv.HasTool("bad"))
		})
	}
	barrier(t, c)
	assert.Empty(t, c.Notifications(messages.MethodToolsListChanged), "a refused tool changes nothing")
	assert.Empty(t, listedTools(t, c))
}
