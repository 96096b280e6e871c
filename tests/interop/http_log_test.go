package interop_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcp-actors/mcp-actors/internal/sse"
)

// exchange is one HTTP request of the SDK and its response, as the SDK saw
// them: the response body holds what the SDK read, and how reading ended.
type exchange struct {
	at          time.Time
	method      string
	sessionID   string // Mcp-Session-Id sent
	version     string // Mcp-Protocol-Version sent
	lastEventID string // Last-Event-ID sent
	body        []byte // the request body

	// Set once the response arrives; guarded by the log's mu.
	status      int
	contentType string
	respSession string // Mcp-Session-Id received
	err         error  // from RoundTrip, or what ended reading the body
	resp        bytes.Buffer
}

// httpLog records every exchange of one client, in order.
type httpLog struct {
	mu sync.Mutex
	xs []*exchange
}

// snapshot returns copies of the exchanges so far.
func (l *httpLog) snapshot() []exchange {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]exchange, len(l.xs))
	for i, x := range l.xs {
		out[i] = exchange{
			at: x.at, method: x.method, sessionID: x.sessionID, version: x.version,
			lastEventID: x.lastEventID, body: x.body, status: x.status,
			contentType: x.contentType, respSession: x.respSession, err: x.err,
		}
		out[i].resp.Write(x.resp.Bytes())
	}
	return out
}

// String is the HTTP transcript, for failure reports: one line per
// exchange, then the response body as the SDK read it.
func (l *httpLog) String() string {
	var b strings.Builder
	for _, x := range l.snapshot() {
		fmt.Fprintf(&b, "%s %s session=%q version=%q", x.at.Format("15:04:05.000"), x.method, x.sessionID, x.version)
		if x.lastEventID != "" {
			fmt.Fprintf(&b, " last-event-id=%q", x.lastEventID)
		}
		if len(x.body) > 0 {
			fmt.Fprintf(&b, " %s", x.body)
		}
		fmt.Fprintf(&b, "\n  → %d %s", x.status, x.contentType)
		if x.respSession != "" {
			fmt.Fprintf(&b, " session=%q", x.respSession)
		}
		if x.err != nil {
			fmt.Fprintf(&b, " (%v)", x.err)
		}
		b.WriteString("\n")
		for line := range strings.Lines(x.resp.String()) {
			fmt.Fprintf(&b, "  | %s", line)
		}
		if x.resp.Len() > 0 && !bytes.HasSuffix(x.resp.Bytes(), []byte("\n")) {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// recordingRoundTripper records the exchanges of the requests it carries
// in log, and the JSON-RPC messages they carry in wire: a POST's message
// when it is sent, each message of a response as the client reads it.
//
// The SDK's mcp.Connection cannot be wrapped as on stdio: the streamable
// connection learns the initialize result through an unexported method
// that a wrapper hides, and would then send no Mcp-Protocol-Version and
// open no GET stream.
type recordingRoundTripper struct {
	inner http.RoundTripper
	log   *httpLog
	wire  *wire
}

func (rt *recordingRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	x := &exchange{
		at:          time.Now(),
		method:      req.Method,
		sessionID:   req.Header.Get("Mcp-Session-Id"),
		version:     req.Header.Get("Mcp-Protocol-Version"),
		lastEventID: req.Header.Get("Last-Event-ID"),
		body:        requestBody(req),
	}
	rt.log.mu.Lock()
	rt.log.xs = append(rt.log.xs, x)
	rt.log.mu.Unlock()
	if req.Method == http.MethodPost {
		rt.record(true, x.body)
	}

	resp, err := rt.inner.RoundTrip(req)
	rt.log.mu.Lock()
	defer rt.log.mu.Unlock()
	if err != nil {
		x.err = err
		return nil, err
	}
	x.status = resp.StatusCode
	x.contentType = resp.Header.Get("Content-Type")
	x.respSession = resp.Header.Get("Mcp-Session-Id")
	body := &recordingBody{ReadCloser: resp.Body, x: x, log: rt.log}
	if resp.StatusCode == http.StatusOK {
		switch mt, _, _ := mime.ParseMediaType(x.contentType); mt {
		case "text/event-stream":
			body.onEvent = func(ev sse.Event) {
				if len(ev.Data) > 0 {
					rt.record(false, ev.Data)
				}
			}
		case "application/json":
			body.onEOF = func(b []byte) { rt.record(false, b) }
		}
	}
	resp.Body = body
	return resp, nil
}

// record adds the message in data to the wire; what does not decode is
// left to the HTTP transcript.
func (rt *recordingRoundTripper) record(sent bool, data []byte) {
	if rt.wire == nil {
		return
	}
	if msg, err := jsonrpc.DecodeMessage(data); err == nil {
		rt.wire.add(sent, msg)
	}
}

// requestBody returns a copy of req's body, leaving req untouched.
func requestBody(req *http.Request) []byte {
	if req.Body == nil || req.GetBody == nil {
		return nil
	}
	rc, err := req.GetBody()
	if err != nil {
		return nil
	}
	defer rc.Close()
	b, _ := io.ReadAll(rc)
	return b
}

// recordingBody keeps what is read from a response body in its exchange,
// and passes each whole event read (onEvent), or the whole body once read
// (onEOF), on.
type recordingBody struct {
	io.ReadCloser
	x       *exchange
	log     *httpLog
	onEvent func(sse.Event)
	onEOF   func([]byte)
	pending []byte // read, not yet a whole event; or the body so far
}

func (b *recordingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.log.mu.Lock()
	b.x.resp.Write(p[:n])
	if err != nil && b.x.err == nil {
		b.x.err = err
	}
	b.log.mu.Unlock()

	b.pending = append(b.pending, p[:n]...)
	if b.onEvent != nil {
		// Our server ends lines with "\n": an event ends at "\n\n".
		for {
			i := bytes.Index(b.pending, []byte("\n\n"))
			if i < 0 {
				break
			}
			for _, ev := range sse.Parse(b.pending[:i+2]) {
				b.onEvent(ev)
			}
			b.pending = b.pending[i+2:]
		}
	}
	if b.onEOF != nil && errors.Is(err, io.EOF) {
		b.onEOF(b.pending)
		b.onEOF = nil
	}
	return n, err
}
