package transport

import (
	"context"
	"errors"
	"time"

	"github.com/mcp-actors/mcp-actors/actors/session"
	"github.com/mcp-actors/mcp-actors/messages"
)

// get opens the session's standalone event stream, or resumes the stream a
// Last-Event-ID names (replaying what followed it, then going live). The
// connection is taken over from the HTTP server when it allows, so that an
// idle stream costs no goroutine.
func (e *endpoint) get(x exchange, principal string) {
	if _, sse := acceptance(x); !sse {
		e.fail(x, 406, "not acceptable: the Accept header must list text/event-stream")
		return
	}
	if _, ok := e.version(x); !ok {
		return
	}
	ref, ok := e.session(x, principal)
	if !ok {
		return
	}
	if x.canHijack() {
		cs := newConnStream(e, ref)
		if e.attachOrFail(x, ref, cs) {
			x.hijack(cs.take)
		}
		return
	}
	sink := e.newSink(x)
	if e.attachOrFail(x, ref, sink) {
		e.streamInline(x, ref, sink)
	}
}

// attachOrFail attaches sink to the stream the exchange asks for, or
// answers 409 or 404.
func (e *endpoint) attachOrFail(x exchange, ref *session.Ref, sink messages.Sink) bool {
	err := e.attach(x.context(), ref, sink, x.header(headerLastEventID))
	if errors.Is(err, messages.ErrUnknownEvent) {
		// An event we no longer hold (or never issued): open the standalone
		// stream instead of failing the reconnecting client.
		err = e.attach(x.context(), ref, sink, "")
	}
	switch {
	case err == nil:
		return true
	case errors.Is(err, messages.ErrStreamActive):
		e.fail(x, 409, "conflict: the session already has a GET stream open")
	case x.context().Err() != nil:
	default:
		e.fail(x, 404, "session not found")
	}
	return false
}

// attach asks the session to give sink a stream and waits for the answer.
func (e *endpoint) attach(ctx context.Context, ref *session.Ref, sink messages.Sink, lastEventID string) error {
	result := make(chan error, 1)
	ref.Send(&messages.AttachStream{Sink: sink, LastEventID: lastEventID, Result: result})
	select {
	case err := <-result:
		return err
	case <-ref.Done():
		return session.ErrSessionClosed
	case <-ctx.Done():
		ref.Send(&messages.DetachStream{Sink: sink})
		return ctx.Err()
	}
}

// streamInline serves a GET stream on the handler's own goroutine, for
// servers that cannot hand the connection over (HTTP/2).
func (e *endpoint) streamInline(x exchange, ref *session.Ref, sink *httpSink) {
	ctx := x.context()
	var ping <-chan time.Time
	var ticker *time.Ticker
	if e.opts.KeepAlive > 0 {
		ticker = time.NewTicker(e.opts.KeepAlive)
		ping = ticker.C
	}
	stop := func() {
		if ticker != nil {
			ticker.Stop()
		}
	}
	first := true
	x.stream(&eventSource{
		next: func() ([]messages.Frame, bool, bool) {
			if first { // an empty write: the head goes out at once
				first = false
				return nil, false, false
			}
			for {
				select {
				case <-sink.wake:
					frames, closed := sink.take()
					if closed {
						stop()
					}
					if len(frames) > 0 || closed {
						return frames, false, closed
					}
				case <-ping:
					return nil, true, false
				case <-ctx.Done():
					stop()
					return nil, false, true
				}
			}
		},
		failed: func() {
			stop()
			ref.Send(&messages.DetachStream{Sink: sink})
		},
	})
}
