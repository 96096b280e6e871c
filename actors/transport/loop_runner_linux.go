package transport

import (
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// stallAfter is how long a request may keep the runner before another
// goroutine takes over waiting for input (see poller); the watchdog
// looks every watchEvery.
const stallAfter = time.Millisecond

// runner is one goroutine that waits on the poller while it is the active
// one.
type runner struct {
	p      *poller
	seq    atomic.Uint64        // odd while a request is served inline
	since  atomic.Int64         // when the request being served began (nanotime)
	cur    atomic.Pointer[task] // the task it drives, if any
	passed int64                // when it last passed through the scheduler (nanotime)
	own    *batch               // what its epoll_wait returns, while it is active
	wake   chan struct{}        // makes a spare active again (or ends it: quit)
	quit   bool                 // set by trimSpares before it wakes a spare to end it
	taken  []*task              // runReady's: the resumed tasks it drives

	mu    sync.Mutex
	queue []*batch // the batches it serves events of: inherited ones, then its own
}

// batch is the events one epoll_wait returned. Its events are claimed one
// at a time, so that a runner that took over serves those its predecessor
// had not come to, while the predecessor finishes the one it holds.
type batch struct {
	events []syscall.EpollEvent
	n      int32
	next   atomic.Int32
	refs   atomic.Int32 // runners' queues holding it: its owner reuses it only at 0
}

func newBatch() *batch { return &batch{events: make([]syscall.EpollEvent, 128)} }

func (b *batch) claim() (fd int32, ok bool) {
	i := b.next.Add(1) - 1
	if i >= b.n {
		return 0, false
	}
	return b.events[i].Fd, true
}

func (p *poller) newRunner() *runner {
	return &runner{p: p, own: newBatch(), wake: make(chan struct{}, 1)}
}

// start makes a first runner active; it runs until stop.
func (p *poller) start() {
	r := p.newRunner()
	p.active.Store(r)
	p.watch.start()
	go r.loop()
}

// handoff makes a new runner active in r's place, if r still is; the new
// one inherits the events r has yet to serve. Only the watchdog hands the
// loop over, one tick at a time, so the active runner changes nowhere
// else meanwhile; it is a spare if one waits (a runner whose request had
// stalled, waiting with its grown stack: idlePool).
func (p *poller) handoff(r *runner) {
	if p.stopping.Load() || p.active.Load() != r {
		return
	}
	next, spare := p.spares.get()
	if !spare {
		next = p.newRunner()
	}
	r.mu.Lock()
	next.mu.Lock()
	next.queue = append(next.queue[:0], r.queue...)
	for _, b := range r.queue {
		b.refs.Add(1)
	}
	next.mu.Unlock()
	p.active.Store(next)
	r.mu.Unlock()
	p.handoffs.Add(1)
	if spare {
		next.wake <- struct{}{}
	} else {
		go next.loop()
	}
}

// loop runs r whenever it is made active; between times it waits as a
// spare, keeping its grown stack for the next handoff.
func (r *runner) loop() {
	for {
		r.run()
		if r.p.stopping.Load() {
			return
		}
		if r.own.refs.Load() != 0 { // a successor still serves r's last events
			r.own = newBatch()
		}
		if !r.p.spares.put(r) || !r.waitAsSpare() {
			return
		}
	}
}

// waitAsSpare waits until r is made active again (true) or let go.
func (r *runner) waitAsSpare() bool {
	select {
	case <-r.wake:
		return !r.quit
	case <-r.p.done:
		return false
	}
}

// trimSpares ends the spares the sweep interval did not need (idlePool).
func (p *poller) trimSpares() {
	for _, r := range p.spares.trim() {
		r.quit = true
		r.wake <- struct{}{}
	}
}

// begin and end bracket the runner's driving t, for the watchdog.
func (r *runner) begin(t *task) {
	if r != nil {
		r.since.Store(nanotime())
		r.seq.Add(1)
		r.cur.Store(t)
		r.p.watch.wake()
	}
}

func (r *runner) end() {
	if r != nil {
		r.cur.Store(nil)
		r.seq.Add(1)
	}
}

func (r *runner) run() {
	p := r.p
	ms := int(p.tick / time.Millisecond)
	for {
		r.serveQueue()
		if p.active.Load() != r || p.stopping.Load() {
			break
		}
		p.sleeping.Store(true)
		if p.tasks.queued.Load() > 0 {
			p.sleeping.Store(false)
			r.runReady()
			continue
		}
		n, err := p.wait(r.own.events, ms)
		p.sleeping.Store(false)
		if err != nil {
			break // the epoll set is gone: the server stopped
		}
		r.own.n = int32(max(n, 0))
		r.own.next.Store(0)
		r.own.refs.Store(1)
		r.mu.Lock()
		r.queue = append(r.queue[:0], r.own)
		r.mu.Unlock()
		if p.active.Load() == r {
			r.passScheduler(p.sweepIfDue())
		}
	}
}

// serveQueue serves the events of the runner's batches.
func (r *runner) serveQueue() {
	for {
		r.mu.Lock()
		if len(r.queue) == 0 {
			r.mu.Unlock()
			return
		}
		b := r.queue[0]
		r.mu.Unlock()
		for fd, ok := b.claim(); ok; fd, ok = b.claim() {
			r.p.event(fd, r)
			r.runReady()
		}
		r.mu.Lock()
		if len(r.queue) > 0 && r.queue[0] == b {
			// Shifted rather than resliced, so that the queue keeps its
			// capacity and run and handoff fill it without allocating.
			r.queue = r.queue[:copy(r.queue, r.queue[1:])]
			b.refs.Add(-1)
		}
		r.mu.Unlock()
	}
}

// passEvery is how often a runner that serves on and on passes through
// Go's scheduler (see passScheduler): half the 10 ms after which the
// runtime's monitor steps in. Each pass may wake an idle thread (Gosched
// offers the goroutine to any), so not more often than that.
const passEvery = 5 * time.Millisecond

// passScheduler has the runner yield its thread to Go's scheduler every
// passEvery. A goroutine that never does (it only blocks in system calls)
// looks to the runtime's monitor like one that has run for 10 ms: the
// monitor then takes its processor away during its next epoll_wait and
// goes back to waking every 20 µs, thousands of wake-ups a second on a
// busy loop. Yielding is all it takes to show the loop is not stuck;
// with nothing else to run it costs a few hundred nanoseconds.
func (r *runner) passScheduler(now int64) {
	if now-r.passed >= int64(passEvery) {
		r.passed = now
		runtime.Gosched()
	}
}
