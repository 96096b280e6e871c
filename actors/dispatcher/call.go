package dispatcher

import (
	"encoding/json/jsontext"
	"errors"

	"github.com/mcp-actors/mcp-actors/messages"
)

// progressBuffer bounds the progress updates queued for one call's callback;
// updates beyond it are dropped (and counted) rather than block the actor.
const progressBuffer = 32

// Call is one outbound request. It is built by the caller, handed to the
// table with Begin, and from then on its unexported fields belong to the
// actor; the caller only reads the done and progress channels.
type Call struct {
	// Method and Params are the request; Params is already encoded.
	Method string
	Params jsontext.Value
	// Route tells the session which stream carries the request (for example
	// the inbound request whose handler made the call). Opaque to the table.
	Route any

	onProgress func(*messages.ProgressParams)
	progress   chan *messages.ProgressParams
	done       chan result

	id    messages.ID // set by Begin
	token int64       // progress token, when onProgress is set
	sent  bool        // the request has gone out (not held)
}

type result struct {
	raw jsontext.Value
	err error
}

// ID returns the request ID the table gave the call (zero before Begin).
// Only the actor may call it.
func (c *Call) ID() messages.ID { return c.id }

func (c *Call) finish(raw jsontext.Value, err error) {
	select {
	case c.done <- result{raw: raw, err: err}:
	default: // already finished
	}
}

// errInvalidParams rejects raw params that are not JSON.
var errInvalidParams = errors.New("params are not valid JSON")

// CallOption configures one call.
type CallOption func(*Call)

// WithProgress asks the client for progress on the call (a progressToken in
// _meta) and calls fn, on the caller's goroutine, for each update.
func WithProgress(fn func(*messages.ProgressParams)) CallOption {
	return func(c *Call) { c.onProgress = fn }
}

// WithRoute sets the call's Route.
func WithRoute(route any) CallOption {
	return func(c *Call) { c.Route = route }
}

// NewCall builds a call, encoding params (nil means no params).
func NewCall(method string, params any, opts ...CallOption) (*Call, error) {
	c := &Call{Method: method, done: make(chan result, 1)}
	if params != nil {
		raw, err := messages.Marshal(params)
		if err != nil {
			return nil, err
		}
		// Marshal's output is valid JSON, except a jsontext.Value given
		// as it is.
		if _, given := params.(jsontext.Value); given && !jsontext.Value(raw).IsValid() {
			return nil, errInvalidParams
		}
		c.Params = raw
	}
	for _, o := range opts {
		o(c)
	}
	if c.onProgress != nil {
		c.progress = make(chan *messages.ProgressParams, progressBuffer)
	}
	return c, nil
}
