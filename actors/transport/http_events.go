package transport

import (
	"net/http"
	"time"

	"github.com/mcp-actors/mcp-actors/messages"
)

// eventWriter writes Server-Sent Events to one response: frames as events
// (priming frames with the reconnection delay), and keep-alive comments.
type eventWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	retry   string // the retry field of priming events, in ms
	obs     HTTPObserver
	buf     []byte
}

// ctSSE, noCache and noBuffering are the header values of every event
// stream, shared: net/http only reads them.
var (
	ctSSE       = []string{"text/event-stream"}
	noCache     = []string{"no-cache"}
	noBuffering = []string{"no"}
)

// startSSE answers 200 with an event stream. The head goes out with the
// first events, or when the handler returns.
func (h *HTTPHandler) startSSE(x *exchange) *eventWriter {
	hd := x.w.Header()
	hd["Content-Type"] = ctSSE
	hd["Cache-Control"] = noCache
	hd["X-Accel-Buffering"] = noBuffering // let proxies stream
	x.w.WriteHeader(http.StatusOK)
	x.status, x.streamed = http.StatusOK, true
	return &eventWriter{
		w:       x.w,
		rc:      http.NewResponseController(x.w),
		timeout: h.opts.WriteTimeout,
		retry:   h.retry,
		obs:     h.opts.Observer,
	}
}

// write sends frames as events, and a keep-alive comment with ping. With
// last nothing follows them: they are not flushed, and go out with the end
// of the response, in one write, within the write deadline set here (a
// stream quiet for longer than the last one would otherwise end its body
// past it).
func (ew *eventWriter) write(frames []messages.Frame, ping, last bool) error {
	ew.buf = appendEvents(ew.buf[:0], frames, ping, ew.retry)
	_ = ew.rc.SetWriteDeadline(time.Now().Add(ew.timeout))
	if len(ew.buf) == 0 && last {
		return nil
	}
	if _, err := ew.w.Write(ew.buf); err != nil {
		return err
	}
	if !last {
		if err := ew.rc.Flush(); err != nil {
			return err
		}
	}
	if ew.obs != nil {
		for range frames {
			ew.obs.StreamEvent(false)
		}
	}
	return nil
}

// flush sends what has been written so far (the head of a GET's stream).
func (ew *eventWriter) flush() error { return ew.rc.Flush() }

// appendEvents formats frames as SSE events onto buf, and a keep-alive
// comment after them with ping.
func appendEvents(buf []byte, frames []messages.Frame, ping bool, retry string) []byte {
	for _, f := range frames {
		buf = appendEvent(buf, f, retry)
	}
	if ping {
		buf = append(buf, ": keepalive\n\n"...)
	}
	return buf
}

// appendEvent formats one frame as an SSE event onto buf.
func appendEvent(buf []byte, f messages.Frame, retry string) []byte {
	if f.EventID != "" {
		buf = append(buf, "id: "...)
		buf = append(buf, f.EventID...)
		buf = append(buf, '\n')
	}
	if f.Data == nil { // priming: tell the client how soon to reconnect
		buf = append(buf, "retry: "...)
		buf = append(buf, retry...)
		return append(buf, "\ndata: \n\n"...)
	}
	buf = append(buf, "event: message\ndata: "...)
	buf = append(buf, f.Data...) // compact JSON: one line
	return append(buf, "\n\n"...)
}
