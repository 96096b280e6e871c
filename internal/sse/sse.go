// Package sse reads a text/event-stream body (the HTML standard's
// server-sent events), as a Streamable HTTP client does: the harness, the
// module's tests and its benchmark clients read the server's SSE streams
// with it, one reader for all.
//
//	body ──lines (LF, CRLF or CR)──▶ fields (id, event, data, retry; ":" comments) ──blank line──▶ Event
//
// Unlike a browser's EventSource it also returns an event with no data
// field (an MCP priming event is an ID alone: a client keeps it to resume
// from) and a block of comments alone (a keep-alive), and says which
// fields were present.
package sse

import (
	"bufio"
	"bytes"
	"io"
)

// MaxLine bounds one line of a stream, a data line included: larger
// messages than any test sends.
const MaxLine = 64 << 20

// Event is one event of a stream.
type Event struct {
	ID      string // the event's id field ("" when it had none: see HasID)
	HasID   bool
	Name    string // the event field ("" for none, which means "message")
	Data    []byte // the data fields' values, joined with "\n"
	HasData bool   // a data field was present, even an empty one
	Retry   string // the retry field, as sent
	// Comments are the texts of the block's comment lines (after their
	// ":"): a block of comments alone is a keep-alive.
	Comments []string
}

// Reader reads the events of one stream.
type Reader struct{ sc *bufio.Scanner }

// NewReader returns a reader of the events in r.
func NewReader(r io.Reader) *Reader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLine)
	sc.Split(splitLines)
	return &Reader{sc: sc}
}

// Next returns the next event: the fields and comments up to a blank
// line, the event having at least one. At the stream's end it returns io.EOF (an event
// without its blank line is left out, as the standard says); a read
// error, or a line longer than MaxLine, is returned as it is.
func (r *Reader) Next() (Event, error) {
	var ev Event
	fields := false
	for r.sc.Scan() {
		line := r.sc.Bytes()
		if len(line) == 0 {
			if fields {
				return ev, nil
			}
			continue
		}
		if line[0] == ':' {
			ev.Comments, fields = append(ev.Comments, string(line[1:])), true
			continue
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		fields = true
		switch string(name) {
		case "id":
			ev.ID, ev.HasID = string(value), true
		case "event":
			ev.Name = string(value)
		case "data":
			if ev.HasData {
				ev.Data = append(ev.Data, '\n')
			}
			ev.Data, ev.HasData = append(ev.Data, value...), true
		case "retry":
			ev.Retry = string(value)
		}
	}
	if err := r.sc.Err(); err != nil {
		return Event{}, err
	}
	return Event{}, io.EOF
}

// Each calls fn with every event of r, in order, to its end; err is nil
// at a clean end.
func Each(r io.Reader, fn func(Event)) error {
	rd := NewReader(r)
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		fn(ev)
	}
}

// All reads every event of r to its end; err is nil at a clean end.
func All(r io.Reader) ([]Event, error) {
	var out []Event
	err := Each(r, func(ev Event) { out = append(out, ev) })
	return out, err
}

// Parse returns the complete events of body (a stream read whole, or as
// far as it came).
func Parse(body []byte) []Event {
	out, _ := All(bytes.NewReader(body))
	return out
}

// splitLines is a bufio.SplitFunc for the stream's line ends: LF, CRLF
// or CR. A CR at the end of the data read so far waits for the next byte
// (it may be a CRLF), unless the stream has ended.
func splitLines(data []byte, atEOF bool) (advance int, token []byte, err error) {
	if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
		if data[i] == '\n' {
			return i + 1, data[:i], nil
		}
		switch {
		case i+1 < len(data):
			if data[i+1] == '\n' {
				return i + 2, data[:i], nil
			}
			return i + 1, data[:i], nil
		case atEOF:
			return i + 1, data[:i], nil
		}
		return 0, nil, nil // a CR last: wait for what follows
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil // a last line without its end: no blank line follows, nothing is dispatched
	}
	return 0, nil, nil
}
