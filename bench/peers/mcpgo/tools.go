package main

import (
	"context"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-actors/mcp-actors/bench/internal/reftools"
)

// newServer returns a server with the five reference tools and the client
// capabilities they use (elicitation, sampling, roots).
func newServer() *server.MCPServer {
	s := server.NewMCPServer("bench-mcpgo", "v0.0.1",
		server.WithToolCapabilities(false),
		server.WithElicitation(),
		server.WithRoots(),
	)
	s.EnableSampling()

	s.AddTool(mcp.NewTool(reftools.Echo, mcp.WithDescription("returns the text unchanged"),
		mcp.WithString("text", mcp.Required(), mcp.Description("the text to return"))), echo)
	s.AddTool(mcp.NewTool(reftools.Elicitation, mcp.WithDescription("elicits a username and an email from the client"),
		mcp.WithString("message", mcp.Required(), mcp.Description("the message shown to the user"))), elicit)
	s.AddTool(mcp.NewTool(reftools.Sampling, mcp.WithDescription("samples the client's model"),
		mcp.WithString("prompt", mcp.Required(), mcp.Description("the prompt to sample"))), sample)
	s.AddTool(mcp.NewTool(reftools.Roots, mcp.WithDescription("lists the client's roots")), roots)
	s.AddTool(mcp.NewTool(reftools.Slow, mcp.WithDescription("runs for seconds, with progress every 100 ms, then returns done"),
		mcp.WithNumber("seconds", mcp.Min(0.0), mcp.DefaultNumber(reftools.SlowDefaultSeconds),
			mcp.Description("how long to run; progress every 100 ms when a progressToken was given")),
		mcp.WithInteger("steps", mcp.Min(1),
			mcp.Description("benchmark-only: send exactly this many progress notifications, spread over seconds"))), slow)
	return s
}

// echo is test_echo: it returns the text unchanged.
func echo(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return mcp.NewToolResultText(req.GetString("text", "")), nil
}

// elicit is test_elicitation: one elicitation/create, answer echoed back.
func elicit(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	res, err := server.ServerFromContext(ctx).RequestElicitation(ctx, mcp.ElicitationRequest{
		Params: mcp.ElicitationParams{
			Message:         req.GetString("message", ""),
			RequestedSchema: reftools.ElicitationSchema(),
		},
	})
	if err != nil {
		return nil, fmt.Errorf("elicit: %w", err)
	}
	return mcp.NewToolResultText(reftools.ElicitationText(string(res.Action), res.Content)), nil
}

// sample is test_sampling: one sampling/createMessage with the prompt.
func sample(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	res, err := server.ServerFromContext(ctx).RequestSampling(ctx, mcp.CreateMessageRequest{
		CreateMessageParams: mcp.CreateMessageParams{
			Messages: []mcp.SamplingMessage{{
				Role:    mcp.RoleUser,
				Content: mcp.NewTextContent(req.GetString("prompt", "")),
			}},
			MaxTokens: reftools.SamplingMaxTokens,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("sample: %w", err)
	}
	switch c := res.Content.(type) {
	case mcp.TextContent:
		return mcp.NewToolResultText(reftools.SamplingText(c.Text)), nil
	case *mcp.TextContent:
		return mcp.NewToolResultText(reftools.SamplingText(c.Text)), nil
	default:
		return nil, fmt.Errorf("sample: content %T", res.Content)
	}
}

// roots is test_roots: one roots/list per call, the roots returned as
// structured content and as its JSON text.
func roots(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	res, err := server.ServerFromContext(ctx).RequestRoots(ctx, mcp.ListRootsRequest{})
	if err != nil {
		return nil, fmt.Errorf("roots: %w", err)
	}
	rs := res.Roots
	if rs == nil {
		rs = []mcp.Root{}
	}
	return mcp.NewToolResultStructuredOnly(map[string]any{"roots": rs}), nil
}

// slow is test_slow: progress every 100 ms (with a progressToken), then done.
func slow(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var notify func(i, n int) error
	if req.Params.Meta != nil && req.Params.Meta.ProgressToken != nil {
		srv := server.ServerFromContext(ctx)
		tok := req.Params.Meta.ProgressToken
		notify = func(i, n int) error {
			return srv.SendNotificationToClient(ctx, "notifications/progress", map[string]any{
				"progressToken": tok,
				"progress":      i,
				"total":         n,
			})
		}
	}
	if err := reftools.RunSlow(ctx, req.GetFloat("seconds", reftools.SlowDefaultSeconds), req.GetInt("steps", 0), notify); err != nil {
		return nil, fmt.Errorf("slow: %w", err)
	}
	return mcp.NewToolResultText(reftools.SlowDone), nil
}
