package harness_test

import (
	"context"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/messages"
)

// newTestServer returns a server with a few tools that exercise what the
// harness offers:
//
//	echo       returns its "text" argument
//	ask_llm    samples the client with its "prompt" argument
//	ask_user   elicits a one-field form from the client
//	list_roots asks the client for its roots
//	report     logs "working" (info), reports progress 1 of 2, returns "reported"
//	block      runs until cancelled
//	add_tool   adds the tool "extra" (a list_changed broadcast), returns "added"
func newTestServer(tb testing.TB) *mcpactors.Server {
	srv := mcpactors.NewServer(messages.Implementation{Name: "harness-test", Version: "0.0.0"}, nil)
	add := func(name string, schema string, h mcpactors.ToolHandler) {
		var in jsontext.Value
		if schema != "" {
			in = jsontext.Value(schema)
		}
		require.NoError(tb, srv.AddTool(&messages.Tool{Name: name, Description: name, InputSchema: in}, h))
	}
	add("echo", `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`,
		func(_ context.Context, _ *mcpactors.Session, req *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			var args struct {
				Text string `json:"text"`
			}
			if err := json.Unmarshal(req.Arguments, &args); err != nil {
				return nil, err
			}
			return text(args.Text), nil
		})
	add("ask_llm", `{"type":"object","properties":{"prompt":{"type":"string"}},"required":["prompt"]}`,
		func(ctx context.Context, s *mcpactors.Session, req *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			var args struct {
				Prompt string `json:"prompt"`
			}
			if err := json.Unmarshal(req.Arguments, &args); err != nil {
				return nil, err
			}
			res, err := s.CreateMessage(ctx, &messages.CreateMessageParams{
				Messages:  []*messages.SamplingMessage{{Role: messages.RoleUser, Content: messages.ContentList{&messages.TextContent{Text: args.Prompt}}}},
				MaxTokens: 10,
			})
			if err != nil {
				return nil, err
			}
			for _, c := range res.Content {
				if t, ok := c.(*messages.TextContent); ok {
					return text(res.Model + ": " + t.Text), nil
				}
			}
			return nil, fmt.Errorf("no text in the answer")
		})
	add("ask_user", "",
		func(ctx context.Context, s *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			res, err := s.ElicitForm(ctx, &messages.ElicitParams{
				Message:         "Name?",
				RequestedSchema: jsontext.Value(`{"type":"object","properties":{"name":{"type":"string"}}}`),
			})
			if err != nil {
				return nil, err
			}
			return text(fmt.Sprintf("action=%s content=%s", res.Action, string(res.Content))), nil
		})
	add("list_roots", "",
		func(ctx context.Context, s *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			roots, err := s.ListRoots(ctx, mcpactors.FreshRoots())
			if err != nil {
				return nil, err
			}
			raw, err := json.Marshal(roots)
			if err != nil {
				return nil, err
			}
			return text(string(raw)), nil
		})
	add("report", "",
		func(ctx context.Context, s *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			if err := s.Log(ctx, messages.LevelInfo, "test", "working"); err != nil {
				return nil, err
			}
			if err := s.Progress(ctx, 1, 2, "half"); err != nil {
				return nil, err
			}
			return text("reported"), nil
		})
	add("block", "",
		func(ctx context.Context, _ *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})
	add("add_tool", "",
		func(context.Context, *mcpactors.Session, *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			err := srv.AddTool(&messages.Tool{Name: "extra", Description: "extra"},
				func(context.Context, *mcpactors.Session, *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
					return text("extra"), nil
				})
			if err != nil {
				return nil, err
			}
			return text("added"), nil
		})
	return srv
}

// text is a tool result of one text block.
func text(s string) *messages.CallToolResult {
	return &messages.CallToolResult{Content: messages.ContentList{&messages.TextContent{Text: s}}}
}

// toolText returns the text of a tools/call result of one text block.
func toolText(t *testing.T, m *messages.Message) (string, bool) {
	t.Helper()
	require.Nil(t, m.Error, "tools/call failed: %v", m.Error)
	var res struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	require.NoError(t, json.Unmarshal(m.Result, &res))
	require.Len(t, res.Content, 1)
	require.Equal(t, "text", res.Content[0].Type)
	return res.Content[0].Text, res.IsError
}

// callTool is the params of a tools/call.
func callTool(name string, args any) map[string]any {
	p := map[string]any{"name": name}
	if args != nil {
		p["arguments"] = args
	}
	return p
}
