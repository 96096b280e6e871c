package messages_test

import (
	"encoding/json/jsontext"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/messages"
)

// TestParseRequestMeta: a modern request's _meta is read once: its
// protocol keys, and the whole object as sent; what is missing or
// malformed is named.
func TestParseRequestMeta(t *testing.T) {
	rm, perr := messages.ParseRequestMeta(jsontext.Value(`{"name":"echo","arguments":{"a":1},"requestState":"s","inputResponses":{"k":{"action":"accept"}},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/logLevel":"info","progressToken":7,"x.example/trace":"t"}}`))
	require.Nil(t, perr)
	assert.Equal(t, "2026-07-28", rm.ProtocolVersion)
	assert.NotNil(t, rm.Capabilities.Sampling)
	assert.Equal(t, "c", rm.ClientInfo.Name)
	assert.Equal(t, messages.LoggingLevel("info"), rm.LogLevel)
	assert.True(t, rm.HasToken)
	assert.Equal(t, "echo", rm.Name)
	assert.JSONEq(t, `{"a":1}`, string(rm.Arguments))
	assert.Equal(t, "s", rm.Retry.RequestState)
	assert.Len(t, rm.Retry.InputResponses, 1)
	assert.Len(t, rm.Meta, 6, "_meta whole, every key")
	assert.Equal(t, `"t"`, string(rm.Meta["x.example/trace"]))

	const caps = `"io.modelcontextprotocol/clientCapabilities":{}`
	for _, tt := range []struct{ params, want string }{
		{`{}`, "params._meta is required"},
		{`{"_meta":{` + caps + `}}`, `params._meta["io.modelcontextprotocol/protocolVersion"] is required`},
		{`{"_meta":{"io.modelcontextprotocol/protocolVersion":null,` + caps + `}}`, `protocolVersion"] is required`},
		{`{"_meta":{"io.modelcontextprotocol/protocolVersion":""` + `,` + caps + `}}`, `protocolVersion"] is required`},
		{`{"_meta":{"io.modelcontextprotocol/protocolVersion":5,` + caps + `}}`, `protocolVersion"] must not be a JSON number`},
		{`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`, `clientCapabilities"] is required`},
		{`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":null}}`, `clientCapabilities"] is required`},
		{`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":3}}}`, `clientCapabilities"].sampling must not be a JSON number`},
		{`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` + caps + `,"io.modelcontextprotocol/logLevel":"loud"}}`, `unknown level "loud"`},
		{`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` + caps + `,"io.modelcontextprotocol/clientInfo":[]}}`, `clientInfo"] must not be a JSON array`},
		{`{"_meta":[]}`, "invalid params"},
		{`[]`, "params must be an object"},
	} {
		_, perr := messages.ParseRequestMeta(jsontext.Value(tt.params))
		require.NotNil(t, perr, tt.params)
		assert.EqualValues(t, messages.CodeInvalidParams, perr.Code, tt.params)
		assert.Contains(t, perr.Message, tt.want, tt.params)
	}
}
