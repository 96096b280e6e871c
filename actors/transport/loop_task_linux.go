package transport

import (
	"iter"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/petermattis/goid"
)

// task is a coroutine (iter.Pull) in which the loop serves a connection's
// requests. A runner drives it: the task runs on the runner's thread until
// its requests are served, or until a handler waits for its client
// (messages.Suspender, for dispatcher calls). A waiting handler suspends
// the task instead of blocking: the runner goes straight on with the loop,
// and the runner that reads the client's answer resumes the task on its
// own thread. Neither step wakes a goroutine through Go's scheduler, so
// neither wakes a thread: a round trip to the client costs the loop two
// coroutine switches.
//
// Only the task's own goroutine can suspend it; a handler's other
// goroutines wait as usual (Suspend returns false for them).
type task struct {
	p       *poller
	next    func() (suspended, ok bool)
	stop    func()
	yield   func(suspended bool) bool
	gid     int64     // the coroutine's goroutine
	c       *pollConn // what it serves, while it does
	state   atomic.Int32
	held    atomic.Bool // the watchdog took the loop from its driver
	stalled atomic.Bool // ... and held it learnAfter or more (noteHold)
	since   int64       // when its driver last ran it on (nanotime)
}

// learnAfter is how long a task must have held its runner, the loop
// taken from it, for its handler to be reported as one that stalls
// (staller): shorter holds are as likely the thread's being descheduled.
var learnAfter atomic.Int64 // a time.Duration; a variable for tests

func init() { learnAfter.Store(int64(10 * time.Millisecond)) }

// takeStall reports whether the task held its driver's thread too long
// since it was last asked (staller). The task's own goroutine asks.
func (t *task) takeStall() bool {
	t.noteHold()
	return t.stalled.Load() && t.stalled.Swap(false)
}

// noteHold marks the task as stalled if the loop was taken from its
// driver and it has held the driver's thread for learnAfter or more.
func (t *task) noteHold() {
	if t.held.Load() && nanotime()-t.since >= learnAfter.Load() && t.held.Swap(false) {
		t.stalled.Store(true)
	}
}

// A task's states. Resume moves running to woken, suspending to
// wokenEarly and parked to ready (queuing it for a runner); the driver
// moves suspending to parked once the task has given its thread back.
const (
	taskRunning    int32 = iota
	taskWoken            // resumed while running: the next Suspend returns at once
	taskSuspending       // switching back to its driver
	taskWokenEarly       // resumed while switching back: the driver takes it on at once
	taskParked           // suspended; Resume queues it
	taskReady            // queued for a runner
)

func (p *poller) newTask() *task {
	t := &task{p: p}
	t.next, t.stop = iter.Pull(func(yield func(bool) bool) {
		t.yield, t.gid = yield, goid.Get()
		for {
			c := t.c
			t.c = nil
			p.serve(c, t)
			if !yield(false) {
				return
			}
		}
	})
	return t
}

// Suspend implements messages.Suspender.
func (t *task) Suspend() bool {
	if goid.Get() != t.gid {
		return false
	}
	if !t.state.CompareAndSwap(taskRunning, taskSuspending) {
		t.state.Store(taskRunning) // woken already
		return true
	}
	t.yield(true)
	return true
}

// Resume implements messages.Suspender.
func (t *task) Resume() {
	for {
		switch s := t.state.Load(); s {
		case taskRunning:
			if t.state.CompareAndSwap(s, taskWoken) {
				return
			}
		case taskSuspending:
			if t.state.CompareAndSwap(s, taskWokenEarly) {
				return
			}
		case taskParked:
			if t.state.CompareAndSwap(s, taskReady) {
				t.p.ready(t)
				return
			}
		default: // woken or queued already
			return
		}
	}
}

// drive runs t on the calling goroutine (r, the runner, or nil) until it
// is done serving or suspended.
func (r *runner) drive(t *task) {
	for {
		t.state.Store(taskRunning)
		t.since = nanotime()
		r.begin(t)
		suspended, ok := t.next()
		r.end()
		t.noteHold()
		t.held.Store(false)
		switch {
		case !ok:
			return
		case !suspended:
			t.p.putTask(t)
			return
		case t.state.CompareAndSwap(taskSuspending, taskParked):
			t.p.tasks.suspended.Add(1)
			return
		}
		// Resumed while it switched back: on at once.
	}
}

// serveTask serves c in a task.
func (r *runner) serveTask(c *pollConn) {
	t := r.p.tasks.get()
	if t == nil {
		t = r.p.newTask()
	}
	t.c = c
	r.drive(t)
}

// taskSet holds a poller's idle tasks, and the resumed ones waiting for
// the active runner.
type taskSet struct {
	idle idlePool[*task]

	mu     sync.Mutex
	queue  []*task
	closed bool
	queued atomic.Int32 // len(queue), read without the lock

	suspended atomic.Int64 // how often a task gave its thread back to wait
}

// get returns an idle task, or nil.
func (s *taskSet) get() *task {
	t, _ := s.idle.get()
	return t
}

// putTask keeps t for the next connection to serve, unless there are
// enough or the poller has stopped.
func (p *poller) putTask(t *task) {
	if !p.tasks.idle.put(t) {
		t.stop()
	}
}

// trimTasks ends the idle tasks the sweep interval did not need
// (idlePool).
func (p *poller) trimTasks() {
	for _, t := range p.tasks.idle.trim() {
		t.stop()
	}
}

// ready queues a resumed task for the active runner, and wakes it if it
// waits for events. Once the poller has stopped, the task runs on a
// goroutine of its own.
func (p *poller) ready(t *task) {
	s := &p.tasks
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		go (*runner)(nil).drive(t)
		return
	}
	s.queue = append(s.queue, t)
	s.queued.Store(int32(len(s.queue)))
	s.mu.Unlock()
	if p.sleeping.CompareAndSwap(true, false) {
		one := [8]byte{1}
		_, _ = syscall.Write(p.resumeFD, one[:])
	}
}

// runReady drives the tasks resumed since it last looked.
func (r *runner) runReady() {
	s := &r.p.tasks
	for s.queued.Load() > 0 {
		s.mu.Lock()
		q := s.queue
		s.queue = r.taken[:0]
		s.queued.Store(0)
		s.mu.Unlock()
		for i, t := range q {
			q[i] = nil
			r.drive(t)
		}
		r.taken = q[:0]
	}
}

// closeTasks ends the idle tasks; tasks resumed from now on run on
// goroutines of their own.
func (p *poller) closeTasks() {
	s := &p.tasks
	s.mu.Lock()
	s.closed = true
	queue := s.queue
	s.queue = nil
	s.queued.Store(0)
	s.mu.Unlock()
	for _, t := range queue {
		go (*runner)(nil).drive(t)
	}
	for _, t := range s.idle.close() {
		t.stop()
	}
}
