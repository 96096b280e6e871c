package transport

import (
	"io"
	"strconv"
	"time"

	"github.com/mcp-actors/mcp-actors/messages"
)

// eventWriter writes Server-Sent Events to one response: frames as events
// (priming frames with the reconnection delay), and comments.
type eventWriter struct {
	w        io.Writer
	flush    func() error
	deadline func(time.Time) error // may be nil
	timeout  time.Duration
	retry    string // the retry field of priming events, in ms
	obs      Observer
	buf      []byte
}

func newEventWriter(w io.Writer, flush func() error, deadline func(time.Time) error, o *HTTPOptions) *eventWriter {
	return &eventWriter{
		w:        w,
		flush:    flush,
		deadline: deadline,
		timeout:  o.WriteTimeout,
		retry:    strconv.FormatInt(o.Retry.Milliseconds(), 10),
		obs:      o.Observer,
	}
}

// appendEvents formats frames as SSE events onto buf, and a keep-alive
// comment after them with ping, and reports whether the last one ended
// its stream (a request's response).
func appendEvents(buf []byte, frames []messages.Frame, ping bool, retry string) ([]byte, bool) {
	end := false
	for _, f := range frames {
		buf = appendEvent(buf, f, retry)
		end = end || f.End
	}
	if ping {
		buf = append(buf, ": keepalive\n\n"...)
	}
	return buf, end
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

// write sends frames as events (and a keep-alive comment with ping), and
// reports whether the last one ended the stream. The events that end a
// stream are not flushed: the server sends them with the end of the
// response, in one write.
func (ew *eventWriter) write(frames []messages.Frame, ping bool) (end bool, err error) {
	ew.buf, end = appendEvents(ew.buf[:0], frames, ping, ew.retry)
	if end {
		_, err = ew.w.Write(ew.buf)
	} else {
		err = ew.send(ew.buf)
	}
	if err != nil {
		return false, err
	}
	if ew.obs != nil {
		for range frames {
			ew.obs.StreamEvent(false)
		}
	}
	return end, nil
}

func (ew *eventWriter) send(b []byte) error {
	if ew.deadline != nil {
		_ = ew.deadline(time.Now().Add(ew.timeout))
	}
	if _, err := ew.w.Write(b); err != nil {
		return err
	}
	return ew.flush()
}
