package harness

import (
	"context"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-actors/mcp-actors/actors/router"
	"github.com/mcp-actors/mcp-actors/messages"
)

// Client speaks to one session actor the way a transport would, and keeps
// everything the session sent in order. Its methods are safe for concurrent
// use.
type Client struct {
	rts   []router.Router // the nodes it may send through (one, but in a cluster)
	rt    router.Router   // where its standalone stream is
	sent  atomic.Uint64   // messages sent, for choosing the next node
	id    string
	sid   messages.StreamID // the standalone stream's
	cfg   clientConfig
	queue *frameQueue
	inbox *inbox

	nextID atomic.Int64

	mu       sync.Mutex
	handlers map[string]RequestHandler

	ctx       context.Context // cancelled by Close: ends scripted handlers
	cancel    context.CancelFunc
	handling  sync.WaitGroup // scripted handlers running
	pumpDone  chan struct{}
	ended     chan struct{} // closed when the session ends the standalone stream
	endOnce   sync.Once
	closeOnce sync.Once

	// InitializeResult is the server's answer to Initialize.
	InitializeResult *messages.InitializeResult
}

func newClient(rts []router.Router, home int, id string, cfg clientConfig) *Client {
	c := &Client{
		rts:      rts,
		rt:       rts[home],
		id:       id,
		cfg:      cfg,
		queue:    newFrameQueue(),
		inbox:    newInbox(),
		handlers: cfg.handlers,
		pumpDone: make(chan struct{}),
		ended:    make(chan struct{}),
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.sid = c.rt.Streams().Register(c.id, &streamSink{c: c, rt: c.rt, standalone: true})
	if c.rt.Deliver(context.Background(), c.id, &messages.AttachStream{Principal: cfg.principal, Stream: c.sid}) != nil {
		c.endOnce.Do(func() { close(c.ended) })
	}
	go c.pump()
	return c
}

// Reattach opens the client's standalone stream again, through the node
// its picker chooses next, as a client reopens its GET stream when the
// last one ended (its node was lost, say).
func (c *Client) Reattach() error {
	rt := c.via()
	sid := rt.Streams().Register(c.id, &streamSink{c: c, rt: rt, standalone: true})
	if err := rt.Deliver(context.Background(), c.id, &messages.AttachStream{Principal: c.cfg.principal, Stream: sid}); err != nil {
		rt.Streams().Unregister(sid)
		return err
	}
	c.mu.Lock()
	old, oldRT := c.sid, c.rt
	c.sid, c.rt = sid, rt
	c.mu.Unlock()
	oldRT.Streams().Unregister(old)
	return nil
}

// ID returns the session ID.
func (c *Client) ID() string { return c.id }

// Done is closed once the session has ended.
func (c *Client) Done() <-chan struct{} { return c.ended }

// via returns the node the next message goes through: in a cluster, the
// client's node picker chooses (round robin by default).
func (c *Client) via() router.Router {
	if len(c.rts) == 1 {
		return c.rts[0]
	}
	n := c.sent.Add(1) - 1
	pick := int(n % uint64(len(c.rts)))
	if c.cfg.pick != nil {
		pick = c.cfg.pick(n, len(c.rts))
	}
	return c.rts[pick]
}

// send delivers m to the session through a router, as a transport would;
// a session that has ended takes nothing. A delivery is acknowledged once
// the session's mailbox has m, so what one client sends arrives in order
// whichever nodes it goes through.
func (c *Client) send(m messages.ActorMessage) { _ = c.via().Deliver(context.Background(), c.id, m) }

// request sends a client request whose frames arrive in the transcript
// with Stream set to stream, on a stream of the node it goes through.
func (c *Client) request(m *messages.Message, stream string) {
	rt := c.via()
	sid := rt.Streams().Register(c.id, &streamSink{c: c, rt: rt, stream: stream})
	if rt.Deliver(context.Background(), c.id, &messages.HandleRequest{Principal: c.cfg.principal, Msg: m, Stream: sid}) != nil {
		rt.Streams().Unregister(sid)
	}
}

// Initialize sends initialize and notifications/initialized, then a ping:
// its answer proves the session has opened (the mailbox is FIFO), so a
// broadcast made after Initialize returns reaches it.
func (c *Client) Initialize(ctx context.Context) error {
	var res messages.InitializeResult
	err := c.CallResult(ctx, messages.MethodInitialize, &messages.InitializeParams{
		ProtocolVersion: c.cfg.version,
		Capabilities:    c.cfg.caps,
		ClientInfo:      c.cfg.info,
	}, &res)
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	c.InitializeResult = &res
	c.Notify(messages.MethodInitialized, nil)
	if _, err := c.Call(ctx, messages.MethodPing, nil); err != nil {
		return fmt.Errorf("ping after initialized: %w", err)
	}
	return nil
}

// Handle sets (or, with nil, removes) the scripted answer to server
// requests of method.
func (c *Client) Handle(method string, h RequestHandler) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if h == nil {
		delete(c.handlers, method)
		return
	}
	c.handlers[method] = h
}

// Call sends a request and returns the server's response (a result or an
// error message). The error reports only harness failures: a timeout or a
// closed session.
func (c *Client) Call(ctx context.Context, method string, params any) (*messages.Message, error) {
	id := messages.IntID(c.nextID.Add(1))
	from := c.inbox.len()
	if err := c.SendRequest(id, method, params); err != nil {
		return nil, err
	}
	r, err := c.WaitResponse(ctx, id, from)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	return r.Msg, nil
}

// CallResult makes a call and decodes its result into out (which may be
// nil). A JSON-RPC error comes back as a *messages.Error.
func (c *Client) CallResult(ctx context.Context, method string, params any, out any) error {
	m, err := c.Call(ctx, method, params)
	if err != nil {
		return err
	}
	if m.Error != nil {
		return m.Error
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(m.Result, out); err != nil {
		return fmt.Errorf("%s: decoding the result: %w", method, err)
	}
	return nil
}

// SendRequest sends a request with the given ID without waiting; its
// stream's frames arrive in the transcript with Stream set to id.Raw().
func (c *Client) SendRequest(id messages.ID, method string, params any) error {
	raw, err := messages.Marshal(params)
	if err != nil {
		return err
	}
	if params == nil {
		raw = nil
	}
	c.request(&messages.Message{ID: id, Method: method, Params: raw}, id.Raw())
	return nil
}

// Notify sends a notification.
func (c *Client) Notify(method string, params any) {
	var raw jsontext.Value
	if params != nil {
		raw, _ = messages.Marshal(params)
	}
	c.send(&messages.HandleNotification{Principal: c.cfg.principal, Msg: &messages.Message{Method: method, Params: raw}})
}

// Cancel sends notifications/cancelled for the client request id.
func (c *Client) Cancel(id messages.ID, reason string) {
	c.Notify(messages.MethodCancelled, &messages.CancelledParams{RequestID: id, Reason: reason})
}

// Respond answers the server request id with result.
func (c *Client) Respond(id messages.ID, result any) error {
	raw, err := messages.Marshal(result)
	if err != nil {
		return err
	}
	c.send(&messages.DeliverResponse{Principal: c.cfg.principal, Msg: &messages.Message{ID: id, Result: raw}})
	return nil
}

// RespondError answers the server request id with an error.
func (c *Client) RespondError(id messages.ID, e *messages.Error) {
	c.send(&messages.DeliverResponse{Principal: c.cfg.principal, Msg: &messages.Message{ID: id, Error: e}})
}

// SendRaw decodes data as one client message and sends it the way a
// transport would; a request gets a stream of its own.
func (c *Client) SendRaw(data []byte) error {
	m, derr := messages.Decode(data)
	if derr != nil {
		return derr
	}
	switch m.Kind() {
	case messages.KindRequest:
		c.request(m, m.ID.Raw())
	case messages.KindNotification:
		c.send(&messages.HandleNotification{Principal: c.cfg.principal, Msg: m})
	default:
		c.send(&messages.DeliverResponse{Principal: c.cfg.principal, Msg: m})
	}
	return nil
}

// Received returns everything the session has sent so far, in order.
func (c *Client) Received() []*Received { return c.inbox.snapshot() }

// Notifications returns the notifications of method received so far, in
// order ("" for all).
func (c *Client) Notifications(method string) []*messages.Message {
	var out []*messages.Message
	for _, r := range c.inbox.snapshot() {
		if r.Msg != nil && r.Msg.Kind() == messages.KindNotification && (method == "" || r.Msg.Method == method) {
			out = append(out, r.Msg)
		}
	}
	return out
}

// Wait returns the first message at or after position from that satisfies
// match, waiting up to the client's timeout when ctx has no deadline.
func (c *Client) Wait(ctx context.Context, from int, match func(*Received) bool) (*Received, error) {
	ctx, cancel := c.bound(ctx)
	defer cancel()
	return c.inbox.wait(ctx, from, match)
}

// WaitNotification waits for a notification of method at or after from.
func (c *Client) WaitNotification(ctx context.Context, method string, from int) (*Received, error) {
	return c.Wait(ctx, from, func(r *Received) bool {
		return r.Msg != nil && r.Msg.Kind() == messages.KindNotification && r.Msg.Method == method
	})
}

// WaitResponse waits for the response to client request id.
func (c *Client) WaitResponse(ctx context.Context, id messages.ID, from int) (*Received, error) {
	return c.Wait(ctx, from, func(r *Received) bool {
		if r.Msg == nil {
			return false
		}
		k := r.Msg.Kind()
		return (k == messages.KindResponse || k == messages.KindError) && r.Msg.ID == id
	})
}

// WaitRequest waits for a server request of method at or after from (for
// tests that answer by hand with Respond).
func (c *Client) WaitRequest(ctx context.Context, method string, from int) (*Received, error) {
	return c.Wait(ctx, from, func(r *Received) bool {
		return r.Msg != nil && r.Msg.Kind() == messages.KindRequest && r.Msg.Method == method
	})
}

func (c *Client) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, c.cfg.timeout)
}

// Close ends the session and waits for the client's goroutines to stop. It
// is idempotent.
func (c *Client) Close() {
	c.closeOnce.Do(func() {
		c.send(&messages.CloseSession{Reason: "harness client closed"})
		// The session's end reaches the standalone stream; in a cluster
		// that stream may have been lost with its node, so the wait is
		// bounded.
		select {
		case <-c.ended:
		case <-time.After(c.cfg.timeout):
		}
		c.mu.Lock()
		rt, sid := c.rt, c.sid
		c.mu.Unlock()
		rt.Streams().Unregister(sid)
		c.cancel()
		c.queue.close()
		<-c.pumpDone // no scripted handler starts after this
		c.handling.Wait()
		c.inbox.close()
	})
}

// pump moves frames from the sinks to the inbox and runs scripted handlers
// for server requests.
func (c *Client) pump() {
	defer close(c.pumpDone)
	for {
		frames, ok := c.queue.pop()
		if !ok {
			return
		}
		for _, f := range frames {
			m, derr := messages.Decode(f.data)
			if derr != nil {
				m = nil
			}
			c.inbox.add(&Received{Msg: m, Raw: f.data, Stream: f.stream})
			if m != nil && m.Kind() == messages.KindRequest {
				c.answer(m)
			}
		}
	}
}

// answer runs the scripted handler for a server request, if there is one.
func (c *Client) answer(req *messages.Message) {
	c.mu.Lock()
	h := c.handlers[req.Method]
	c.mu.Unlock()
	if h == nil || c.ctx.Err() != nil {
		return
	}
	c.handling.Add(1)
	go func() {
		defer c.handling.Done()
		res, err := h(c.ctx, req)
		if err != nil {
			var wire *messages.Error
			if !errors.As(err, &wire) {
				wire = messages.Errorf(messages.CodeInternalError, "%v", err)
			}
			c.RespondError(req.ID, wire)
			return
		}
		if err := c.Respond(req.ID, res); err != nil {
			c.RespondError(req.ID, messages.Errorf(messages.CodeInternalError, "encoding the answer: %v", err))
		}
	}()
}
