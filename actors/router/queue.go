package router

import (
	"context"
	"sync"

	"github.com/mcp-actors/mcp-actors/messages"
)

// Queue is a Receiver that holds a stream's events for one goroutine to
// take in batches (an HTTP handler writing a response). It holds at most
// max frames: past that the client is not keeping up, and the queue
// refuses the frame and ends (the session keeps what it sent in its event
// log, for the client to resume). An event that ends the stream is always
// taken.
type Queue struct {
	max  int
	wake chan struct{} // capacity 1: "there is something to look at"
	ctx  context.Context

	mu     sync.Mutex
	queue  []messages.StreamEvent
	spare  []messages.StreamEvent // the previous batch's slice, reused
	frames int
	ended  bool // an ending signal was queued, or a frame was refused
}

// NewQueue returns a queue of at most max frames for a stream whose client
// is there until ctx ends (Gone). wake, when not nil, is signalled instead
// of a channel of the queue's own, so that one goroutine can wait on many
// queues.
func NewQueue(ctx context.Context, max int, wake chan struct{}) *Queue {
	if wake == nil {
		wake = make(chan struct{}, 1)
	}
	return &Queue{max: max, wake: wake, ctx: ctx}
}

// Receive implements Receiver.
func (q *Queue) Receive(ev messages.StreamEvent) bool {
	q.mu.Lock()
	if q.ended {
		q.mu.Unlock()
		return false
	}
	ok := true
	switch {
	case ev.Signal.Ends():
		q.ended = true
	case ev.Signal == messages.SignalFrame && q.frames >= q.max:
		q.ended, ok = true, false
		ev = messages.StreamEvent{Stream: ev.Stream, Session: ev.Session, Signal: messages.SignalClosed}
	case ev.Signal == messages.SignalFrame:
		q.frames++
	}
	q.queue = append(q.queue, ev)
	q.mu.Unlock()
	q.signal()
	return ok
}

// Gone implements Receiver: the client has gone once ctx has ended.
func (q *Queue) Gone() bool { return q.ctx.Err() != nil }

// Wake is signalled whenever events arrive.
func (q *Queue) Wake() <-chan struct{} { return q.wake }

func (q *Queue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// Take returns the events queued so far. The slice is valid until the next
// Take.
func (q *Queue) Take() []messages.StreamEvent {
	q.mu.Lock()
	defer q.mu.Unlock()
	batch := q.queue
	q.queue = q.spare[:0]
	clear(batch[len(batch):cap(batch)])
	q.spare = batch
	q.frames = 0
	return batch
}

// Wait returns the next batch, waiting until there is one or ctx ends
// (then ok is false).
func (q *Queue) Wait(ctx context.Context) (batch []messages.StreamEvent, ok bool) {
	for {
		if batch = q.Take(); len(batch) > 0 {
			return batch, true
		}
		select {
		case <-q.wake:
		case <-ctx.Done():
			return nil, false
		}
	}
}
