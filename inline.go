package mcpactors

import (
	"sync"

	"github.com/mcp-actors/mcp-actors/messages"
)

// inlinePolicy decides which requests run their handler on the transport's
// own goroutine (session.InlinePolicy): all of them, until a handler is
// seen sending frames before its answer (progress, logs, server-to-client
// requests). Such a handler would make the transport start a second
// goroutine to stream; from then on its requests run on a pooled goroutine
// instead, which streams for free. Handlers are told apart by method, and
// tools by name.
type inlinePolicy struct {
	streamed sync.Map // key → struct{}: handlers seen streaming
}

// Inline implements session.InlinePolicy.
func (p *inlinePolicy) Inline(req *messages.Message) bool {
	_, streamed := p.streamed.Load(inlineKey(req))
	return !streamed
}

// Streamed implements session.InlinePolicy.
func (p *inlinePolicy) Streamed(req *messages.Message) {
	p.streamed.Store(inlineKey(req), struct{}{})
}

// inlineKey names a request's handler: the method, and for tools/call the
// tool.
func inlineKey(req *messages.Message) string {
	if req.Method == messages.MethodCallTool {
		if p, err := messages.DecodeCallToolParams(req.Params); err == nil {
			return "tool:" + p.Name
		}
	}
	return req.Method
}
