package interop_test

import (
	"context"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// wireMsg is one JSON-RPC message as it crossed the wire.
type wireMsg struct {
	at   time.Time
	sent bool // client to server
	raw  []byte
	msg  jsonrpc.Message // decoded from raw: a copy the SDK cannot touch
}

// request returns the message as a request or notification, or nil.
func (m wireMsg) request(method string) *jsonrpc.Request {
	r, ok := m.msg.(*jsonrpc.Request)
	if !ok || r.Method != method {
		return nil
	}
	return r
}

// response returns the message as a response to id, or nil.
func (m wireMsg) response(id jsonrpc.ID) *jsonrpc.Response {
	r, ok := m.msg.(*jsonrpc.Response)
	if !ok || r.ID != id {
		return nil
	}
	return r
}

// wire records every message of one session, in order. The recording
// transport appends to it from the SDK's reader and writers; tests read it.
type wire struct {
	mu      sync.Mutex
	msgs    []wireMsg
	changed chan struct{} // closed and replaced on every append
}

func newWire() *wire { return &wire{changed: make(chan struct{})} }

func (w *wire) add(sent bool, msg jsonrpc.Message) {
	raw, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		raw = fmt.Appendf(nil, "<unencodable %T: %v>", msg, err)
	}
	copied, err := jsonrpc.DecodeMessage(raw)
	if err != nil {
		copied = msg
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, wireMsg{at: time.Now(), sent: sent, raw: raw, msg: copied})
	close(w.changed)
	w.changed = make(chan struct{})
}

// snapshot returns the messages recorded so far.
func (w *wire) snapshot() []wireMsg {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]wireMsg(nil), w.msgs...)
}

// waitFor returns the first message that matches, waiting for it until ctx
// ends.
func (w *wire) waitFor(ctx context.Context, match func(wireMsg) bool) (wireMsg, error) {
	seen := 0
	for {
		w.mu.Lock()
		msgs, changed := w.msgs[seen:], w.changed
		seen = len(w.msgs)
		w.mu.Unlock()
		for _, m := range msgs {
			if match(m) {
				return m, nil
			}
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return wireMsg{}, ctx.Err()
		}
	}
}

// String is the transcript, one message a line, for failure reports.
func (w *wire) String() string {
	var b strings.Builder
	for _, m := range w.snapshot() {
		dir := "server → client"
		if m.sent {
			dir = "client → server"
		}
		fmt.Fprintf(&b, "%s %s %s\n", m.at.Format("15:04:05.000"), dir, m.raw)
	}
	return b.String()
}

// toolCall is what the transcript holds about one tools/call.
type toolCall struct {
	id       jsonrpc.ID
	reqIdx   int               // index of the request in msgs
	reply    *jsonrpc.Response // nil until the response arrives
	replyIdx int               // index of reply in msgs, or -1
	msgs     []wireMsg
}

// lastCall finds the most recent tools/call of the tool name in the
// transcript and its response, if any.
func (w *wire) lastCall(name string) (toolCall, bool) {
	msgs := w.snapshot()
	c := toolCall{msgs: msgs, reqIdx: -1, replyIdx: -1}
	for i, m := range msgs {
		r := m.request("tools/call")
		if r == nil || !m.sent || !r.IsCall() {
			continue
		}
		var p struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(r.Params, &p) == nil && p.Name == name {
			c.id, c.reqIdx = r.ID, i
		}
	}
	if c.reqIdx < 0 {
		return c, false
	}
	for i, m := range msgs[c.reqIdx:] {
		if r := m.response(c.id); r != nil && !m.sent {
			c.reply, c.replyIdx = r, c.reqIdx+i
			break
		}
	}
	return c, true
}

// during returns the params of the server's messages named method (requests
// or notifications) that came after the call's request and before its
// response on the wire (until now, if it has none).
func (c toolCall) during(method string) []jsontext.Value {
	end := len(c.msgs)
	if c.replyIdx >= 0 {
		end = c.replyIdx
	}
	var out []jsontext.Value
	for _, m := range c.msgs[c.reqIdx+1 : end] {
		if r := m.request(method); r != nil && !m.sent {
			out = append(out, r.Params)
		}
	}
	return out
}

// answers returns the results the client sent, during the call, in answer
// to the server's requests named method.
func (c toolCall) answers(method string) []jsontext.Value {
	end := len(c.msgs)
	if c.replyIdx >= 0 {
		end = c.replyIdx
	}
	var ids []jsonrpc.ID
	var out []jsontext.Value
	for _, m := range c.msgs[c.reqIdx+1 : end] {
		if r := m.request(method); r != nil && !m.sent && r.IsCall() {
			ids = append(ids, r.ID)
			continue
		}
		for _, id := range ids {
			if r := m.response(id); r != nil && m.sent {
				out = append(out, r.Result)
			}
		}
	}
	return out
}

// count returns how many messages named method the server sent so far.
func (w *wire) count(method string) int {
	n := 0
	for _, m := range w.snapshot() {
		if m.request(method) != nil && !m.sent {
			n++
		}
	}
	return n
}

// lastReply returns the server's response to the last request named
// method the client sent, or nil.
func (w *wire) lastReply(method string) *jsonrpc.Response {
	msgs := w.snapshot()
	var id jsonrpc.ID
	idx := -1
	for i, m := range msgs {
		if r := m.request(method); r != nil && m.sent && r.IsCall() {
			id, idx = r.ID, i
		}
	}
	if idx < 0 {
		return nil
	}
	for _, m := range msgs[idx:] {
		if r := m.response(id); r != nil && !m.sent {
			return r
		}
	}
	return nil
}

// recordingTransport records every message its connection reads or
// writes. It serves stdio; over HTTP the wire is recorded by the
// http.Client instead (see recordingRoundTripper).
type recordingTransport struct {
	inner mcp.Transport
	wire  *wire
}

func (t *recordingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &recordingConn{Connection: c, wire: t.wire}, nil
}

type recordingConn struct {
	mcp.Connection
	wire *wire
}

func (c *recordingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil {
		c.wire.add(false, msg)
	}
	return msg, err
}

func (c *recordingConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	// Recorded before the write, so that a reply never precedes its
	// request in the transcript.
	c.wire.add(true, msg)
	return c.Connection.Write(ctx, msg)
}
