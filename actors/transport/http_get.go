package transport

import (
	"net/http"
	"time"

	"github.com/mcp-actors/mcp-actors/messages"
)

// get opens the session's standalone event stream, or resumes the stream a
// Last-Event-ID names (replaying what followed it, then going live). The
// stream lives on the goroutine net/http gives the request, for its whole
// life, the same over HTTP/1.1, HTTP/2 and h2c: the session hands its
// events to the stream's queue, which wakes this goroutine to write them;
// a quiet stream carries a keep-alive comment every KeepAlive. It ends
// when the session ends it, when the client hangs up (the request's
// context), or when the http.Server serving it begins to shut down
// (shuttingDown). Its body then ends, and net/http keeps or closes the
// connection as for any other response.
//
//	session ──StreamEvent──▶ Queue ──Wake──▶ get ──write, Flush──▶ ResponseWriter
func (h *HTTPHandler) get(x *exchange) {
	if h.modernNotAllowed(x, "has no GET stream (notifications come on subscriptions/listen)") {
		return
	}
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
	defer h.router.Streams().Unregister(sid)
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
	switch batch[0].Signal {
	case messages.SignalAttached: // the standalone stream: lives as long as its session
	case messages.SignalResumed: // a request's stream: ends with its response
	case messages.SignalConflict:
		h.fail(x, http.StatusConflict, "conflict: the session already has a GET stream open")
		return
	default:
		h.notFound(x)
		return
	}
	shutdown := h.shuttingDown(x.r)
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
		}
		batch = nil
		select {
		case <-q.Wake():
			batch = q.Take()
		case <-ping:
			if err := ew.write(nil, true, false); err != nil {
				h.detach(x, sid)
				return
			}
		case <-shutdown:
			// The server is going away: the body ends cleanly, and the
			// session learns that the stream has no connection, so that
			// the client may resume it on another node.
			_ = ew.write(nil, false, true)
			h.detach(x, sid)
			return
		case <-ctx.Done():
			h.detach(x, sid)
			return
		}
	}
}
