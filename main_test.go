package mcpactors_test

import (
	"context"
	"encoding/json/jsontext"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/harness"
	"github.com/mcp-actors/mcp-actors/messages"
)

func TestMain(m *testing.M) {
	// Goroutines that run before any test (a library's, started when it
	// is loaded, such as panjf2000/ants's default pool) are not leaks.
	goleak.VerifyTestMain(m, goleak.IgnoreCurrent())
}

// newServer returns an empty server; opts may be nil.
func newServer(opts *mcpactors.Options) *mcpactors.Server {
	return mcpactors.NewServer(messages.Implementation{Name: "mcpactors-test", Version: "1.0.0"}, opts)
}

// textResult is a tool result with one text block.
func textResult(s string) *messages.CallToolResult {
	return &messages.CallToolResult{Content: messages.ContentList{&messages.TextContent{Text: s}}}
}

// firstText returns the text of the first content block of res.
func firstText(t *testing.T, res *messages.CallToolResult) string {
	t.Helper()
	require.NotEmpty(t, res.Content)
	tc, ok := res.Content[0].(*messages.TextContent)
	require.Truef(t, ok, "first block is %T, not text", res.Content[0])
	return tc.Text
}

// callTool calls a tool and returns its result; a JSON-RPC error fails the
// test.
func callTool(t *testing.T, c *harness.Client, params any) *messages.CallToolResult {
	t.Helper()
	var res messages.CallToolResult
	require.NoError(t, c.CallResult(t.Context(), messages.MethodCallTool, params, &res))
	return &res
}

// rawResult makes a call and returns its result exactly as the server
// wrote it; a JSON-RPC error fails the test.
func rawResult(t *testing.T, c *harness.Client, method string, params any) jsontext.Value {
	t.Helper()
	var raw jsontext.Value
	require.NoError(t, c.CallResult(t.Context(), method, params, &raw))
	return raw
}

// barrier pings the session and waits for the answer. The mailbox is FIFO,
// so anything sent to the session before barrier was called has been
// handled, and delivered to the client, when it returns.
func barrier(t *testing.T, c *harness.Client) {
	t.Helper()
	require.NoError(t, c.CallResult(t.Context(), messages.MethodPing, nil, nil))
}

// wireError returns err as the *messages.Error the server sent.
func wireError(t *testing.T, err error) *messages.Error {
	t.Helper()
	var e *messages.Error
	require.Truef(t, errors.As(err, &e), "%v is not a JSON-RPC error", err)
	return e
}

// okTool is a tool handler that answers "ok".
func okTool(context.Context, *mcpactors.Session, *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
	return textResult("ok"), nil
}

// okPrompt is a prompt handler with one user message, "ok".
func okPrompt(context.Context, *mcpactors.Session, *mcpactors.GetPromptRequest) (*messages.GetPromptResult, error) {
	return &messages.GetPromptResult{Messages: []*messages.PromptMessage{
		{Role: messages.RoleUser, Content: &messages.TextContent{Text: "ok"}},
	}}, nil
}

// okResource is a resource handler whose contents are the text "ok".
func okResource(_ context.Context, _ *mcpactors.Session, req *mcpactors.ReadResourceRequest) (*messages.ReadResourceResult, error) {
	return &messages.ReadResourceResult{Contents: []*messages.ResourceContents{{URI: req.URI, Text: "ok"}}}, nil
}
