package transport

import (
	"io"
	"net"
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

// sseHeaders are the header lines every event-stream answer carries.
const sseHeaders = "Content-Type: text/event-stream\r\nCache-Control: no-cache\r\nX-Accel-Buffering: no\r\n"

// bodyEnd is the last chunk of a chunked body without trailers.
const bodyEnd = "0\r\n\r\n"

var bodyEndBytes = []byte(bodyEnd)

// appendBody appends events to b as the next piece of an event-stream
// body: as they are, or as one chunk of a chunked body, followed by the
// body's end with end (a body that is not chunked ends with its
// connection).
func appendBody(b, events []byte, chunked, end bool) []byte {
	if !chunked {
		return append(b, events...)
	}
	if len(events) > 0 {
		b = appendChunk(b, events)
	}
	if end {
		b = append(b, bodyEnd...)
	}
	return b
}

// appendChunk frames data as one HTTP/1.1 chunk.
func appendChunk(b, data []byte) []byte {
	b = strconv.AppendInt(b, int64(len(data)), 16)
	b = append(b, "\r\n"...)
	b = append(b, data...)
	return append(b, "\r\n"...)
}

// pumpEvents writes what src yields onto conn, after head, until src says
// done or an end frame goes out, each batch framed by appendBody. Every
// write waits up to the write timeout; a failed one is told to src. It
// reports whether all was written.
func pumpEvents(conn net.Conn, src *eventSource, head []byte, chunked bool, o *HTTPOptions, retry string) bool {
	b := head
	var events []byte
	for {
		frames, ping, done := src.next()
		var last bool
		events, last = appendEvents(events[:0], frames, ping, retry)
		finished := done || last
		b = appendBody(b, events, chunked, finished)
		if len(b) > 0 {
			_ = conn.SetWriteDeadline(time.Now().Add(o.WriteTimeout))
			if _, err := conn.Write(b); err != nil {
				src.failed()
				return false
			}
			if o.Observer != nil {
				for range frames {
					o.Observer.StreamEvent(false)
				}
			}
		}
		if finished {
			return true
		}
		b = b[:0]
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
