package messages_test

import (
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/messages"
)

func TestClientCapabilitiesSupports(t *testing.T) {
	tests := []struct {
		name                              string
		wire                              string
		form, url, sampling, tools, roots bool
	}{
		{name: "nothing", wire: `{}`},
		{name: "2025-06-18 elicitation means form", wire: `{"elicitation":{}}`, form: true},
		{name: "form only", wire: `{"elicitation":{"form":{}}}`, form: true},
		{name: "url only", wire: `{"elicitation":{"url":{}}}`, url: true},
		{name: "form and url", wire: `{"elicitation":{"form":{},"url":{}}}`, form: true, url: true},
		{name: "sampling", wire: `{"sampling":{}}`, sampling: true},
		{name: "sampling with tools", wire: `{"sampling":{"tools":{},"context":{}}}`, sampling: true, tools: true},
		{name: "roots", wire: `{"roots":{"listChanged":true}}`, roots: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c messages.ClientCapabilities
			require.NoError(t, json.Unmarshal([]byte(tt.wire), &c))
			assert.Equal(t, tt.form, c.SupportsFormElicitation(), "form")
			assert.Equal(t, tt.url, c.SupportsURLElicitation(), "url")
			assert.Equal(t, tt.sampling, c.SupportsSampling(), "sampling")
			assert.Equal(t, tt.tools, c.SupportsSamplingTools(), "sampling tools")
			assert.Equal(t, tt.roots, c.SupportsRoots(), "roots")

			b, err := json.Marshal(&c)
			require.NoError(t, err)
			assert.JSONEq(t, tt.wire, string(b), "round trip")
		})
	}

	t.Run("nil receiver", func(t *testing.T) {
		var c *messages.ClientCapabilities
		assert.False(t, c.SupportsFormElicitation())
		assert.False(t, c.SupportsURLElicitation())
		assert.False(t, c.SupportsSampling())
		assert.False(t, c.SupportsSamplingTools())
		assert.False(t, c.SupportsRoots())
	})
}

func TestServerCapabilitiesMarshal(t *testing.T) {
	c := messages.ServerCapabilities{
		Logging:     &messages.Empty{},
		Completions: &messages.Empty{},
		Prompts:     &messages.PromptsCapabilities{ListChanged: true},
		Resources:   &messages.ResourcesCapabilities{Subscribe: true},
		Tools:       &messages.ToolsCapabilities{},
		Tasks:       jsontext.Value(`{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`),
	}
	b, err := json.Marshal(&c)
	require.NoError(t, err)
	assert.JSONEq(t, `{"logging":{},"completions":{},"prompts":{"listChanged":true},"resources":{"subscribe":true},"tools":{},
		"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}}`, string(b))

	b, err = json.Marshal(&messages.ServerCapabilities{})
	require.NoError(t, err)
	assert.Equal(t, `{}`, string(b))
}
