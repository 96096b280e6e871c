package transport

import (
	"errors"
	"net/http"
	"time"

	"github.com/mcp-actors/mcp-actors/actors/session"
	"github.com/mcp-actors/mcp-actors/messages"
)

// serveGet opens the session's standalone SSE stream, or resumes the stream
// a Last-Event-ID names (replaying what followed it, then going live).
func (h *HTTPHandler) serveGet(w http.ResponseWriter, r *http.Request, principal string) {
	if !accepts(r, "text/event-stream") {
		httpError(w, http.StatusNotAcceptable, "not acceptable: the Accept header must list text/event-stream")
		return
	}
	if _, ok := checkVersion(w, r); !ok {
		return
	}
	ref, ok := h.session(w, r, principal)
	if !ok {
		return
	}
	ctx := r.Context()
	sink := newHTTPSink(h.opts.StreamQueue)
	err := h.attach(r, ref, sink, r.Header.Get(headerLastEventID))
	if errors.Is(err, messages.ErrUnknownEvent) {
		// An event we no longer hold (or never issued): open the standalone
		// stream instead of failing the reconnecting client.
		err = h.attach(r, ref, sink, "")
	}
	switch {
	case err == nil:
	case errors.Is(err, messages.ErrStreamActive):
		httpError(w, http.StatusConflict, "conflict: the session already has a GET stream open")
		return
	case ctx.Err() != nil:
		return
	default:
		httpError(w, http.StatusNotFound, "session not found")
		return
	}

	sse := newSSEWriter(w, &h.opts)
	if err := sse.start(w.Header()); err != nil {
		ref.Send(&messages.DetachStream{Sink: sink})
		return
	}
	var ping <-chan time.Time
	if h.opts.KeepAlive > 0 {
		t := time.NewTicker(h.opts.KeepAlive)
		defer t.Stop()
		ping = t.C
	}
	for {
		select {
		case <-sink.wake:
			frames, closed := sink.take()
			if len(frames) > 0 {
				end, err := sse.write(frames)
				if err != nil {
					ref.Send(&messages.DetachStream{Sink: sink})
					return
				}
				if end { // a resumed request stream, now answered
					return
				}
			}
			if closed {
				return
			}
		case <-ping:
			if err := sse.comment("keepalive"); err != nil {
				ref.Send(&messages.DetachStream{Sink: sink})
				return
			}
		case <-ctx.Done():
			ref.Send(&messages.DetachStream{Sink: sink})
			return
		}
	}
}

// attach asks the session to give sink a stream and waits for the answer.
func (h *HTTPHandler) attach(r *http.Request, ref *session.Ref, sink *httpSink, lastEventID string) error {
	result := make(chan error, 1)
	ref.Send(&messages.AttachStream{Sink: sink, LastEventID: lastEventID, Result: result})
	select {
	case err := <-result:
		return err
	case <-ref.Done():
		return session.ErrSessionClosed
	case <-r.Context().Done():
		ref.Send(&messages.DetachStream{Sink: sink})
		return r.Context().Err()
	}
}
