package main

import (
	"context"
	json "encoding/json/v2"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-actors/mcp-actors/bench/internal/reftools"
)

// formSchemas are the form schemas the reference tools elicit, plus the
// formats and bounds fillForm knows about.
var formSchemas = map[string]map[string]any{
	"test_elicitation": reftools.ElicitationSchema(),
	"formats": {"type": "object", "properties": map[string]any{
		"contact": map[string]any{"type": "string", "format": "email"},
		"site":    map[string]any{"type": "string", "format": "uri"},
		"day":     map[string]any{"type": "string", "format": "date"},
		"at":      map[string]any{"type": "string", "format": "date-time"},
		"long":    map[string]any{"type": "string", "minLength": 8},
	}, "required": []string{"contact", "long"}},
	"sep1034_defaults": {"type": "object", "properties": map[string]any{
		"name":     map[string]any{"type": "string", "default": "John Doe"},
		"age":      map[string]any{"type": "integer", "default": 30},
		"score":    map[string]any{"type": "number", "default": 95.5},
		"status":   map[string]any{"type": "string", "enum": []string{"active", "inactive", "pending"}, "default": "active"},
		"verified": map[string]any{"type": "boolean", "default": true},
	}},
	"sep1330_enums": {"type": "object", "properties": map[string]any{
		"untitledSingle": map[string]any{"type": "string", "enum": []string{"option1", "option2", "option3"}},
		"titledSingle": map[string]any{"type": "string", "oneOf": []any{
			map[string]any{"const": "value1", "title": "First Option"},
			map[string]any{"const": "value2", "title": "Second Option"}}},
		"legacyEnum": map[string]any{"type": "string", "enum": []string{"opt1", "opt2", "opt3"},
			"enumNames": []string{"Option One", "Option Two", "Option Three"}},
		"untitledMulti": map[string]any{"type": "array", "items": map[string]any{"type": "string", "enum": []string{"option1", "option2"}}},
		"titledMulti": map[string]any{"type": "array", "items": map[string]any{"anyOf": []any{
			map[string]any{"const": "value1", "title": "First Choice"},
			map[string]any{"const": "value2", "title": "Second Choice"}}}},
	}, "required": []string{"untitledSingle", "titledSingle", "untitledMulti", "titledMulti"}},
}

// TestFillForm elicits every schema of formSchemas through a real go-sdk
// client (which validates the answer against the schema) over an in-memory
// transport, and checks that every string property was filled.
func TestFillForm(t *testing.T) {
	ctx := context.Background()
	s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "v0"}, nil)
	var mu sync.Mutex
	got := map[string]map[string]any{}
	for name, schema := range formSchemas {
		mcp.AddTool(s, &mcp.Tool{Name: name}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "m", RequestedSchema: schema})
			if err != nil {
				return nil, nil, err
			}
			if res.Action != "accept" {
				t.Errorf("%s: action %q, want accept", name, res.Action)
			}
			mu.Lock()
			got[name] = res.Content
			mu.Unlock()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
		})
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := newHost().newClient().Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	for name, schema := range formSchemas {
		t.Run(name, func(t *testing.T) {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
			if err != nil || res.IsError {
				b, _ := json.Marshal(res)
				t.Fatalf("call: %v %s", err, b)
			}
			mu.Lock()
			content := got[name]
			mu.Unlock()
			for p, ps := range schema["properties"].(map[string]any) {
				if ps.(map[string]any)["type"] == "string" {
					if v, ok := content[p].(string); !ok || v == "" {
						t.Errorf("string property %s not filled: %v", p, content)
					}
				}
			}
		})
	}

	checks := []struct{ form, prop, want string }{
		{"test_elicitation", "username", "yes"},
		{"test_elicitation", "email", benchEmail},
		{"formats", "contact", benchEmail},
		{"formats", "site", "https://example.com/bench"},
		{"formats", "long", "yessssss"},
		{"sep1034_defaults", "name", "yes"},
		{"sep1034_defaults", "status", "active"},
		{"sep1330_enums", "untitledSingle", "option1"},
		{"sep1330_enums", "titledSingle", "value1"},
		{"sep1330_enums", "legacyEnum", "opt1"},
	}
	for _, c := range checks {
		if v := got[c.form][c.prop]; v != c.want {
			t.Errorf("%s.%s = %v, want %q", c.form, c.prop, v, c.want)
		}
	}
}

// TestFillValueRequired checks the minimal values for required properties
// without a default, and that optional ones without a default are left out.
func TestFillValueRequired(t *testing.T) {
	tests := []struct {
		name     string
		schema   map[string]any
		required bool
		want     any
		ok       bool
	}{
		{"int", map[string]any{"type": "integer"}, true, 1, true},
		{"int min", map[string]any{"type": "integer", "minimum": 3.0}, true, 3.0, true},
		{"bool", map[string]any{"type": "boolean"}, true, true, true},
		{"optional int", map[string]any{"type": "integer"}, false, nil, false},
		{"default", map[string]any{"type": "number", "default": 2.5}, false, 2.5, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, ok := fillValue(tt.name, tt.schema, tt.required)
			if v != tt.want || ok != tt.ok {
				t.Errorf("fillValue = %v, %v; want %v, %v", v, ok, tt.want, tt.ok)
			}
		})
	}
}
