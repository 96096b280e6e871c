package interop_test

import (
	"bytes"
	json "encoding/json/v2"
	"errors"
	"io"
	"net/http"
	"sync"

	"github.com/mcp-actors/mcp-actors/internal/sse"
)

// errStreamCut is what a cut response body returns once it has passed on
// the event it was cut after, as a dropped connection would.
var errStreamCut = errors.New("interop: stream cut by the test")

// streamCutter is an http.RoundTripper that drops the response stream of
// the first POST a chooser picks, right after the stream's first
// notifications/progress event. Everything else passes through untouched.
type streamCutter struct {
	inner  http.RoundTripper
	choose func(body []byte) bool // picks the POST by its JSON-RPC body

	mu      sync.Mutex
	armed   bool   // no stream has been chosen yet
	cut     bool   // the chosen stream was cut
	eventID string // the id of the event the stream was cut after
}

func newStreamCutter(inner http.RoundTripper, choose func(body []byte) bool) *streamCutter {
	return &streamCutter{inner: inner, choose: choose, armed: true}
}

func (c *streamCutter) RoundTrip(req *http.Request) (*http.Response, error) {
	chosen := false
	if req.Method == http.MethodPost {
		if body := requestBody(req); body != nil && c.choose(body) {
			c.mu.Lock()
			chosen, c.armed = c.armed, false
			c.mu.Unlock()
		}
	}
	resp, err := c.inner.RoundTrip(req)
	if err != nil || !chosen {
		return resp, err
	}
	resp.Body = &cutBody{inner: resp.Body, cutter: c}
	return resp, nil
}

// result reports whether the stream was cut and after which event.
func (c *streamCutter) result() (cut bool, eventID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cut, c.eventID
}

// cutBody passes on whole SSE events until the first progress event, then
// fails every Read with errStreamCut. It never passes on part of an event:
// the client sees a stream that broke cleanly between two events.
type cutBody struct {
	inner   io.ReadCloser
	cutter  *streamCutter
	pending []byte // read, not yet known to be a whole event
	out     []byte // whole events, not yet passed on
	cut     bool
	err     error // from inner, returned once out is drained
}

func (b *cutBody) Read(p []byte) (int, error) {
	for len(b.out) == 0 {
		switch {
		case b.cut:
			return 0, errStreamCut
		case b.err != nil:
			return 0, b.err
		}
		var buf [4096]byte
		n, err := b.inner.Read(buf[:])
		b.pending = append(b.pending, buf[:n]...)
		b.err = err
		// Our server ends lines with "\n": an event ends at "\n\n".
		for !b.cut {
			i := bytes.Index(b.pending, []byte("\n\n"))
			if i < 0 {
				break
			}
			raw := b.pending[:i+2]
			b.out = append(b.out, raw...)
			b.pending = b.pending[i+2:]
			if evs := sse.Parse(raw); len(evs) == 1 && isProgress(string(evs[0].Data)) {
				b.cut = true
				b.cutter.mu.Lock()
				b.cutter.cut, b.cutter.eventID = true, evs[0].ID
				b.cutter.mu.Unlock()
			}
		}
	}
	n := copy(p, b.out)
	b.out = b.out[n:]
	return n, nil
}

func (b *cutBody) Close() error { return b.inner.Close() }

// isProgress reports whether data is a notifications/progress.
func isProgress(data string) bool {
	var m struct {
		Method string `json:"method"`
	}
	return json.Unmarshal([]byte(data), &m) == nil && m.Method == "notifications/progress"
}

// isToolCall returns a chooser of the POSTs that call tool.
func isToolCall(tool string) func(body []byte) bool {
	return func(body []byte) bool {
		var m struct {
			Method string `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		return json.Unmarshal(body, &m) == nil && m.Method == "tools/call" && m.Params.Name == tool
	}
}
