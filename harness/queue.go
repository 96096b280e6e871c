package harness

import "sync"

// frameQueue is an unbounded FIFO between sinks (called on session actors)
// and the client's pump goroutine.
type frameQueue struct {
	mu     sync.Mutex
	items  []frameIn
	wake   chan struct{}
	closed bool
}

func newFrameQueue() *frameQueue { return &frameQueue{wake: make(chan struct{}, 1)} }

func (q *frameQueue) push(f frameIn) {
	q.mu.Lock()
	if !q.closed {
		q.items = append(q.items, f)
	}
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *frameQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// pop returns the queued frames, waiting for some; ok is false once the
// queue is closed and empty.
func (q *frameQueue) pop() (items []frameIn, ok bool) {
	for {
		q.mu.Lock()
		items, closed := q.items, q.closed
		q.items = nil
		q.mu.Unlock()
		if len(items) > 0 {
			return items, true
		}
		if closed {
			return nil, false
		}
		<-q.wake
	}
}
