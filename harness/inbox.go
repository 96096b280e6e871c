package harness

import (
	"context"
	"sync"

	"github.com/mcp-actors/mcp-actors/messages"
)

// Received is one message the server sent to a harness client.
type Received struct {
	// Msg is the decoded message; Raw its exact bytes.
	Msg *messages.Message
	Raw []byte
	// Stream names the stream it came on: the raw ID of the client request
	// whose stream carried it, or "" for the standalone stream.
	Stream string
	// Seq is its position among everything the client received, from 0.
	Seq int
}

// inbox is the ordered log of what a client received, with waiting.
type inbox struct {
	mu     sync.Mutex
	msgs   []*Received
	wake   chan struct{} // closed and replaced on every append
	closed bool
}

func newInbox() *inbox { return &inbox{wake: make(chan struct{})} }

func (ib *inbox) add(r *Received) {
	ib.mu.Lock()
	r.Seq = len(ib.msgs)
	ib.msgs = append(ib.msgs, r)
	close(ib.wake)
	ib.wake = make(chan struct{})
	ib.mu.Unlock()
}

func (ib *inbox) close() {
	ib.mu.Lock()
	if !ib.closed {
		ib.closed = true
		close(ib.wake)
		ib.wake = make(chan struct{})
	}
	ib.mu.Unlock()
}

// len returns the number of messages so far.
func (ib *inbox) len() int {
	ib.mu.Lock()
	defer ib.mu.Unlock()
	return len(ib.msgs)
}

// snapshot returns the messages so far.
func (ib *inbox) snapshot() []*Received {
	ib.mu.Lock()
	defer ib.mu.Unlock()
	return append([]*Received(nil), ib.msgs...)
}

// wait returns the first message at or after position from that satisfies
// match, waiting for it until ctx ends or the inbox closes.
func (ib *inbox) wait(ctx context.Context, from int, match func(*Received) bool) (*Received, error) {
	for {
		ib.mu.Lock()
		for i := from; i < len(ib.msgs); i++ {
			if match(ib.msgs[i]) {
				r := ib.msgs[i]
				ib.mu.Unlock()
				return r, nil
			}
		}
		from = max(from, len(ib.msgs)) // from may be ahead of what arrived
		wake, closed := ib.wake, ib.closed
		ib.mu.Unlock()
		if closed {
			return nil, ErrClosed
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
