package reftools_test

import (
	"context"
	json "encoding/json/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/harness"
	"github.com/mcp-actors/mcp-actors/messages"
)

// promptMessages is the raw wire shape of a prompts/get result.
type promptMessages struct {
	Messages []struct {
		Role    string `json:"role"`
		Content struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			Data     string `json:"data"`
			MIMEType string `json:"mimeType"`
			Resource *struct {
				URI      string `json:"uri"`
				MIMEType string `json:"mimeType"`
				Text     string `json:"text"`
			} `json:"resource"`
		} `json:"content"`
	} `json:"messages"`
}

func getPrompt(t *testing.T, c *harness.Client, name string, args map[string]string) *promptMessages {
	t.Helper()
	var res promptMessages
	require.NoError(t, c.CallResult(context.Background(), messages.MethodGetPrompt, &messages.GetPromptParams{Name: name, Arguments: args}, &res))
	for _, m := range res.Messages {
		assert.Equal(t, "user", m.Role)
	}
	return &res
}

func TestPromptsList(t *testing.T) {
	c := newHarness(t).Connect()
	var list messages.ListPromptsResult
	require.NoError(t, c.CallResult(context.Background(), messages.MethodListPrompts, nil, &list))

	args := map[string][]string{}
	for _, p := range list.Prompts {
		assert.NotEmpty(t, p.Description, p.Name)
		names := []string{}
		for _, a := range p.Arguments {
			assert.True(t, a.Required, "%s.%s", p.Name, a.Name)
			assert.NotEmpty(t, a.Description, "%s.%s", p.Name, a.Name)
			names = append(names, a.Name)
		}
		args[p.Name] = names
	}
	assert.Equal(t, map[string][]string{
		"test_simple_prompt":                 {},
		"test_prompt_with_arguments":         {"arg1", "arg2"},
		"test_prompt_with_embedded_resource": {"resourceUri"},
		"test_prompt_with_image":             {},
		"test_input_required_result_prompt":  {},
	}, args)
}

func TestSimplePrompt(t *testing.T) {
	c := newHarness(t).Connect()
	res := getPrompt(t, c, "test_simple_prompt", nil)
	require.Len(t, res.Messages, 1)
	assert.Equal(t, "text", res.Messages[0].Content.Type)
	assert.Equal(t, "This is a simple prompt for testing.", res.Messages[0].Content.Text)
}

func TestPromptWithArguments(t *testing.T) {
	c := newHarness(t).Connect()
	res := getPrompt(t, c, "test_prompt_with_arguments", map[string]string{"arg1": "hello", "arg2": "world"})
	require.Len(t, res.Messages, 1)
	assert.Equal(t, "text", res.Messages[0].Content.Type)
	assert.Equal(t, "Prompt with arguments: arg1='hello', arg2='world'", res.Messages[0].Content.Text)

	err := c.CallResult(context.Background(), messages.MethodGetPrompt,
		&messages.GetPromptParams{Name: "test_prompt_with_arguments", Arguments: map[string]string{"arg1": "x"}}, nil)
	require.ErrorIs(t, err, messages.ErrInvalidParams, "arg2 is required")
}

func TestPromptWithEmbeddedResource(t *testing.T) {
	c := newHarness(t).Connect()
	res := getPrompt(t, c, "test_prompt_with_embedded_resource", map[string]string{"resourceUri": "test://example-resource"})
	require.Len(t, res.Messages, 2)
	first := res.Messages[0].Content
	assert.Equal(t, "resource", first.Type)
	require.NotNil(t, first.Resource)
	assert.Equal(t, "test://example-resource", first.Resource.URI)
	assert.Equal(t, "text/plain", first.Resource.MIMEType)
	assert.Equal(t, "Embedded resource content for testing.", first.Resource.Text)
	assert.Equal(t, "text", res.Messages[1].Content.Type)
	assert.Equal(t, "Please process the embedded resource above.", res.Messages[1].Content.Text)
}

func TestPromptWithImage(t *testing.T) {
	c := newHarness(t).Connect()
	res := getPrompt(t, c, "test_prompt_with_image", nil)
	require.Len(t, res.Messages, 2)
	img := res.Messages[0].Content
	assert.Equal(t, "image", img.Type)
	assert.Equal(t, "image/png", img.MIMEType)
	requirePNG(t, img.Data)
	assert.Equal(t, "text", res.Messages[1].Content.Type)
	assert.Equal(t, "Please analyze the image above.", res.Messages[1].Content.Text)
}

func TestCompletion(t *testing.T) {
	c := newHarness(t).Connect()
	tests := []struct {
		arg, value string
		want       []string
	}{
		{"arg1", "", []string{"paris", "park", "party"}},
		{"arg1", "par", []string{"paris", "park", "party"}},
		{"arg1", "park", []string{"park"}},
		{"arg1", "test", []string{}},
		{"arg2", "par", []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.arg+"="+tt.value, func(t *testing.T) {
			m, err := c.Call(context.Background(), messages.MethodComplete, &messages.CompleteParams{
				Ref:      &messages.CompleteReference{Type: messages.RefPrompt, Name: "test_prompt_with_arguments"},
				Argument: messages.CompleteArgument{Name: tt.arg, Value: tt.value},
			})
			require.NoError(t, err)
			require.Nil(t, m.Error)
			var res struct {
				Completion struct {
					Values  []string `json:"values"`
					Total   *int     `json:"total"`
					HasMore bool     `json:"hasMore"`
				} `json:"completion"`
			}
			require.NoError(t, json.Unmarshal(m.Result, &res))
			require.NotNil(t, res.Completion.Values, "values is an array, never null")
			assert.Equal(t, tt.want, res.Completion.Values)
			require.NotNil(t, res.Completion.Total)
			assert.Equal(t, len(tt.want), *res.Completion.Total)
			assert.False(t, res.Completion.HasMore)
		})
	}
}
