package transport_test

import (
	"bufio"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/messages"
)

// sseEvent is one dispatched Server-Sent Event, or one comment line.
type sseEvent struct {
	ID      string // this event's id field
	HasID   bool   // the event had an id field
	LastID  string // the stream's last event ID after this event (SSE semantics)
	Retry   string // the retry field, when it had a valid one
	Event   string // the event type field
	Data    string // the data, lines joined with "\n"
	Comment string // the text of a comment line (then nothing else is set)
	comment bool
}

// isPriming reports whether e is a priming event: an ID and empty data.
func (e sseEvent) isPriming() bool { return !e.comment && e.HasID && e.Data == "" }

// isMessage reports whether e carries a JSON-RPC message.
func (e sseEvent) isMessage() bool { return !e.comment && e.Data != "" }

// message decodes e's data as one JSON-RPC message.
func (e sseEvent) message(t *testing.T) *messages.Message {
	t.Helper()
	m, derr := messages.Decode([]byte(e.Data))
	require.Nil(t, derr, "event data is not a JSON-RPC message: %q", e.Data)
	return m
}

// sseReader parses an event stream as it arrives, on a goroutine of its
// own; the test takes events with a bounded wait.
type sseReader struct {
	t      *testing.T
	resp   *http.Response
	items  chan sseEvent // closed at the end of the stream
	stop   chan struct{}
	closed sync.Once
	err    error // what ended the stream (nil: a clean end); set before items closes
}

func newSSEReader(t *testing.T, resp *http.Response) *sseReader {
	s := &sseReader{t: t, resp: resp, items: make(chan sseEvent), stop: make(chan struct{})}
	go s.run()
	t.Cleanup(s.close)
	return s
}

// run parses the stream as the SSE specification says (WHATWG HTML,
// "event stream interpretation"): lines end with CRLF, LF or CR; a blank
// line dispatches the event; a line starting with ':' is a comment; one
// space after the colon is dropped; data lines accumulate; an event with no
// data is not dispatched; the last event ID persists across events.
func (s *sseReader) run() {
	defer close(s.items)
	sc := bufio.NewScanner(s.resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	sc.Split(splitSSELines)
	var (
		ev      sseEvent
		data    strings.Builder
		hasData bool
		lastID  string
	)
	emit := func(e sseEvent) bool {
		select {
		case s.items <- e:
			return true
		case <-s.stop:
			return false
		}
	}
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if hasData {
				d := data.String()
				ev.Data = strings.TrimSuffix(d, "\n")
				ev.LastID = lastID
				if !emit(ev) {
					return
				}
			}
			ev, hasData = sseEvent{}, false
			data.Reset()
			continue
		}
		if strings.HasPrefix(line, ":") {
			if !emit(sseEvent{Comment: strings.TrimPrefix(line[1:], " "), comment: true}) {
				return
			}
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			ev.Event = value
		case "data":
			data.WriteString(value)
			data.WriteByte('\n')
			hasData = true
		case "id":
			if !strings.ContainsRune(value, 0) {
				ev.ID, ev.HasID, lastID = value, true, value
			}
		case "retry":
			if _, err := strconv.ParseUint(value, 10, 64); err == nil {
				ev.Retry = value
			}
		}
	}
	s.err = sc.Err() // an incomplete last event is dropped, as the spec says
}

// splitSSELines splits at CRLF, LF or CR.
func splitSSELines(data []byte, atEOF bool) (int, []byte, error) {
	for i, b := range data {
		switch b {
		case '\n':
			return i + 1, data[:i], nil
		case '\r':
			if i+1 < len(data) {
				if data[i+1] == '\n' {
					return i + 2, data[:i], nil
				}
				return i + 1, data[:i], nil
			}
			if atEOF {
				return i + 1, data[:i], nil
			}
			return 0, nil, nil // a CR at the end: wait to see whether LF follows
		}
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}

// next returns the next event or comment; false at the end of the stream.
// It fails the test after d.
func (s *sseReader) next(d time.Duration) (sseEvent, bool) {
	s.t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case ev, ok := <-s.items:
		return ev, ok
	case <-timer.C:
		require.FailNowf(s.t, "no SSE event", "nothing on the stream within %v", d)
		return sseEvent{}, false
	}
}

// nextEvent returns the next event, skipping comments; it fails at the end
// of the stream.
func (s *sseReader) nextEvent() sseEvent {
	s.t.Helper()
	for {
		ev, ok := s.next(watchdog)
		if !ok {
			require.FailNowf(s.t, "the stream ended", "ended by: %v", s.err) // s.err is set: items is closed
		}
		if !ev.comment {
			return ev
		}
	}
}

// nextMessage returns the next JSON-RPC message and its event, skipping
// comments and priming events.
func (s *sseReader) nextMessage() (*messages.Message, sseEvent) {
	s.t.Helper()
	for {
		ev := s.nextEvent()
		if ev.isMessage() {
			return ev.message(s.t), ev
		}
	}
}

// rest reads the stream to its end and returns what was left, comments
// included.
func (s *sseReader) rest() []sseEvent {
	s.t.Helper()
	var out []sseEvent
	for {
		ev, ok := s.next(watchdog)
		if !ok {
			return out
		}
		out = append(out, ev)
	}
}

// ended waits for the end of the stream, skipping what is left, and returns
// what ended it (nil: a clean end).
func (s *sseReader) ended() error {
	s.t.Helper()
	s.rest()
	return s.err
}

// endedWithSession reads a standalone GET stream to its end and returns
// what ended it: nil when the stream ended cleanly with its session.
func (s *sseReader) endedWithSession() error {
	s.t.Helper()
	return s.ended()
}

// close drops the connection (if still open) and stops the reader.
func (s *sseReader) close() {
	s.closed.Do(func() {
		close(s.stop)
		s.resp.Body.Close()
		for range s.items {
		}
	})
}

// TestSSEReader checks the test client's SSE parser against the event
// stream format (WHATWG HTML, "Parsing an event stream"), so that the HTTP
// tests read what a browser would.
func TestSSEReader(t *testing.T) {
	tests := []struct {
		name   string
		stream string
		want   []sseEvent
	}{
		{"priming event", "id: 1-0\nretry: 1000\ndata: \n\n",
			[]sseEvent{{ID: "1-0", HasID: true, LastID: "1-0", Retry: "1000"}}},
		{"message event", "id: 1-1\nevent: message\ndata: {\"a\":1}\n\n",
			[]sseEvent{{ID: "1-1", HasID: true, LastID: "1-1", Event: "message", Data: `{"a":1}`}}},
		{"CRLF and CR line ends", "id: a\r\ndata: x\r\n\r\nid: b\rdata: y\r\r",
			[]sseEvent{{ID: "a", HasID: true, LastID: "a", Data: "x"}, {ID: "b", HasID: true, LastID: "b", Data: "y"}}},
		{"data lines join with LF", "data: one\ndata:two\ndata\n\n",
			[]sseEvent{{Data: "one\ntwo\n"}}},
		{"comments", ": keepalive\n\n:x\n",
			[]sseEvent{{Comment: "keepalive", comment: true}, {Comment: "x", comment: true}}},
		{"no data: not dispatched, but the ID persists", "id: 7\n\ndata: z\n\n",
			[]sseEvent{{LastID: "7", Data: "z"}}},
		{"invalid retry ignored", "retry: soon\ndata: r\n\n",
			[]sseEvent{{Data: "r"}}},
		{"unterminated last event dropped", "data: done\n\ndata: cut",
			[]sseEvent{{Data: "done"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSSEReader(t, &http.Response{Body: io.NopCloser(strings.NewReader(tt.stream))})
			got := s.rest()
			require.NoError(t, s.err)
			assert.Equal(t, tt.want, got)
		})
	}
}
