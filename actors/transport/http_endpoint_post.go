package transport

import (
	"errors"

	"github.com/mcp-actors/mcp-actors/actors/session"
	"github.com/mcp-actors/mcp-actors/messages"
)

// post handles one client message (or, on 2025-03-26, a batch).
func (e *endpoint) post(x exchange, principal string) {
	if !isJSON(x.header("Content-Type")) {
		e.fail(x, 415, "unsupported media type: Content-Type must be application/json")
		return
	}
	if json, sse := acceptance(x); !json || !sse {
		e.fail(x, 406, "not acceptable: the Accept header must list application/json and text/event-stream")
		return
	}
	version, ok := e.version(x)
	if !ok {
		return
	}
	body, err := x.body(e.opts.MaxBodyBytes)
	if err != nil {
		if errors.Is(err, errBodyTooLarge) {
			e.fail(x, 413, "request body too large")
		} else {
			e.fail(x, 400, "bad request: could not read the body")
		}
		return
	}
	if messages.IsBatch(body) {
		e.batch(x, principal, version, body)
		return
	}
	msg, derr := messages.Decode(body)
	if derr != nil {
		x.reply(400, messages.EncodeError(idOf(msg), derr))
		return
	}
	if msg.Kind() == messages.KindRequest && msg.Method == messages.MethodInitialize {
		e.initialize(x, principal, msg)
		return
	}
	ref, ok := e.session(x, principal)
	if !ok {
		return
	}
	switch msg.Kind() {
	case messages.KindRequest:
		sink := e.newSink(x)
		sink.cheap = x.canStreamDirect()
		ref.Send(&messages.HandleRequest{Msg: msg, Sink: sink})
		e.respond(x, ref, sink)
	case messages.KindNotification:
		ref.Send(&messages.HandleNotification{Msg: msg})
		x.reply(202, nil)
	default:
		ref.Send(&messages.DeliverResponse{Msg: msg})
		x.reply(202, nil)
	}
}

// initialize spawns a session for an initialize request and answers with
// its Mcp-Session-Id. A failed initialize leaves no session behind.
func (e *endpoint) initialize(x exchange, principal string, msg *messages.Message) {
	if x.header(HeaderSessionID) != "" {
		e.fail(x, 400, "bad request: initialize must not carry an Mcp-Session-Id header")
		return
	}
	if e.draining.Load() || e.host.LiveSessions() >= e.opts.MaxSessions {
		x.setHeader("Retry-After", "5")
		e.fail(x, 503, "service unavailable: too many sessions, retry later")
		return
	}
	ref, err := e.host.NewSessionWith(session.SpawnOptions{Principal: principal, Resumable: true})
	if err != nil {
		x.setHeader("Retry-After", "5")
		e.fail(x, 503, "service unavailable: cannot start a session")
		return
	}
	sink := e.newSink(x)
	ref.Send(&messages.HandleRequest{Msg: msg, Sink: sink})
	frames, _, ok := sink.wait(x.context())
	if !ok || len(frames) == 0 {
		ref.Send(&messages.CloseSession{Reason: "initialize not answered"})
		if ok {
			e.fail(x, 500, "internal error")
		}
		return
	}
	if m, derr := messages.Decode(frames[0].Data); derr != nil || m.Error != nil {
		ref.Send(&messages.CloseSession{Reason: "initialize failed"})
	} else {
		x.setHeader(HeaderSessionID, ref.ID())
	}
	x.reply(200, frames[0].Data)
}

// respond writes what the session sends for one request: a JSON body when
// the response is all there is, an event stream otherwise. When the client
// goes away the stream is only detached: the request goes on, and the
// client may resume it with Last-Event-ID.
func (e *endpoint) respond(x exchange, ref *session.Ref, sink *httpSink) {
	job, frames, closed, ok := sink.first(x.context())
	if job != nil {
		if e.runInline(x, ref, sink, job) {
			return
		}
		frames, closed, ok = sink.wait(x.context())
	}
	if !ok {
		ref.Send(&messages.DetachStream{Sink: sink})
		return
	}
	if len(frames) == 0 {
		if ref.Closed() { // closed before anything was sent: the session ended
			e.fail(x, 404, "session not found")
			return
		}
		// Closed with nothing to say (a request the client cancelled): an
		// empty event stream, so that no response is sent.
		x.stream(&eventSource{next: func() ([]messages.Frame, bool, bool) { return nil, false, true }, failed: func() {}})
		return
	}
	if f := frames[0]; f.End && f.EventID == "" && !prefersSSE(x) {
		x.reply(200, f.Data)
		return
	}
	first := append([]messages.Frame(nil), frames...) // the sink reuses its slice
	ctx := x.context()
	x.stream(&eventSource{
		next: func() ([]messages.Frame, bool, bool) {
			if first != nil {
				f := first
				first = nil
				return f, false, closed
			}
			frames, closed, ok := sink.wait(ctx)
			return frames, false, closed || !ok
		},
		failed: func() { ref.Send(&messages.DetachStream{Sink: sink}) },
	})
}

// newSink returns a sink for a request of x's; the goroutine serving x
// waits on it suspended when it can (exchange.suspender).
func (e *endpoint) newSink(x exchange) *httpSink {
	s := newHTTPSink(e.opts.StreamQueue)
	s.waiter = x.suspender()
	return s
}

// runInline runs a request's handler on this goroutine (messages.Runner).
// A handler that sends nothing but its answer gets it written here, with
// no other goroutine involved. Frames it sends while it runs must reach
// the client at once (it may be waiting for the client's answer to them):
// where the exchange can, they are written by the goroutine that delivers
// them (a directStream); otherwise a second goroutine streams them. It
// reports whether the exchange is complete; when not, the answer comes
// through the sink as usual.
func (e *endpoint) runInline(x exchange, ref *session.Ref, sink *httpSink, job func() []byte) bool {
	if sink.cheap {
		sink.beginInline(nil, x)
		direct := job()
		if sink.endInline() {
			x.finishDirect(sink.directStream())
			return true
		}
		return e.answerInline(x, direct)
	}
	var finish func()
	ctx := x.context()
	sink.beginInline(func() {
		finish = x.streamAside(&eventSource{
			next: func() ([]messages.Frame, bool, bool) {
				frames, closed, ok := sink.wait(ctx)
				return frames, false, closed || !ok
			},
			failed: func() { ref.Send(&messages.DetachStream{Sink: sink}) },
		})
	}, nil)
	direct := job()
	if sink.endInline() { // finish was set under the sink's lock, before
		finish()
		return true
	}
	return e.answerInline(x, direct)
}

// answerInline writes the answer a handler that ran inline returned, if
// it did (direct is nil when the answer comes through the sink).
func (e *endpoint) answerInline(x exchange, direct []byte) bool {
	if direct == nil {
		return false
	}
	if prefersSSE(x) {
		x.stream(&eventSource{
			next:   func() ([]messages.Frame, bool, bool) { return []messages.Frame{{Data: direct, End: true}}, false, true },
			failed: func() {},
		})
		return true
	}
	x.reply(200, direct)
	return true
}

// batch handles a JSON-RPC batch, which only revision 2025-03-26 allows (a
// missing MCP-Protocol-Version header means 2025-03-26). Its notifications
// and responses are delivered at once; its requests are answered on one
// event stream that ends when every one has been answered.
func (e *endpoint) batch(x exchange, principal, version string, body []byte) {
	if version != messages.Version20250326 && version != messages.Version20241105 {
		x.reply(400, messages.EncodeError(messages.ID{}, messages.Errorf(messages.CodeInvalidRequest,
			"invalid request: JSON-RPC batches are not supported in protocol %s", version)))
		return
	}
	items, derr := messages.DecodeBatch(body)
	if derr != nil {
		x.reply(400, messages.EncodeError(messages.ID{}, derr))
		return
	}
	ref, ok := e.session(x, principal)
	if !ok {
		return
	}
	wake := make(chan struct{}, 1)
	var sinks []*httpSink
	// Answers to items that could not be decoded. No frame of a batch's
	// stream is marked End: the stream ends when every request is answered.
	var early []messages.Frame
	for _, raw := range items {
		m, derr := messages.Decode(raw)
		switch {
		case derr != nil:
			early = append(early, messages.Frame{Data: messages.EncodeError(idOf(m), derr)})
		case m.Kind() == messages.KindRequest && m.Method == messages.MethodInitialize:
			early = append(early, messages.Frame{Data: messages.EncodeError(m.ID, messages.Errorf(messages.CodeInvalidRequest,
				"invalid request: initialize cannot be part of a batch"))})
		case m.Kind() == messages.KindRequest:
			s := newHTTPSink(e.opts.StreamQueue)
			s.wake, s.noRun = wake, true
			sinks = append(sinks, s)
			ref.Send(&messages.HandleRequest{Msg: m, Sink: s})
		case m.Kind() == messages.KindNotification:
			ref.Send(&messages.HandleNotification{Msg: m})
		default:
			ref.Send(&messages.DeliverResponse{Msg: m})
		}
	}
	if len(sinks) == 0 && len(early) == 0 {
		x.reply(202, nil)
		return
	}
	ctx := x.context()
	pending := early
	x.stream(&eventSource{
		next: func() ([]messages.Frame, bool, bool) {
			if pending != nil {
				f := pending
				pending = nil
				return f, false, len(sinks) == 0
			}
			for len(sinks) > 0 {
				select {
				case <-wake:
				case <-ctx.Done():
					return nil, false, true
				}
				var out []messages.Frame
				open := sinks[:0]
				for _, s := range sinks {
					frames, closed := s.take()
					end := false
					for _, f := range frames {
						end = end || f.End
						f.End = false // one stream for all: only the last answer ends it
						out = append(out, f)
					}
					if !end && !closed {
						open = append(open, s)
					}
				}
				sinks = open
				if len(out) > 0 {
					return out, false, len(sinks) == 0
				}
			}
			return nil, false, true
		},
		failed: func() {
			for _, s := range sinks {
				ref.Send(&messages.DetachStream{Sink: s})
			}
		},
		gone: func() { // the client hung up: end the wait above too
			for _, s := range sinks {
				s.Close()
			}
		},
	})
}
