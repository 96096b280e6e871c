package reftools_test

import (
	"context"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/harness"
	"github.com/mcp-actors/mcp-actors/messages"
)

// readContents is the raw wire shape of a resources/read result.
type readContents struct {
	Contents []struct {
		URI      string  `json:"uri"`
		MIMEType string  `json:"mimeType"`
		Text     *string `json:"text"`
		Blob     *string `json:"blob"`
	} `json:"contents"`
}

func read(t *testing.T, c *harness.Client, uri string) *readContents {
	t.Helper()
	var res readContents
	require.NoError(t, c.CallResult(context.Background(), messages.MethodReadResource, map[string]string{"uri": uri}, &res))
	require.Len(t, res.Contents, 1)
	assert.Equal(t, uri, res.Contents[0].URI)
	return &res
}

// readText reads a text resource and returns its text.
func readText(t *testing.T, c *harness.Client, uri string) string {
	t.Helper()
	res := read(t, c, uri)
	require.NotNil(t, res.Contents[0].Text)
	assert.Nil(t, res.Contents[0].Blob)
	return *res.Contents[0].Text
}

func TestResourcesList(t *testing.T) {
	c := newHarness(t).Connect()
	ctx := context.Background()

	var list messages.ListResourcesResult
	require.NoError(t, c.CallResult(ctx, messages.MethodListResources, nil, &list))
	mime := map[string]string{}
	for _, r := range list.Resources {
		assert.NotEmpty(t, r.Name, r.URI)
		assert.NotEmpty(t, r.Description, r.URI)
		mime[r.URI] = r.MIMEType
	}
	assert.Equal(t, map[string]string{
		"test://static-text":      "text/plain",
		"test://static-binary":    "image/png",
		"test://watched-resource": "text/plain",
	}, mime)

	var templates messages.ListResourceTemplatesResult
	require.NoError(t, c.CallResult(ctx, messages.MethodListResourceTemplates, nil, &templates))
	require.Len(t, templates.ResourceTemplates, 1)
	tmpl := templates.ResourceTemplates[0]
	assert.Equal(t, "test://template/{id}/data", tmpl.URITemplate)
	assert.Equal(t, "application/json", tmpl.MIMEType)
	assert.NotEmpty(t, tmpl.Name)
	assert.NotEmpty(t, tmpl.Description)
}

func TestReadStaticText(t *testing.T) {
	c := newHarness(t).Connect()
	res := read(t, c, "test://static-text")
	assert.Equal(t, "text/plain", res.Contents[0].MIMEType)
	require.NotNil(t, res.Contents[0].Text)
	assert.Equal(t, "This is the content of the static text resource.", *res.Contents[0].Text)
}

func TestReadStaticBinary(t *testing.T) {
	c := newHarness(t).Connect()
	res := read(t, c, "test://static-binary")
	assert.Equal(t, "image/png", res.Contents[0].MIMEType)
	assert.Nil(t, res.Contents[0].Text)
	require.NotNil(t, res.Contents[0].Blob)
	requirePNG(t, *res.Contents[0].Blob)
}

func TestReadTemplate(t *testing.T) {
	c := newHarness(t).Connect()
	for _, id := range []string{"123", "abc-Z_9"} {
		res := read(t, c, "test://template/"+id+"/data")
		assert.Equal(t, "application/json", res.Contents[0].MIMEType)
		require.NotNil(t, res.Contents[0].Text)
		assert.Equal(t, `{"id":"`+id+`","templateTest":true,"data":"Data for ID: `+id+`"}`, *res.Contents[0].Text)
	}
}

func TestReadUnknownResource(t *testing.T) {
	c := newHarness(t).Connect()
	err := c.CallResult(context.Background(), messages.MethodReadResource, map[string]string{"uri": "test://nope"}, nil)
	require.ErrorIs(t, err, messages.ErrResourceNotFound)
}

func TestSubscribeResultIsEmptyObject(t *testing.T) {
	c := newHarness(t).Connect()
	m, err := c.Call(context.Background(), messages.MethodSubscribe, map[string]string{"uri": "test://watched-resource"})
	require.NoError(t, err)
	require.Nil(t, m.Error)
	assert.Equal(t, `{}`, string(m.Result))
	var v jsontext.Value
	require.NoError(t, json.Unmarshal(m.Result, &v))
}
