package transport

import (
	"context"
	"sync"

	"github.com/mcp-actors/mcp-actors/actors/router"
	"github.com/mcp-actors/mcp-actors/messages"
)

// stdioModern serves the modern requests (2026-07-28) of one stdio
// connection: each on a stream of its own whose frames go out as lines,
// cancelled by notifications/cancelled.
type stdioModern struct {
	srv     ModernServer
	streams *router.Streams
	out     *lineSink

	mu      sync.Mutex
	running map[string]*lineStream // by request ID as sent
}

// serves serves m if it is of the modern era, and reports whether it was:
// a request whose _meta names a protocol version (or server/discover,
// which only the modern era has), or notifications/cancelled for such a
// request.
func (s *stdioModern) serves(m *messages.Message) bool {
	switch m.Kind() {
	case messages.KindNotification:
		if m.Method != messages.MethodCancelled {
			return false
		}
		var p messages.CancelledParams
		if messages.DecodeParams(m.Params, &p) != nil {
			return false
		}
		s.mu.Lock()
		ls := s.running[p.RequestID.Raw()]
		s.mu.Unlock()
		if ls == nil {
			return false
		}
		ls.cancel()
		return true
	case messages.KindRequest:
	default:
		return false
	}
	if m.Method == messages.MethodInitialize {
		return false
	}
	if _, ok := messages.ModernVersionOf(m.Params); !ok && m.Method != messages.MethodDiscover {
		return false
	}
	meta, perr := messages.ParseRequestMeta(m.Params)
	if perr == nil && !messages.IsModernVersion(meta.ProtocolVersion) {
		perr = messages.UnsupportedVersionError(meta.ProtocolVersion)
	}
	if perr != nil {
		s.out.Deliver(messages.Frame{Data: messages.EncodeError(m.ID, perr)})
		return true
	}
	ctx, cancel := context.WithCancel(context.Background())
	ls := &lineStream{s: s, key: m.ID.Raw(), cancelCtx: cancel}
	ls.sid = s.streams.Register(messages.ModernStreams, ls)
	s.mu.Lock()
	s.running[ls.key] = ls
	s.mu.Unlock()
	s.srv.Serve(ctx, &messages.ModernRequest{Msg: m, Meta: meta, Stream: ls.sid})
	return true
}

// cancelAll cancels the requests still running (the connection ends).
func (s *stdioModern) cancelAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ls := range s.running {
		ls.cancelCtx()
	}
}

// lineStream is the stream of one modern request on stdio.
type lineStream struct {
	s         *stdioModern
	key       string
	sid       messages.StreamID
	cancelCtx context.CancelFunc

	mu        sync.Mutex
	cancelled bool // by the client: nothing more is written
	done      bool
}

// cancel cancels the request: its handler's context ends, and nothing
// more of it is written (no response, as for a cancelled request).
func (l *lineStream) cancel() {
	l.mu.Lock()
	l.cancelled = true
	l.mu.Unlock()
	l.cancelCtx()
	l.finish()
}

// Receive implements router.Receiver.
func (l *lineStream) Receive(ev messages.StreamEvent) bool {
	l.mu.Lock()
	skip := l.cancelled || l.done
	l.mu.Unlock()
	if skip {
		return false
	}
	ok := true
	if ev.Signal == messages.SignalFrame && ev.Frame.Data != nil {
		ok = l.s.out.Deliver(messages.Frame{Data: ev.Frame.Data})
	}
	if ev.Frame.End || ev.Signal.Ends() {
		l.finish()
	}
	return ok
}

// Gone implements router.Receiver.
func (l *lineStream) Gone() bool { return l.s.out.Gone() }

// finish ends the request's stream once.
func (l *lineStream) finish() {
	l.mu.Lock()
	if l.done {
		l.mu.Unlock()
		return
	}
	l.done = true
	l.mu.Unlock()
	l.s.streams.Unregister(l.sid)
	l.cancelCtx() // releases what watches the request's context
	l.s.mu.Lock()
	delete(l.s.running, l.key)
	l.s.mu.Unlock()
}
