// Package workpool runs short functions on reused goroutines. Starting a
// goroutine is cheap, but a new one starts with a small stack that a deep
// call (JSON, HTTP, a tool handler) must grow by copying; a pool keeps a
// few warm goroutines so that request handlers and stream writers skip
// both costs. Functions beyond the idle workers get a goroutine of their
// own, so Go never blocks and never queues.
//
//	Go(fn) ──idle worker waiting?──yes──▶ worker runs fn, then waits again (up to MaxIdle wait)
//	          └──no──▶ go worker(fn)
package workpool

import (
	"sync"
	"sync/atomic"
)

// Pool is a set of reusable goroutines. The zero value is not usable; use
// New. Close stops the idle workers; functions still running finish.
type Pool struct {
	work    chan func()
	stop    chan struct{}
	idle    atomic.Int32
	maxIdle int32
	wg      sync.WaitGroup
	closed  atomic.Bool
}

// New returns a pool that keeps at most maxIdle workers waiting for work.
func New(maxIdle int) *Pool {
	if maxIdle < 1 {
		maxIdle = 1
	}
	return &Pool{work: make(chan func()), stop: make(chan struct{}), maxIdle: int32(maxIdle)}
}

// Go runs fn on a waiting worker, or on a new goroutine when none waits.
func (p *Pool) Go(fn func()) {
	select {
	case p.work <- fn:
		return
	default:
	}
	if p.closed.Load() {
		go fn()
		return
	}
	p.wg.Add(1)
	go p.worker(fn)
}

func (p *Pool) worker(fn func()) {
	defer p.wg.Done()
	for {
		fn()
		if p.idle.Add(1) > p.maxIdle {
			p.idle.Add(-1)
			return
		}
		select {
		case fn = <-p.work:
			p.idle.Add(-1)
		case <-p.stop:
			p.idle.Add(-1)
			return
		}
	}
}

// Close stops the idle workers and waits for the busy ones to finish their
// function. Go still works afterwards, on plain goroutines.
func (p *Pool) Close() {
	if p.closed.Swap(true) {
		return
	}
	close(p.stop)
	p.wg.Wait()
}
