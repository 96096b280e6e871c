package mcpactors

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/messages"
)

// TestInlinePolicy checks what the policy learns: a handler seen holding
// the transport's goroutine runs elsewhere on every transport, and is
// tried there again after retryFirst requests, twice as many after each
// hold, and for good once it did not hold it; one seen streaming runs
// elsewhere only where streaming from there is not cheap; tools are told
// apart by name.
func TestInlinePolicy(t *testing.T) {
	tool := func(name string) *messages.Message {
		return &messages.Message{Method: messages.MethodCallTool, Params: json.RawMessage(`{"name":"` + name + `"}`)}
	}
	read := &messages.Message{Method: messages.MethodReadResource, Params: json.RawMessage(`{"uri":"a:b"}`)}
	var p inlinePolicy
	for _, req := range []*messages.Message{tool("a"), tool("b"), read} {
		assert.True(t, p.Inline(req, true), "%s: nothing learnt yet", req.Method)
		assert.True(t, p.Inline(req, false))
		p.Ran(req, false)
	}

	p.Streamed(tool("a"))
	assert.True(t, p.Inline(tool("a"), true), "streams cheaply where it runs")
	assert.False(t, p.Inline(tool("a"), false))
	assert.True(t, p.Inline(tool("b"), false), "another tool")

	// offLoop counts b's requests until one may run inline again.
	offLoop := func() int {
		n := 0
		for ; !p.Inline(tool("b"), true); n++ {
			require.Less(t, n, 2*retryMost, "never tried again")
		}
		return n
	}
	p.Ran(tool("b"), true)
	assert.True(t, p.Inline(tool("c"), true), "another tool")
	assert.True(t, p.Inline(read, true), "another method")
	assert.EqualValues(t, 1, p.stalls.Load())
	assert.Equal(t, retryFirst-1, offLoop())
	for range 3 {
		assert.False(t, p.Inline(tool("b"), true), "one try at a time")
	}
	p.Ran(tool("b"), true) // held it again
	assert.Equal(t, 2*retryFirst-1, offLoop())
	p.Ran(tool("b"), false) // came back
	assert.True(t, p.Inline(tool("b"), true))
	assert.Zero(t, p.stalls.Load())
}
