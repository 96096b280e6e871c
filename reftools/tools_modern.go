package reftools

import (
	"context"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"fmt"
	"strings"
	"sync"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/messages"
)

// The fixtures of the 2026-07-28 conformance suite
// (@modelcontextprotocol/conformance 0.2): tools that ask the client for
// input through input_required rounds (named as the suite expects), that
// need a capability, log, change the catalog for subscriptions/listen, or
// mirror parameters into headers. Each is an ordinary handler: it calls
// Elicit, CreateMessage or ListRoots as it would in a legacy session.

// Schemas of the fixtures.
var (
	nameForm    = jsontext.Value(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)
	confirmForm = jsontext.Value(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`)
	colorForm   = jsontext.Value(`{"type":"object","properties":{"color":{"type":"string"}},"required":["color"]}`)
	contextForm = jsontext.Value(`{"type":"object","properties":{"context":{"type":"string"}},"required":["context"]}`)
	headerInput = jsontext.Value(`{"type":"object","properties":{` +
		`"region":{"type":"string","description":"Mirrored into Mcp-Param-Region","x-mcp-header":"Region"},` +
		`"priority":{"type":"integer","description":"Mirrored into Mcp-Param-Priority","x-mcp-header":"Priority"},` +
		`"verbose":{"type":"boolean","description":"Mirrored into Mcp-Param-Verbose","x-mcp-header":"Verbose"}},` +
		`"required":["region"]}`)
)

// triggerTool is the hidden tool test_trigger_tool_change adds and
// removes, and triggerPrompt the prompt test_trigger_prompt_change does.
const (
	triggerTool   = "test_trigger_hidden_tool"
	triggerPrompt = "test_trigger_hidden_prompt"
)

// askForm elicits form under the input key, and returns the answer's
// content decoded, or the tool's error (a declined form is one).
func askForm(ctx context.Context, sess *mcpactors.Session, key, message string, form jsontext.Value) (map[string]any, error) {
	res, err := sess.ElicitForm(mcpactors.InputKey(ctx, key), &messages.ElicitParams{Message: message, RequestedSchema: form})
	if err != nil {
		return nil, err
	}
	if res.Action != messages.ElicitAccept {
		return nil, fmt.Errorf("the user answered %q", res.Action)
	}
	var content map[string]any
	if err := json.Unmarshal(res.Content, &content); err != nil {
		return nil, fmt.Errorf("the answer is not an object: %w", err)
	}
	return content, nil
}

// sample asks the client's model prompt under the input key, and returns
// its text.
func sample(ctx context.Context, sess *mcpactors.Session, key, prompt string, maxTokens int64) (string, error) {
	res, err := sess.CreateMessage(mcpactors.InputKey(ctx, key), &messages.CreateMessageParams{
		Messages:  []*messages.SamplingMessage{{Role: messages.RoleUser, Content: messages.ContentList{&messages.TextContent{Text: prompt}}}},
		MaxTokens: maxTokens,
	})
	if err != nil {
		return "", err
	}
	for _, c := range res.Content {
		if t, ok := c.(*messages.TextContent); ok {
			return t.Text, nil
		}
	}
	return "", nil
}

// rootsText lists the client's roots under the input key.
func rootsText(ctx context.Context, sess *mcpactors.Session, key string) (string, error) {
	roots, err := sess.ListRoots(mcpactors.InputKey(ctx, key))
	if err != nil {
		return "", err
	}
	uris := make([]string, len(roots))
	for i, r := range roots {
		uris[i] = r.URI
	}
	return strings.Join(uris, ", "), nil
}

// addModernTools adds the fixtures. They come after every other tool:
// the suite calls the first tool listed with no arguments.
func (s *refSet) addModernTools() error {
	err := s.addTools([]tool{
		{&messages.Tool{Name: "test_input_required_result_elicitation", Description: "Asks the user's name (input request user_name) and greets them", InputSchema: noArgs},
			func(ctx context.Context, sess *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
				a, err := askForm(ctx, sess, "user_name", "What is your name?", nameForm)
				if err != nil {
					return nil, err
				}
				return text(fmt.Sprintf("Hello, %v!", a["name"])), nil
			}},
		{&messages.Tool{Name: "test_input_required_result_sampling", Description: "Asks the client's model a question (input request capital_question)", InputSchema: noArgs},
			func(ctx context.Context, sess *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
				answer, err := sample(ctx, sess, "capital_question", "What is the capital of France?", 100)
				if err != nil {
					return nil, err
				}
				return text("The model answered: " + answer), nil
			}},
		{&messages.Tool{Name: "test_input_required_result_list_roots", Description: "Lists the client's roots (input request client_roots)", InputSchema: noArgs},
			func(ctx context.Context, sess *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
				roots, err := rootsText(ctx, sess, "client_roots")
				if err != nil {
					return nil, err
				}
				return text("Roots: " + roots), nil
			}},
		{&messages.Tool{Name: "test_input_required_result_request_state", Description: "Asks for a confirmation (input request confirm); the round's state travels in requestState", InputSchema: noArgs},
			func(ctx context.Context, sess *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
				a, err := askForm(ctx, sess, "confirm", "Please confirm", confirmForm)
				if err != nil {
					return nil, err
				}
				return text(fmt.Sprintf("state-ok: confirmed=%v", a["ok"])), nil
			}},
		{&messages.Tool{Name: "test_input_required_result_tampered_state", Description: "Asks for a confirmation; a retry with a tampered requestState is refused", InputSchema: noArgs},
			func(ctx context.Context, sess *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
				a, err := askForm(ctx, sess, "confirm", "Please confirm", confirmForm)
				if err != nil {
					return nil, err
				}
				return text(fmt.Sprintf("confirmed=%v", a["ok"])), nil
			}},
		{&messages.Tool{Name: "test_input_required_result_multiple_inputs", Description: "Asks for a name, a sampled greeting and the roots at once: one round", InputSchema: noArgs},
			func(ctx context.Context, sess *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
				var wg sync.WaitGroup
				var name map[string]any
				var greeting, roots string
				errs := make([]error, 3)
				wg.Go(func() { name, errs[0] = askForm(ctx, sess, "user_name", "What is your name?", nameForm) })
				wg.Go(func() { greeting, errs[1] = sample(ctx, sess, "greeting", "Generate a greeting", 50) })
				wg.Go(func() { roots, errs[2] = rootsText(ctx, sess, "client_roots") })
				wg.Wait()
				for _, err := range errs {
					if err != nil {
						return nil, err
					}
				}
				return text(fmt.Sprintf("%s %v (roots: %s)", greeting, name["name"], roots)), nil
			}},
		{&messages.Tool{Name: "test_input_required_result_multi_round", Description: "Asks for a name, then a favourite colour: two rounds", InputSchema: noArgs},
			func(ctx context.Context, sess *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
				a, err := askForm(ctx, sess, "step1", "Step 1: What is your name?", nameForm)
				if err != nil {
					return nil, err
				}
				b, err := askForm(ctx, sess, "step2", "Step 2: What is your favorite color?", colorForm)
				if err != nil {
					return nil, err
				}
				return text(fmt.Sprintf("%v likes %v", a["name"], b["color"])), nil
			}},
		{&messages.Tool{Name: "test_input_required_result_capabilities", Description: "Asks through whichever of elicitation, sampling and roots the request declares", InputSchema: noArgs},
			func(ctx context.Context, sess *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
				caps := sess.ClientCapabilities()
				var out string
				var err error
				switch {
				case caps.SupportsFormElicitation():
					var a map[string]any
					a, err = askForm(ctx, sess, "user_name", "What is your name?", nameForm)
					out = fmt.Sprint("elicited: ", a["name"])
				case caps.SupportsSampling():
					out, err = sample(ctx, sess, "capital_question", "What is the capital of France?", 100)
					out = "sampled: " + out
				default:
					out, err = rootsText(ctx, sess, "client_roots")
					out = "roots: " + out
				}
				if err != nil {
					return nil, err
				}
				return text(out), nil
			}},
		{&messages.Tool{Name: "test_missing_capability", Description: "Needs the client's sampling capability: without it the request is refused (-32021)", InputSchema: noArgs},
			func(ctx context.Context, sess *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
				answer, err := sample(ctx, sess, "", "Say hello", 20)
				if err != nil {
					return nil, err
				}
				return text(answer), nil
			}},
		{&messages.Tool{Name: "test_streaming_elicitation", Description: "Asks the user a question: in 2026-07-28 an input request, never a request on the stream", InputSchema: noArgs},
			func(ctx context.Context, sess *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
				a, err := askForm(ctx, sess, "user_name", "What is your name?", nameForm)
				if err != nil {
					return nil, err
				}
				return text(fmt.Sprint("Hello, ", a["name"])), nil
			}},
		{&messages.Tool{Name: "test_logging_tool", Description: "Logs one message at info (sent only at the request's logLevel) and returns", InputSchema: noArgs},
			func(ctx context.Context, sess *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
				if err := sess.Log(ctx, messages.LevelInfo, "test_logging_tool", "logged"); err != nil {
					return nil, err
				}
				return text("logged"), nil
			}},
		{&messages.Tool{Name: "test_trigger_tool_change", Description: "Adds and removes a hidden tool: listeners of tool list changes are told, the list ends as it was", InputSchema: noArgs},
			func(ctx context.Context, _ *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
				for _, on := range []bool{true, false} {
					if err := s.srv.SetToolEnabled(ctx, triggerTool, on); err != nil {
						return nil, err
					}
				}
				return text("tool list changed"), nil
			}},
		{&messages.Tool{Name: "test_trigger_prompt_change", Description: "Adds and removes a hidden prompt: listeners of prompt list changes are told", InputSchema: noArgs},
			func(context.Context, *mcpactors.Session, *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
				if err := s.srv.AddPrompt(&messages.Prompt{Name: triggerPrompt, Description: "Added and removed by test_trigger_prompt_change"},
					func(context.Context, *mcpactors.Session, *mcpactors.GetPromptRequest) (*messages.GetPromptResult, error) {
						return promptResult(userText("hidden")), nil
					}); err != nil {
					return nil, err
				}
				s.srv.RemovePrompts(triggerPrompt)
				return text("prompt list changed"), nil
			}},
		{&messages.Tool{Name: "test_custom_headers", Description: "Mirrors region, priority and verbose into Mcp-Param headers (x-mcp-header)", InputSchema: headerInput},
			func(context.Context, *mcpactors.Session, *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
				return text("Custom headers test completed"), nil
			}},
	})
	if err != nil {
		return err
	}
	hidden := &messages.Tool{Name: triggerTool, Description: "Enabled and disabled at once by test_trigger_tool_change", InputSchema: noArgs}
	if err := s.srv.AddTool(hidden, dynamicHandler); err != nil {
		return err
	}
	if err := s.srv.SetToolEnabled(context.Background(), triggerTool, false); err != nil {
		return err
	}
	return s.srv.AddPrompt(&messages.Prompt{Name: "test_input_required_result_prompt", Description: "Asks what context to use (input request user_context), then returns a prompt with it"},
		func(ctx context.Context, sess *mcpactors.Session, _ *mcpactors.GetPromptRequest) (*messages.GetPromptResult, error) {
			a, err := askForm(ctx, sess, "user_context", "What context should the prompt use?", contextForm)
			if err != nil {
				return nil, err
			}
			return promptResult(userText(fmt.Sprint("Use this context: ", a["context"]))), nil
		})
}
