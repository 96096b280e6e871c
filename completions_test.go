package mcpactors_test

import (
	"context"
	"encoding/json/jsontext"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/harness"
	"github.com/mcp-actors/mcp-actors/messages"
)

// emptyCompletion is a completion handler that suggests nothing.
func emptyCompletion(context.Context, *mcpactors.Session, *messages.CompleteParams) (*messages.CompleteResult, error) {
	return nil, nil
}

// prefixCompletion suggests the values starting with the argument's value.
func prefixCompletion(values ...string) mcpactors.CompletionHandler {
	return func(_ context.Context, _ *mcpactors.Session, p *messages.CompleteParams) (*messages.CompleteResult, error) {
		out := []string{}
		for _, v := range values {
			if strings.HasPrefix(v, p.Argument.Value) {
				out = append(out, v)
			}
		}
		return &messages.CompleteResult{Completion: messages.CompletionResultValues{Values: out}}, nil
	}
}

func TestComplete(t *testing.T) {
	srv := newServer(nil)
	for _, name := range []string{"lang", "many", "plain"} {
		require.NoError(t, srv.AddPrompt(&messages.Prompt{Name: name}, okPrompt))
	}
	require.NoError(t, srv.AddResourceTemplate(&messages.ResourceTemplate{URITemplate: "test://items/{id}", Name: "item"}, okResource))
	require.NoError(t, srv.AddResourceTemplate(&messages.ResourceTemplate{URITemplate: "test://plain/{id}", Name: "plain"}, okResource))

	var lastParams atomic.Pointer[messages.CompleteParams]
	lang := prefixCompletion("go", "gleam", "rust")
	require.NoError(t, srv.AddCompletion(messages.CompleteReference{Type: messages.RefPrompt, Name: "lang"},
		func(ctx context.Context, s *mcpactors.Session, p *messages.CompleteParams) (*messages.CompleteResult, error) {
			lastParams.Store(p)
			return lang(ctx, s, p)
		}))
	many := make([]string, 150)
	for i := range many {
		many[i] = fmt.Sprintf("v%03d", i)
	}
	require.NoError(t, srv.AddCompletion(messages.CompleteReference{Type: messages.RefPrompt, Name: "many"}, prefixCompletion(many...)))
	require.NoError(t, srv.AddCompletion(messages.CompleteReference{Type: messages.RefResource, URI: "test://items/{id}"}, prefixCompletion("1", "10", "2")))
	// A completion may name a prompt that is not (yet) in the catalog.
	require.NoError(t, srv.AddCompletion(messages.CompleteReference{Type: messages.RefPrompt, Name: "later"}, prefixCompletion("x")))
	c := harness.New(t, srv).Connect()

	first100 := `"` + strings.Join(many[:100], `","`) + `"`
	tests := []struct {
		name       string
		params     string
		wantResult string // raw, compared as JSON
		wantCode   int64  // a JSON-RPC error instead
	}{
		{
			name:       "prompt",
			params:     `{"ref":{"type":"ref/prompt","name":"lang"},"argument":{"name":"language","value":"g"}}`,
			wantResult: `{"completion":{"values":["go","gleam"]}}`,
		},
		{
			name:       "nothing matches",
			params:     `{"ref":{"type":"ref/prompt","name":"lang"},"argument":{"name":"language","value":"z"}}`,
			wantResult: `{"completion":{"values":[]}}`,
		},
		{
			name:       "more than 100 values",
			params:     `{"ref":{"type":"ref/prompt","name":"many"},"argument":{"name":"v","value":""}}`,
			wantResult: `{"completion":{"values":[` + first100 + `],"hasMore":true}}`,
		},
		{
			name:       "resource template",
			params:     `{"ref":{"type":"ref/resource","uri":"test://items/{id}"},"argument":{"name":"id","value":"1"}}`,
			wantResult: `{"completion":{"values":["1","10"]}}`,
		},
		{
			name:       "known prompt without a handler",
			params:     `{"ref":{"type":"ref/prompt","name":"plain"},"argument":{"name":"x","value":""}}`,
			wantResult: `{"completion":{"values":[]}}`,
		},
		{
			name:       "known template without a handler",
			params:     `{"ref":{"type":"ref/resource","uri":"test://plain/{id}"},"argument":{"name":"id","value":""}}`,
			wantResult: `{"completion":{"values":[]}}`,
		},
		{
			name:       "handler returns nil",
			params:     `{"ref":{"type":"ref/prompt","name":"later"},"argument":{"name":"x","value":"y"}}`,
			wantResult: `{"completion":{"values":[]}}`,
		},
		{name: "unknown prompt", params: `{"ref":{"type":"ref/prompt","name":"nope"},"argument":{"name":"x","value":""}}`, wantCode: messages.CodeInvalidParams},
		{name: "unknown template", params: `{"ref":{"type":"ref/resource","uri":"test://nope/{id}"},"argument":{"name":"x","value":""}}`, wantCode: messages.CodeInvalidParams},
		{name: "bad ref type", params: `{"ref":{"type":"ref/tool","name":"lang"},"argument":{"name":"x","value":""}}`, wantCode: messages.CodeInvalidParams},
		{name: "prompt ref without a name", params: `{"ref":{"type":"ref/prompt"},"argument":{"name":"x","value":""}}`, wantCode: messages.CodeInvalidParams},
		{name: "resource ref without a uri", params: `{"ref":{"type":"ref/resource","name":"lang"},"argument":{"name":"x","value":""}}`, wantCode: messages.CodeInvalidParams},
		{name: "no ref", params: `{"argument":{"name":"x","value":""}}`, wantCode: messages.CodeInvalidParams},
		{name: "ref not an object", params: `{"ref":"lang","argument":{"name":"x","value":""}}`, wantCode: messages.CodeInvalidParams},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var raw jsontext.Value
			err := c.CallResult(t.Context(), messages.MethodComplete, jsontext.Value(tt.params), &raw)
			if tt.wantCode == 0 {
				require.NoError(t, err)
				assert.JSONEq(t, tt.wantResult, string(raw))
				return
			}
			require.ErrorIs(t, err, messages.ErrInvalidParams)
		})
	}

	t.Run("the handler sees the params", func(t *testing.T) {
		rawResult(t, c, messages.MethodComplete, jsontext.Value(
			`{"ref":{"type":"ref/prompt","name":"lang"},"argument":{"name":"language","value":"r"},"context":{"arguments":{"level":"expert"}}}`))
		p := lastParams.Load()
		require.NotNil(t, p)
		assert.Equal(t, messages.CompleteArgument{Name: "language", Value: "r"}, p.Argument)
		require.NotNil(t, p.Context)
		assert.Equal(t, map[string]string{"level": "expert"}, p.Context.Arguments)
	})

	t.Run("removed handler", func(t *testing.T) {
		ref := messages.CompleteReference{Type: messages.RefPrompt, Name: "later"}
		srv.RemoveCompletion(ref)
		var res messages.CompleteResult
		err := c.CallResult(t.Context(), messages.MethodComplete, &messages.CompleteParams{Ref: &ref}, &res)
		require.ErrorIs(t, err, messages.ErrInvalidParams, "no handler and no such prompt")
	})
}

func TestAddCompletionRefusesInvalidReferences(t *testing.T) {
	tests := []struct {
		name string
		ref  messages.CompleteReference
		h    mcpactors.CompletionHandler
	}{
		{"empty ref", messages.CompleteReference{}, emptyCompletion},
		{"unknown type", messages.CompleteReference{Type: "ref/tool", Name: "x"}, emptyCompletion},
		{"prompt without a name", messages.CompleteReference{Type: messages.RefPrompt, URI: "test://x"}, emptyCompletion},
		{"resource without a uri", messages.CompleteReference{Type: messages.RefResource, Name: "x"}, emptyCompletion},
		{"nil handler", messages.CompleteReference{Type: messages.RefPrompt, Name: "x"}, nil},
	}
	srv := newServer(nil)
	harness.New(t, srv)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.ErrorIs(t, srv.AddCompletion(tt.ref, tt.h), mcpactors.ErrInvalidItem)
		})
	}
}
