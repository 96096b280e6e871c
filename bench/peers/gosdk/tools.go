package main

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-actors/mcp-actors/bench/internal/reftools"
)

// Typed arguments and results of the reference tools; the SDK derives the
// input schemas from them (test_slow's is given, for its default).
type (
	echoArgs struct {
		Text string `json:"text" jsonschema:"the text to return"`
	}
	elicitArgs struct {
		Message string `json:"message" jsonschema:"the message shown to the user"`
	}
	samplingArgs struct {
		Prompt string `json:"prompt" jsonschema:"the prompt to sample"`
	}
	rootsArgs   struct{}
	rootsResult struct {
		Roots []*mcp.Root `json:"roots"`
	}
	slowArgs struct {
		Seconds float64 `json:"seconds"`
		Steps   int     `json:"steps,omitempty"`
	}
)

// slowSchema is test_slow's input schema, explicit so that "seconds" gets
// its default of 5.
var slowSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"seconds": map[string]any{"type": "number", "minimum": 0, "default": reftools.SlowDefaultSeconds,
			"description": "how long to run; progress every 100 ms when a progressToken was given"},
		"steps": map[string]any{"type": "integer", "minimum": 1,
			"description": "benchmark-only: send exactly this many progress notifications, spread over seconds"},
	},
}

// newServer returns a server with the five reference tools.
func newServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "bench-gosdk", Version: "v0.0.1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: reftools.Echo, Description: "returns the text unchanged"}, echo)
	mcp.AddTool(s, &mcp.Tool{Name: reftools.Elicitation, Description: "elicits a username and an email from the client"}, elicit)
	mcp.AddTool(s, &mcp.Tool{Name: reftools.Sampling, Description: "samples the client's model"}, sample)
	mcp.AddTool(s, &mcp.Tool{Name: reftools.Roots, Description: "lists the client's roots"}, roots)
	mcp.AddTool(s, &mcp.Tool{Name: reftools.Slow, Description: "runs for seconds, with progress every 100 ms, then returns done", InputSchema: slowSchema}, slow)
	return s
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// echo is test_echo: it returns the text unchanged.
func echo(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
	return text(in.Text), nil, nil
}

// elicit is test_elicitation: one elicitation/create, answer echoed back.
func elicit(ctx context.Context, req *mcp.CallToolRequest, in elicitArgs) (*mcp.CallToolResult, any, error) {
	res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{
		Message:         in.Message,
		RequestedSchema: reftools.ElicitationSchema(),
	})
	if err != nil {
		return nil, nil, fmt.Errorf("elicit: %w", err)
	}
	return text(reftools.ElicitationText(res.Action, res.Content)), nil, nil
}

// sample is test_sampling: one sampling/createMessage with the prompt.
func sample(ctx context.Context, req *mcp.CallToolRequest, in samplingArgs) (*mcp.CallToolResult, any, error) {
	res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{
		Messages:  []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: in.Prompt}}},
		MaxTokens: reftools.SamplingMaxTokens,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("sample: %w", err)
	}
	tc, ok := res.Content.(*mcp.TextContent)
	if !ok {
		return nil, nil, fmt.Errorf("sample: content %T", res.Content)
	}
	return text(reftools.SamplingText(tc.Text)), nil, nil
}

// roots is test_roots: one roots/list per call. The SDK fills Content with
// the JSON text of the structured result.
func roots(ctx context.Context, req *mcp.CallToolRequest, _ rootsArgs) (*mcp.CallToolResult, rootsResult, error) {
	res, err := req.Session.ListRoots(ctx, nil)
	if err != nil {
		return nil, rootsResult{}, fmt.Errorf("roots: %w", err)
	}
	return nil, rootsResult{Roots: res.Roots}, nil
}

// slow is test_slow: progress every 100 ms (with a progressToken), then done.
func slow(ctx context.Context, req *mcp.CallToolRequest, in slowArgs) (*mcp.CallToolResult, any, error) {
	var notify func(i, n int) error
	if tok := req.Params.GetProgressToken(); tok != nil {
		notify = func(i, n int) error {
			return req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: tok, Progress: float64(i), Total: float64(n),
			})
		}
	}
	if err := reftools.RunSlow(ctx, in.Seconds, in.Steps, notify); err != nil {
		return nil, nil, fmt.Errorf("slow: %w", err)
	}
	return text(reftools.SlowDone), nil, nil
}
