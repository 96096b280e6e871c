package mcpactors

import (
	"sync"
	"sync/atomic"

	"github.com/mcp-actors/mcp-actors/messages"
)

// inlinePolicy decides which requests run their handler on the transport's
// own goroutine (session.InlinePolicy). On a transport that streams from
// there, all of them, except handlers seen holding that goroutine too long
// (they block or compute, and the transport serves nobody else
// meanwhile); elsewhere, all of them until a handler is seen sending
// frames before its answer (progress, logs, server-to-client requests),
// which would make the transport start a second goroutine to stream.
// Those handlers run on a pooled goroutine instead. A handler seen
// holding the transport is tried there again after retryFirst of its
// requests, then after twice as many each time it holds it again (up to
// retryMost): a handler that held it once by chance (its thread was
// descheduled, a cold cache) comes back. Handlers are told apart by
// method, and tools by name.
type inlinePolicy struct {
	streamed sync.Map     // key → struct{}: handlers seen streaming
	stalled  sync.Map     // key → *stallRecord: handlers seen holding the transport
	stalls   atomic.Int32 // entries in stalled: with none, no key is needed
}

// stallRecord counts down a stalled handler's requests to its next try on
// the transport's goroutine.
type stallRecord struct {
	left  atomic.Int32
	every atomic.Int32
}

const (
	retryFirst = 64
	retryMost  = 8192
)

// Inline implements session.InlinePolicy.
func (p *inlinePolicy) Inline(req *messages.Message, streams bool) bool {
	if streams && p.stalls.Load() == 0 {
		return true
	}
	key := inlineKey(req)
	// One request tries the handler on the transport's goroutine again,
	// when the count reaches 0; those after it wait for the outcome (Ran).
	if v, ok := p.stalled.Load(key); ok && v.(*stallRecord).left.Add(-1) != 0 {
		return false
	}
	if streams {
		return true
	}
	_, streamed := p.streamed.Load(key)
	return !streamed
}

// Streamed implements session.InlinePolicy.
func (p *inlinePolicy) Streamed(req *messages.Message) {
	p.streamed.Store(inlineKey(req), struct{}{})
}

// Ran implements session.InlinePolicy.
func (p *inlinePolicy) Ran(req *messages.Message, stalled bool) {
	if !stalled {
		if p.stalls.Load() > 0 {
			if _, ok := p.stalled.LoadAndDelete(inlineKey(req)); ok {
				p.stalls.Add(-1)
			}
		}
		return
	}
	rec := &stallRecord{}
	rec.every.Store(retryFirst / 2)
	v, seen := p.stalled.LoadOrStore(inlineKey(req), rec)
	if !seen {
		p.stalls.Add(1)
	}
	rec = v.(*stallRecord)
	every := min(2*rec.every.Load(), retryMost)
	rec.every.Store(every)
	rec.left.Store(every)
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
