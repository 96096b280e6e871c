package dispatcher

import (
	"bytes"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"fmt"
	"strconv"

	"github.com/mcp-actors/mcp-actors/messages"
)

// Sender writes one encoded frame (a request or notifications/cancelled) for
// call c to the client. It is called on the actor and must not block.
type Sender func(c *Call, frame []byte)

// stats counts what the table has seen; only the package's tests read it
// (export_test.go).
type stats struct {
	Sent             uint64 // requests sent to the client
	Completed        uint64 // calls answered with a result or an error
	Cancelled        uint64 // calls cancelled by their caller
	RemoteCancelled  uint64 // calls cancelled by the client
	Stray            uint64 // responses to IDs never issued
	Duplicate        uint64 // responses to IDs no longer pending
	DroppedProgress  uint64 // progress updates dropped because the caller lagged
	FailedOnClose    uint64 // calls failed by Close
	FailedToEncode   uint64 // calls whose request could not be encoded
	ProgressReceived uint64 // progress updates routed to callers
}

// Table is the outbound call table of one session. It is not safe for
// concurrent use: only the owning actor touches it.
type Table struct {
	send    Sender
	last    int64 // last issued ID
	pending map[messages.ID]*Call
	closed  error
	holding bool
	held    []heldFrame
	stats   stats
}

type heldFrame struct {
	call  *Call
	frame []byte
}

// NewTable returns an empty table that writes frames with send.
func NewTable(send Sender) *Table {
	return &Table{send: send, pending: make(map[messages.ID]*Call)}
}

// Receive applies a message posted by a Client.
func (t *Table) Receive(m Message) {
	switch m := m.(type) {
	case *Begin:
		t.Begin(m.Call)
	case *Cancel:
		t.Cancel(m.Call, m.Reason)
	default:
		panic(fmt.Sprintf("outbound: unknown message %T", m))
	}
}

// Hold makes the table keep the frames of new calls instead of sending them
// (the session is not open yet); Release sends them in order.
func (t *Table) Hold() { t.holding = true }

// Release sends the frames held since Hold, in the order they were begun,
// and lets later calls go straight out.
func (t *Table) Release() {
	t.holding = false
	held := t.held
	t.held = nil
	for _, h := range held {
		if t.pending[h.call.id] == h.call {
			t.stats.Sent++
			h.call.sent = true
			t.send(h.call, h.frame)
		}
	}
}

// Begin allocates the next ID for c, records it as pending and sends it.
// On a closed table c fails at once with the close reason.
func (t *Table) Begin(c *Call) {
	if t.closed != nil {
		c.finish(nil, t.closed)
		return
	}
	t.last++
	c.id = messages.IntID(t.last)
	var params any
	if c.Params != nil {
		params = c.Params
	}
	if c.onProgress != nil {
		c.token = t.last
		params = withProgressToken(c.Params, t.last)
	}
	frame, err := messages.EncodeRequest(c.id, c.Method, params)
	if err != nil {
		t.stats.FailedToEncode++
		c.finish(nil, fmt.Errorf("encoding request: %w", err))
		return
	}
	t.pending[c.id] = c
	if t.holding {
		t.held = append(t.held, heldFrame{call: c, frame: frame})
		return
	}
	t.stats.Sent++
	c.sent = true
	t.send(c, frame)
}

// Cancel stops waiting for c. If the request went out, the client is sent
// notifications/cancelled with its ID; a held request is simply dropped.
func (t *Table) Cancel(c *Call, reason string) {
	if c.id.IsZero() || t.pending[c.id] != c {
		return
	}
	delete(t.pending, c.id)
	t.stats.Cancelled++
	c.finish(nil, errCancelledByCaller)
	for i, h := range t.held {
		if h.call == c {
			t.held = append(t.held[:i], t.held[i+1:]...)
			return
		}
	}
	frame, err := messages.EncodeNotification(messages.MethodCancelled,
		&messages.CancelledParams{RequestID: c.id, Reason: reason})
	if err == nil {
		t.send(c, frame)
	}
}

// errCancelledByCaller finishes a call whose caller has already returned.
var errCancelledByCaller = fmt.Errorf("outbound: cancelled by the caller")

// HandleResponse resolves the pending call m answers. It reports whether a
// call was resolved; anything else is counted as stray or duplicate.
func (t *Table) HandleResponse(m *messages.Message) bool {
	c, ok := t.pending[m.ID]
	if !ok || !c.sent { // an answer to a request not yet sent is stray
		ok = false
	}
	if !ok {
		if n, isInt := m.ID.Int(); isInt && n >= 1 && n <= t.last {
			t.stats.Duplicate++
		} else {
			t.stats.Stray++
		}
		return false
	}
	delete(t.pending, m.ID)
	t.stats.Completed++
	if m.Error != nil {
		c.finish(nil, &ClientError{Wire: m.Error})
	} else {
		c.finish(m.Result, nil)
	}
	return true
}

// HandleCancelled ends the pending call the client cancelled, with
// ErrRemoteCancelled. It reports whether p named a pending call.
func (t *Table) HandleCancelled(p *messages.CancelledParams) bool {
	c, ok := t.pending[p.RequestID]
	if !ok || !c.sent {
		return false
	}
	delete(t.pending, p.RequestID)
	t.stats.RemoteCancelled++
	if p.Reason != "" {
		c.finish(nil, fmt.Errorf("%w: %s", ErrRemoteCancelled, p.Reason))
	} else {
		c.finish(nil, ErrRemoteCancelled)
	}
	return true
}

// HandleProgress routes a progress update to the caller of the call whose
// progress token it carries. It reports whether a caller was found.
func (t *Table) HandleProgress(p *messages.ProgressParams) bool {
	n, ok := p.ProgressToken.Int()
	if !ok {
		return false
	}
	c, ok := t.pending[messages.IntID(n)]
	if !ok || !c.sent || c.progress == nil || c.token != n {
		return false
	}
	select {
	case c.progress <- p:
		t.stats.ProgressReceived++
	default:
		t.stats.DroppedProgress++
	}
	return true
}

// Close fails every pending call with err (ErrClosed when nil) and makes
// later calls fail at once with it.
func (t *Table) Close(err error) {
	if t.closed != nil {
		return
	}
	if err == nil {
		err = ErrClosed
	}
	t.closed = err
	for id, c := range t.pending {
		delete(t.pending, id)
		t.stats.FailedOnClose++
		c.finish(nil, err)
	}
	t.held = nil
}

// Pending returns the number of calls waiting for the client.
func (t *Table) Pending() int { return len(t.pending) }

// withProgressToken returns params with _meta.progressToken set to token.
func withProgressToken(params jsontext.Value, token int64) jsontext.Value {
	var obj map[string]jsontext.Value
	if len(bytes.TrimSpace(params)) == 0 || json.Unmarshal(params, &obj) != nil || obj == nil {
		obj = map[string]jsontext.Value{}
	}
	meta := map[string]jsontext.Value{}
	if raw, ok := obj["_meta"]; ok {
		_ = json.Unmarshal(raw, &meta)
		if meta == nil {
			meta = map[string]jsontext.Value{}
		}
	}
	meta["progressToken"] = jsontext.Value(strconv.FormatInt(token, 10))
	// Members sorted, as encoding/json (v1) wrote them: the same params
	// give the same bytes.
	obj["_meta"], _ = json.Marshal(meta, json.Deterministic(true))
	out, _ := json.Marshal(obj, json.Deterministic(true))
	return out
}
