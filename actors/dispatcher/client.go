package dispatcher

import (
	"context"
	"encoding/json/jsontext"
	"fmt"
)

// Client is the caller's side of a table: it runs on the caller's goroutine
// and reaches the table only by posting messages to the owning actor.
type Client struct {
	post    func(Message)
	gone    context.Context
	doneErr error
}

// NewClient returns a Client that posts to the actor with post, which must
// not block (an actor send). gone, once cancelled, means the actor is gone:
// waiting calls then fail with doneErr (ErrClosed when nil). gone may be
// nil.
func NewClient(post func(Message), gone context.Context, doneErr error) *Client {
	if doneErr == nil {
		doneErr = ErrClosed
	}
	if gone == nil {
		gone = context.Background()
	}
	return &Client{post: post, gone: gone, doneErr: doneErr}
}

// Call sends method to the client and waits for the answer. It returns the
// raw result; a JSON-RPC error from the client as a *messages.Error (wrapped
// with the method name); ErrRemoteCancelled when the client cancelled it; the
// table's close reason when the session ends; and ctx.Err(), unwrapped, when
// ctx ends first, in which case the client is sent notifications/cancelled.
func (cl *Client) Call(ctx context.Context, method string, params any, opts ...CallOption) (jsontext.Value, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c, err := NewCall(method, params, opts...)
	if err != nil {
		return nil, fmt.Errorf("calling %q: encoding params: %w", method, err)
	}
	return cl.Run(ctx, c)
}

// Run posts a prepared call and waits as Call does.
func (cl *Client) Run(ctx context.Context, c *Call) (jsontext.Value, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cl.post(&Begin{Call: c})
	for {
		select {
		case r := <-c.done:
			return c.outcome(r)
		case p := <-c.progress: // nil channel without WithProgress
			c.onProgress(p)
		case <-ctx.Done():
			return cl.cancel(ctx, c)
		case <-cl.gone.Done():
			return cl.lost(c)
		}
	}
}

// cancel ends a call whose caller's context ended, unless the table
// finished it first.
func (cl *Client) cancel(ctx context.Context, c *Call) (jsontext.Value, error) {
	select {
	case r := <-c.done:
		return c.outcome(r)
	default:
	}
	cl.post(&Cancel{Call: c, Reason: ctx.Err().Error()})
	return nil, ctx.Err()
}

// lost ends a call whose actor is gone, unless the table finished it
// first.
func (cl *Client) lost(c *Call) (jsontext.Value, error) {
	select {
	case r := <-c.done:
		return c.outcome(r)
	default:
	}
	return nil, fmt.Errorf("calling %q: %w", c.Method, cl.doneErr)
}

// outcome returns what the table finished c with. The table queues every
// progress update before it finishes the call, but select may pick done
// while updates still wait, so they go to the callback first. The caller is
// the only receiver and the table sends no more, so the loop cannot block.
func (c *Call) outcome(r result) (jsontext.Value, error) {
	for len(c.progress) > 0 { // nil channel without WithProgress
		c.onProgress(<-c.progress)
	}
	if r.err != nil {
		return nil, fmt.Errorf("calling %q: %w", c.Method, r.err)
	}
	return r.raw, nil
}
