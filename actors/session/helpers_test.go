package session_test

import (
	"context"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"testing"

	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/harness"
	"github.com/mcp-actors/mcp-actors/messages"
)

// newServer returns a server with one tool, "run", whose behaviour each test
// supplies.
func newServer(t *testing.T, run mcpactors.ToolHandler) *mcpactors.Server {
	t.Helper()
	srv := mcpactors.NewServer(messages.Implementation{Name: "session-test", Version: "1"}, nil)
	require.NoError(t, srv.AddTool(&messages.Tool{Name: "run", Description: "test tool"}, run))
	return srv
}

// text is a tool result with one text block.
func text(s string) *messages.CallToolResult {
	return &messages.CallToolResult{Content: messages.ContentList{&messages.TextContent{Text: s}}}
}

// callRun calls the "run" tool and returns its first text.
func callRun(t *testing.T, c *harness.Client, args any) string {
	t.Helper()
	var res messages.CallToolResult
	require.NoError(t, c.CallResult(context.Background(), messages.MethodCallTool,
		map[string]any{"name": "run", "arguments": args}, &res))
	require.NotEmpty(t, res.Content)
	tc, ok := res.Content[0].(*messages.TextContent)
	require.True(t, ok)
	return tc.Text
}

// methods lists the methods of everything the client received, in order.
func methods(c *harness.Client) []string {
	var out []string
	for _, r := range c.Received() {
		if r.Msg != nil && r.Msg.Method != "" {
			out = append(out, r.Msg.Method)
		}
	}
	return out
}

func mustJSON(t *testing.T, v any) jsontext.Value {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

func jsonUnmarshal(raw jsontext.Value, v any) error { return json.Unmarshal(raw, v) }
