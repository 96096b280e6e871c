package mcpactors_test

import (
	"context"
	"encoding/json/jsontext"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/harness"
	"github.com/mcp-actors/mcp-actors/messages"
)

func TestGetPrompt(t *testing.T) {
	srv := newServer(nil)
	greet := &messages.Prompt{
		Name:        "greet",
		Description: "Greets someone",
		Arguments: []*messages.PromptArgument{
			{Name: "name", Description: "Who to greet", Required: true},
			{Name: "style"},
		},
	}
	require.NoError(t, srv.AddPrompt(greet,
		func(_ context.Context, _ *mcpactors.Session, req *mcpactors.GetPromptRequest) (*messages.GetPromptResult, error) {
			keys := slices.Sorted(maps.Keys(req.Arguments))
			return &messages.GetPromptResult{
				Description: "Greeting",
				Messages: []*messages.PromptMessage{{
					Role:    messages.RoleUser,
					Content: &messages.TextContent{Text: fmt.Sprintf("%s: hello %s %v", req.Name, req.Arguments["name"], keys)},
				}},
			}, nil
		}))
	require.NoError(t, srv.AddPrompt(&messages.Prompt{Name: "empty"},
		func(context.Context, *mcpactors.Session, *mcpactors.GetPromptRequest) (*messages.GetPromptResult, error) {
			return nil, nil
		}))
	require.NoError(t, srv.AddPrompt(&messages.Prompt{Name: "refuses"},
		func(context.Context, *mcpactors.Session, *mcpactors.GetPromptRequest) (*messages.GetPromptResult, error) {
			return nil, messages.Errorf(messages.CodeInvalidParams, "invalid params: not today")
		}))
	c := harness.New(t, srv).Connect()

	t.Run("listed", func(t *testing.T) {
		assert.JSONEq(t, `{"prompts":[
			{"name":"empty"},
			{"name":"greet","description":"Greets someone","arguments":[
				{"name":"name","description":"Who to greet","required":true},
				{"name":"style"}]},
			{"name":"refuses"}]}`,
			string(rawResult(t, c, messages.MethodListPrompts, nil)))
	})

	tests := []struct {
		name       string
		params     string
		wantResult string // raw, compared as JSON
		wantCode   int64  // a JSON-RPC error instead
	}{
		{
			name:       "with arguments",
			params:     `{"name":"greet","arguments":{"name":"Ada","style":"warm"}}`,
			wantResult: `{"description":"Greeting","messages":[{"role":"user","content":{"type":"text","text":"greet: hello Ada [name style]"}}]}`,
		},
		{
			name:       "optional argument left out",
			params:     `{"name":"greet","arguments":{"name":"Ada"}}`,
			wantResult: `{"description":"Greeting","messages":[{"role":"user","content":{"type":"text","text":"greet: hello Ada [name]"}}]}`,
		},
		{
			name:       "required argument given empty",
			params:     `{"name":"greet","arguments":{"name":""}}`,
			wantResult: `{"description":"Greeting","messages":[{"role":"user","content":{"type":"text","text":"greet: hello  [name]"}}]}`,
		},
		{name: "nil result", params: `{"name":"empty"}`, wantResult: `{"messages":[]}`},
		{name: "missing required argument", params: `{"name":"greet","arguments":{"style":"warm"}}`, wantCode: messages.CodeInvalidParams},
		{name: "no arguments at all", params: `{"name":"greet"}`, wantCode: messages.CodeInvalidParams},
		{name: "unknown prompt", params: `{"name":"nope","arguments":{"name":"Ada"}}`, wantCode: messages.CodeInvalidParams},
		{name: "no name", params: `{}`, wantCode: messages.CodeInvalidParams},
		{name: "arguments not strings", params: `{"name":"greet","arguments":{"name":1}}`, wantCode: messages.CodeInvalidParams},
		{name: "handler's JSON-RPC error", params: `{"name":"refuses"}`, wantCode: messages.CodeInvalidParams},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var raw jsontext.Value
			err := c.CallResult(t.Context(), messages.MethodGetPrompt, jsontext.Value(tt.params), &raw)
			if tt.wantCode == 0 {
				require.NoError(t, err)
				assert.JSONEq(t, tt.wantResult, string(raw))
				return
			}
			require.ErrorIs(t, err, messages.ErrInvalidParams)
		})
	}
}

func TestAddPromptRefusesInvalidDefinitions(t *testing.T) {
	tests := []struct {
		name string
		p    *messages.Prompt
		h    mcpactors.PromptHandler
	}{
		{"nil prompt", nil, okPrompt},
		{"no name", &messages.Prompt{}, okPrompt},
		{"nil handler", &messages.Prompt{Name: "x"}, nil},
	}
	srv := newServer(nil)
	h := harness.New(t, srv)
	c := h.Connect()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.ErrorIs(t, srv.AddPrompt(tt.p, tt.h), mcpactors.ErrInvalidItem)
		})
	}
	barrier(t, c)
	assert.Empty(t, c.Notifications(""))
	assert.Empty(t, listKinds[1].all(t, c))
}
