package transport

import (
	"net/http"
	"time"

	"github.com/mcp-actors/mcp-actors/messages"
)

// get opens the session's standalone event stream, or resumes the stream a
// Last-Event-ID names (replaying what followed it, then going live). The
// stream lives on the goroutine net/http gives the request while it is
// busy; once it has been quiet for holdAfter it is held without one
// (heldStream) where the connection allows. An idle stream carries a
// keep-alive comment every KeepAlive. When the server ends the stream, its
// connection serves the client's next request if the handler has a
// Listener to give held connections back to (see reusable), and closes
// otherwise.
func (h *HTTPHandler) get(x *exchange) {
	if _, sse := acceptance(x.r); !sse {
		h.fail(x, http.StatusNotAcceptable, "not acceptable: the Accept header must list text/event-stream")
		return
	}
	if _, ok := h.version(x); !ok {
		return
	}
	if !h.session(x) {
		return
	}
	q, sid := h.openStream(x, nil)
	held := false
	defer func() {
		if !held {
			h.router.Streams().Unregister(sid)
		}
	}()
	ctx := x.r.Context()
	attach := &messages.AttachStream{Principal: x.principal, Stream: sid, LastEventID: x.r.Header.Get(headerLastEventID)}
	if err := h.router.Deliver(ctx, x.session, attach); err != nil {
		h.routeFailed(x, err)
		return
	}
	batch, ok := q.Wait(ctx)
	if !ok {
		h.detach(x, sid)
		return
	}
	standalone := false
	switch batch[0].Signal {
	case messages.SignalAttached:
		standalone = true
	case messages.SignalResumed: // ends with its request's response
	case messages.SignalConflict:
		h.fail(x, http.StatusConflict, "conflict: the session already has a GET stream open")
		return
	default:
		h.notFound(x)
		return
	}
	reuse := h.reusable(x.r)
	if x.r.ProtoMajor == 1 && !reuse {
		// The stream may be held (taken over from net/http), and without
		// a listener to give its connection back to, a held stream's end
		// is its connection's. Said in the head, a client never takes the
		// connection back into its pool, to find it closed under its next
		// request.
		x.w.Header()["Connection"] = connClose
	}
	ew := h.startSSE(x)
	if ew.flush() != nil { // the head goes out at once
		h.detach(x, sid)
		return
	}
	var ping <-chan time.Time
	if h.opts.KeepAlive > 0 {
		t := time.NewTicker(h.opts.KeepAlive)
		defer t.Stop()
		ping = t.C
	}
	quiet := time.NewTimer(holdAfter)
	defer quiet.Stop()
	var frames []messages.Frame
	batch = batch[1:]
	for {
		var end messages.StreamSignal
		frames, end = collect(frames[:0], batch)
		if len(frames) > 0 || end != messages.SignalFrame {
			if err := ew.write(frames, false, end != messages.SignalFrame); err != nil {
				h.detach(x, sid)
				return
			}
			if end != messages.SignalFrame {
				return // a resumed request's response went out, or the session ended the stream
			}
			quiet.Reset(holdAfter)
		}
		batch = nil
		select {
		case <-q.Wake():
			batch = q.Take()
		case <-quiet.C:
			// Only the standalone stream, which lives as long as its
			// session, is worth holding.
			if held = standalone && h.hold(x, q, sid, reuse); held {
				return
			}
		case <-ping:
			if err := ew.write(nil, true, false); err != nil {
				h.detach(x, sid)
				return
			}
		case <-ctx.Done():
			h.detach(x, sid)
			return
		}
	}
}
