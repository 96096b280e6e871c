package transport

import (
	"net/http"
	"strconv"
	"time"

	"github.com/mcp-actors/mcp-actors/messages"
)

// sseWriter writes Server-Sent Events to one HTTP response.
type sseWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	retry   string // the retry field of priming events, in ms
	obs     Observer
	buf     []byte
}

func newSSEWriter(w http.ResponseWriter, o *HTTPOptions) *sseWriter {
	return &sseWriter{
		w:       w,
		rc:      http.NewResponseController(w),
		timeout: o.WriteTimeout,
		retry:   strconv.FormatInt(o.Retry.Milliseconds(), 10),
		obs:     o.Observer,
	}
}

// start sends the response headers of an event stream.
func (sw *sseWriter) start(h http.Header) error {
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // let proxies stream
	sw.w.WriteHeader(http.StatusOK)
	return sw.flush()
}

// write sends frames as events and reports whether the last one ended the
// stream (a request's response).
func (sw *sseWriter) write(frames []messages.Frame) (end bool, err error) {
	sw.buf = sw.buf[:0]
	for _, f := range frames {
		if f.EventID != "" {
			sw.buf = append(sw.buf, "id: "...)
			sw.buf = append(sw.buf, f.EventID...)
			sw.buf = append(sw.buf, '\n')
		}
		if f.Data == nil { // priming: tell the client how soon to reconnect
			sw.buf = append(sw.buf, "retry: "...)
			sw.buf = append(sw.buf, sw.retry...)
			sw.buf = append(sw.buf, "\ndata: \n\n"...)
		} else {
			sw.buf = append(sw.buf, "event: message\ndata: "...)
			sw.buf = append(sw.buf, f.Data...) // compact JSON: one line
			sw.buf = append(sw.buf, "\n\n"...)
		}
		end = end || f.End
	}
	if err := sw.send(sw.buf); err != nil {
		return false, err
	}
	if sw.obs != nil {
		for range frames {
			sw.obs.StreamEvent(false)
		}
	}
	return end, nil
}

// comment sends an SSE comment (a keep-alive ping).
func (sw *sseWriter) comment(text string) error {
	return sw.send([]byte(": " + text + "\n\n"))
}

func (sw *sseWriter) send(b []byte) error {
	_ = sw.rc.SetWriteDeadline(time.Now().Add(sw.timeout))
	if _, err := sw.w.Write(b); err != nil {
		return err
	}
	return sw.flush()
}

func (sw *sseWriter) flush() error {
	return sw.rc.Flush()
}
