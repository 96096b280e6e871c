package interop_test

import (
	"bytes"
	"context"
	"errors"
	"image/png"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Resources, catalog changes and prompts.

const watchedURI = "test://watched-resource"

func testResources(t *testing.T, start starter) {
	updated := make(chan string, 64)
	p := start(t, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(ctx context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			send(t.Context(), updated, req.Params.URI)
		},
	})
	ctx, cancel := p.wait()
	defer cancel()

	list, err := p.cs.ListResources(ctx, nil)
	require.NoError(t, err)
	mimeTypes := map[string]string{}
	for _, r := range list.Resources {
		mimeTypes[r.URI] = r.MIMEType
		assert.NotEmpty(t, r.Name, "name of %s", r.URI)
	}
	assert.Equal(t, map[string]string{
		"test://static-text":   "text/plain",
		"test://static-binary": "image/png",
		watchedURI:             "text/plain",
	}, mimeTypes)

	text := readOne(t, p, "test://static-text")
	assert.Equal(t, "text/plain", text.MIMEType)
	assert.Equal(t, "This is the content of the static text resource.", text.Text)

	binary := readOne(t, p, "test://static-binary")
	assert.Equal(t, "image/png", binary.MIMEType)
	assert.Empty(t, binary.Text)
	_, err = png.Decode(bytes.NewReader(binary.Blob))
	assert.NoError(t, err, "decoding the blob as PNG")

	templates, err := p.cs.ListResourceTemplates(ctx, nil)
	require.NoError(t, err)
	if assert.Len(t, templates.ResourceTemplates, 1) {
		assert.Equal(t, "test://template/{id}/data", templates.ResourceTemplates[0].URITemplate)
		assert.Equal(t, "application/json", templates.ResourceTemplates[0].MIMEType)
	}
	data := readOne(t, p, "test://template/42/data")
	assert.Equal(t, "application/json", data.MIMEType)
	assert.JSONEq(t, `{"id":"42","templateTest":true,"data":"Data for ID: 42"}`, data.Text)

	// Subscribed, one touch is one resources/updated.
	before := readOne(t, p, watchedURI)
	assert.Equal(t, "text/plain", before.MIMEType)
	require.NoError(t, p.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: watchedURI}))
	assertEmptyResult(t, p, "resources/subscribe")
	assert.Equal(t, "touched", textOf(t, p.call("test_touch_watched", nil)))
	assert.Equal(t, watchedURI, recv(p, updated, "notifications/resources/updated"))
	ping(t, p)
	assert.Equal(t, 1, p.wire.count("notifications/resources/updated"))
	assert.NotEqual(t, before.Text, readOne(t, p, watchedURI).Text, "content after test_touch_watched")

	// Unsubscribed, a touch is silent.
	require.NoError(t, p.cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: watchedURI}))
	assertEmptyResult(t, p, "resources/unsubscribe")
	assert.Equal(t, "touched", textOf(t, p.call("test_touch_watched", nil)))
	ping(t, p)
	assert.Equal(t, 1, p.wire.count("notifications/resources/updated"), "resources/updated after unsubscribing")
	assert.Empty(t, updated)
}

// readOne reads uri, which must have exactly one item, with that uri.
func readOne(t *testing.T, p *peer, uri string) *mcp.ResourceContents {
	t.Helper()
	ctx, cancel := p.wait()
	defer cancel()
	res, err := p.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	require.NoError(t, err, "reading %s", uri)
	require.Len(t, res.Contents, 1, "contents of %s", uri)
	assert.Equal(t, uri, res.Contents[0].URI)
	return res.Contents[0]
}

func testListChanged(t *testing.T, start starter) {
	changed := make(chan struct{}, 64)
	p := start(t, &mcp.ClientOptions{
		ToolListChangedHandler: func(ctx context.Context, req *mcp.ToolListChangedRequest) {
			send(t.Context(), changed, struct{}{})
		},
	})

	assert.Equal(t, "added", textOf(t, p.call("test_toggle_tool", nil)))
	recv(p, changed, "notifications/tools/list_changed after adding")
	assert.Contains(t, toolNames(t, p), "test_dynamic")
	assert.Equal(t, "dynamic", textOf(t, p.call("test_dynamic", nil)))

	assert.Equal(t, "removed", textOf(t, p.call("test_toggle_tool", nil)))
	recv(p, changed, "notifications/tools/list_changed after removing")
	assert.NotContains(t, toolNames(t, p), "test_dynamic")

	// A tool that is gone is an unknown tool: -32602.
	ctx, cancel := p.wait()
	defer cancel()
	_, err := p.cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_dynamic"})
	var werr *jsonrpc.Error
	if assert.True(t, errors.As(err, &werr), "calling a removed tool: %v", err) {
		assert.Equal(t, int64(jsonrpc.CodeInvalidParams), werr.Code)
	}

	ping(t, p)
	assert.Equal(t, 2, p.wire.count("notifications/tools/list_changed"))
	assert.Empty(t, changed)
}

// toolNames lists the server's tools.
func toolNames(t *testing.T, p *peer) []string {
	t.Helper()
	ctx, cancel := p.wait()
	defer cancel()
	res, err := p.cs.ListTools(ctx, nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

func testPrompts(t *testing.T, start starter) {
	p := start(t, nil)
	ctx, cancel := p.wait()
	defer cancel()

	list, err := p.cs.ListPrompts(ctx, nil)
	require.NoError(t, err)
	prompts := map[string]*mcp.Prompt{}
	for _, pr := range list.Prompts {
		prompts[pr.Name] = pr
		assert.NotEmpty(t, pr.Description, "description of %s", pr.Name)
	}
	assert.ElementsMatch(t, []string{"test_simple_prompt", "test_prompt_with_arguments", "test_prompt_with_embedded_resource", "test_prompt_with_image",
		"test_input_required_result_prompt"}, keys(prompts))
	if pr := prompts["test_prompt_with_arguments"]; assert.NotNil(t, pr) && assert.Len(t, pr.Arguments, 2) {
		for i, name := range []string{"arg1", "arg2"} {
			assert.Equal(t, name, pr.Arguments[i].Name)
			assert.True(t, pr.Arguments[i].Required, "%s required", name)
		}
	}

	got, err := p.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "test_simple_prompt"})
	require.NoError(t, err)
	if assert.Len(t, got.Messages, 1) {
		assertUserText(t, got.Messages[0], "This is a simple prompt for testing.")
	}

	got, err = p.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "test_prompt_with_arguments", Arguments: map[string]string{"arg1": "first", "arg2": "second"}})
	require.NoError(t, err)
	if assert.Len(t, got.Messages, 1) {
		assertUserText(t, got.Messages[0], "Prompt with arguments: arg1='first', arg2='second'")
	}

	got, err = p.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "test_prompt_with_embedded_resource", Arguments: map[string]string{"resourceUri": "test://interop/doc"}})
	require.NoError(t, err)
	if assert.Len(t, got.Messages, 2) {
		assert.Equal(t, mcp.Role("user"), got.Messages[0].Role)
		assertEmbedded(t, got.Messages[0].Content, "test://interop/doc", "text/plain", "Embedded resource content for testing.")
		assertUserText(t, got.Messages[1], "Please process the embedded resource above.")
	}

	got, err = p.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "test_prompt_with_image"})
	require.NoError(t, err)
	if assert.Len(t, got.Messages, 2) {
		assert.Equal(t, mcp.Role("user"), got.Messages[0].Role)
		assertPNG(t, got.Messages[0].Content)
		assertUserText(t, got.Messages[1], "Please analyze the image above.")
	}

	ref := &mcp.CompleteReference{Type: "ref/prompt", Name: "test_prompt_with_arguments"}
	done, err := p.cs.Complete(ctx, &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: "arg1", Value: "par"}})
	require.NoError(t, err)
	assert.NotEmpty(t, done.Completion.Values)
	for _, v := range done.Completion.Values {
		assert.Regexp(t, "^par", v, "a completion of %q", "par")
	}
	// No match is an empty array, never null.
	done, err = p.cs.Complete(ctx, &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: "arg1", Value: "zzz"}})
	require.NoError(t, err)
	assert.NotNil(t, done.Completion.Values, "values must be an array")
	assert.Empty(t, done.Completion.Values)
}

func assertUserText(t *testing.T, msg *mcp.PromptMessage, want string) {
	t.Helper()
	assert.Equal(t, mcp.Role("user"), msg.Role)
	text, ok := msg.Content.(*mcp.TextContent)
	if assert.True(t, ok, "content is %T, want text", msg.Content) {
		assert.Equal(t, want, text.Text)
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
