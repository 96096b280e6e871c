package reftools

import (
	"context"
	"strings"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/messages"
)

// arg1Suggestions are the values completion/complete offers for
// test_prompt_with_arguments' arg1, filtered by the typed prefix.
var arg1Suggestions = []string{"paris", "park", "party"}

// addPrompts adds the prompts and the completion of
// test_prompt_with_arguments' arguments.
func (s *refSet) addPrompts() error {
	prompts := []struct {
		def     *messages.Prompt
		handler mcpactors.PromptHandler
	}{
		{&messages.Prompt{Name: "test_simple_prompt", Title: "Simple Test Prompt", Description: "A simple prompt without arguments"},
			func(context.Context, *mcpactors.Session, *mcpactors.GetPromptRequest) (*messages.GetPromptResult, error) {
				return promptResult(userText("This is a simple prompt for testing.")), nil
			}},
		{&messages.Prompt{Name: "test_prompt_with_arguments", Title: "Prompt With Arguments", Description: "A prompt with required arguments",
			Arguments: []*messages.PromptArgument{
				{Name: "arg1", Description: "First test argument", Required: true},
				{Name: "arg2", Description: "Second test argument", Required: true},
			}},
			func(_ context.Context, _ *mcpactors.Session, req *mcpactors.GetPromptRequest) (*messages.GetPromptResult, error) {
				return promptResult(userText("Prompt with arguments: arg1='" + req.Arguments["arg1"] + "', arg2='" + req.Arguments["arg2"] + "'")), nil
			}},
		{&messages.Prompt{Name: "test_prompt_with_embedded_resource", Title: "Prompt With Embedded Resource", Description: "A prompt that includes an embedded resource",
			Arguments: []*messages.PromptArgument{
				{Name: "resourceUri", Description: "URI of the resource to embed", Required: true},
			}},
			func(_ context.Context, _ *mcpactors.Session, req *mcpactors.GetPromptRequest) (*messages.GetPromptResult, error) {
				return promptResult(
					&messages.PromptMessage{Role: messages.RoleUser, Content: &messages.EmbeddedResource{Resource: &messages.ResourceContents{
						URI: req.Arguments["resourceUri"], MIMEType: "text/plain", Text: "Embedded resource content for testing.",
					}}},
					userText("Please process the embedded resource above."),
				), nil
			}},
		{&messages.Prompt{Name: "test_prompt_with_image", Title: "Prompt With Image", Description: "A prompt that includes image content"},
			func(context.Context, *mcpactors.Session, *mcpactors.GetPromptRequest) (*messages.GetPromptResult, error) {
				return promptResult(
					&messages.PromptMessage{Role: messages.RoleUser, Content: imageContent()},
					userText("Please analyze the image above."),
				), nil
			}},
	}
	for _, p := range prompts {
		if err := s.srv.AddPrompt(p.def, p.handler); err != nil {
			return err
		}
	}
	return s.srv.AddCompletion(
		messages.CompleteReference{Type: messages.RefPrompt, Name: "test_prompt_with_arguments"},
		func(_ context.Context, _ *mcpactors.Session, req *messages.CompleteParams) (*messages.CompleteResult, error) {
			values := []string{}
			if req.Argument.Name == "arg1" {
				for _, v := range arg1Suggestions {
					if strings.HasPrefix(v, req.Argument.Value) {
						values = append(values, v)
					}
				}
			}
			total := len(values)
			return &messages.CompleteResult{Completion: messages.CompletionResultValues{Values: values, Total: &total}}, nil
		})
}

// userText is a user message of one text block.
func userText(s string) *messages.PromptMessage {
	return &messages.PromptMessage{Role: messages.RoleUser, Content: &messages.TextContent{Text: s}}
}

// promptResult is a prompt made of msgs.
func promptResult(msgs ...*messages.PromptMessage) *messages.GetPromptResult {
	return &messages.GetPromptResult{Messages: msgs}
}
