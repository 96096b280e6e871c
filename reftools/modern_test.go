package reftools_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/messages"
)

// TestModernGoSDK drives the reference set with the official Go SDK client
// at its default version (2026-07-28): discover, no session, elicitation,
// sampling and roots through input_required rounds, each input asked once
// per call.
func TestModernGoSDK(t *testing.T) {
	url := wireServer(t, false)
	var elicits, samples atomic.Int64
	client := mcp.NewClient(&mcp.Implementation{Name: "modern", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			elicits.Add(1)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"username": "ada", "email": "ada@example.com"}}, nil
		},
		CreateMessageHandler: func(_ context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			samples.Add(1)
			return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "sampled"}}, nil
		},
	})
	client.AddRoots(&mcp.Root{URI: "file:///a", Name: "a"})
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	require.NoError(t, err)
	defer cs.Close()
	assert.Equal(t, messages.Version20260728, cs.InitializeResult().ProtocolVersion)
	assert.Empty(t, cs.ID(), "no session")

	text := func(r *mcp.CallToolResult) string {
		var b strings.Builder
		for _, c := range r.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String()
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_echo", Arguments: map[string]any{"text": "hi"}})
	require.NoError(t, err)
	assert.Equal(t, "hi", text(res))

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_elicitation", Arguments: map[string]any{"message": "who?"}})
	require.NoError(t, err)
	assert.Contains(t, text(res), "ada@example.com")
	assert.EqualValues(t, 1, elicits.Load())

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_sampling", Arguments: map[string]any{"prompt": "p"}})
	require.NoError(t, err)
	assert.Equal(t, "LLM response: sampled", text(res))
	assert.EqualValues(t, 1, samples.Load())

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_roots"})
	require.NoError(t, err)
	assert.Contains(t, text(res), "file:///a")

	tools, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	assert.NotEmpty(t, tools.Tools)
}
