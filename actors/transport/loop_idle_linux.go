package transport

import "sync"

// Idle goroutines the loop keeps for reuse (spare runners, tasks), with
// the stacks they grew (a new goroutine starts on 2 KiB and grows its
// stack four times on the way to a handler): up to maxIdle of each; those
// a whole sweep interval did not need are let go, a quarter at a time,
// down to keepIdle.
const (
	maxIdle  = 1024
	keepIdle = 8
)

// idlePool holds idle goroutines of one kind. It only keeps them: ending
// one it gives back (put refused, trim, close) is the caller's.
type idlePool[T any] struct {
	mu     sync.Mutex
	idle   []T
	low    int // the fewest idle since the last trim
	closed bool
}

// get takes the one that went idle last (its stack is the warmest).
func (p *idlePool[T]) get() (v T, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.idle)
	if n == 0 {
		return v, false
	}
	v = p.idle[n-1]
	var zero T
	p.idle[n-1] = zero
	p.idle = p.idle[:n-1]
	p.low = min(p.low, n-1)
	return v, true
}

// put keeps v, unless the pool is full or closed (false).
func (p *idlePool[T]) put(v T) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || len(p.idle) >= maxIdle {
		return false
	}
	p.idle = append(p.idle, v)
	return true
}

// trim gives back a quarter of those no get needed since the last trim,
// the longest idle first, keeping keepIdle.
func (p *idlePool[T]) trim() []T {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := min(max(0, (p.low-keepIdle+3)/4), len(p.idle))
	gone := append([]T(nil), p.idle[:n]...)
	p.idle = append(p.idle[:0], p.idle[n:]...)
	clear(p.idle[len(p.idle) : len(p.idle)+n])
	p.low = len(p.idle)
	return gone
}

// close gives back every idle one, and refuses those put from now on.
func (p *idlePool[T]) close() []T {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	all := p.idle
	p.idle = nil
	return all
}

// len is how many are idle.
func (p *idlePool[T]) len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.idle)
}
