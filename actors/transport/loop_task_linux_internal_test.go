package transport

import (
	"net"
	"regexp"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/petermattis/goid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newTestPoller returns a poller on a fresh listener whose tasks run
// serve instead of serving HTTP.
func newTestPoller(t *testing.T, serve func(c *pollConn, tk *task)) *poller {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	raw, err := ln.(*net.TCPListener).SyscallConn()
	require.NoError(t, err)
	var lfd int
	require.NoError(t, raw.Control(func(fd uintptr) { lfd = int(fd) }))
	p, err := newPoller(lfd, ln.Addr(), time.Second, 1<<16)
	require.NoError(t, err)
	p.serve = serve
	t.Cleanup(func() {
		p.closeTasks()
		p.watch.stop()
		p.closeFDs()
	})
	return p
}

// TestGoidIsTheRuntimes checks the goroutine IDs Suspend tells its task's
// goroutine by against the runtime's own (from a stack trace), here and
// on another goroutine: goid reads them from the runtime's goroutine
// record, whose layout a Go release may change.
func TestGoidIsTheRuntimes(t *testing.T) {
	fromStack := func() int64 {
		buf := make([]byte, 64)
		buf = buf[:runtime.Stack(buf, false)]
		m := regexp.MustCompile(`^goroutine (\d+) `).FindSubmatch(buf)
		require.NotNil(t, m, "stack trace %q", buf)
		id, err := strconv.ParseInt(string(m[1]), 10, 64)
		require.NoError(t, err)
		return id
	}
	assert.Equal(t, fromStack(), goid.Get())
	other := make(chan [2]int64)
	go func() { other <- [2]int64{fromStack(), goid.Get()} }()
	ids := <-other
	assert.Equal(t, ids[0], ids[1])
	assert.NotEqual(t, goid.Get(), ids[1])
}

// TestTaskSuspendAndResume walks a task through its states: a Suspend
// gives the driver its thread back, Resume queues the task for the
// runner, which runs it on; a Resume before the Suspend makes it return at
// once; a Resume while the task switches back has its driver take it on
// at once; Suspend refuses every goroutine but the task's own.
func TestTaskSuspendAndResume(t *testing.T) {
	steps := make(chan string, 16)
	var script func(tk *task)
	p := newTestPoller(t, func(_ *pollConn, tk *task) { script(tk) })
	r := p.newRunner()

	t.Run("suspended, then resumed by the runner", func(t *testing.T) {
		script = func(tk *task) {
			steps <- "start"
			assert.True(t, tk.Suspend())
			steps <- "resumed"
		}
		tk := p.newTask()
		r.drive(tk)
		assert.Equal(t, "start", <-steps)
		assert.Equal(t, taskParked, tk.state.Load(), "the driver has its thread back")
		assert.Empty(t, steps)

		tk.Resume()
		assert.Equal(t, taskReady, tk.state.Load())
		assert.EqualValues(t, 1, p.tasks.queued.Load())
		tk.Resume() // once queued, more Resumes change nothing
		assert.EqualValues(t, 1, p.tasks.queued.Load())

		r.runReady()
		assert.Equal(t, "resumed", <-steps)
		assert.Zero(t, p.tasks.queued.Load())
		assert.Same(t, tk, p.tasks.get(), "done, the task waits for the next connection")
		p.putTask(tk)
	})

	t.Run("a Resume before the Suspend", func(t *testing.T) {
		script = func(tk *task) {
			tk.Resume()
			assert.Equal(t, taskWoken, tk.state.Load())
			assert.True(t, tk.Suspend(), "returns at once")
			assert.Equal(t, taskRunning, tk.state.Load())
			steps <- "on"
		}
		before := p.tasks.suspended.Load()
		r.serveTask(nil)
		assert.Equal(t, "on", <-steps)
		assert.Equal(t, before, p.tasks.suspended.Load(), "never suspended")
	})

	t.Run("a Resume while it switches back", func(t *testing.T) {
		script = func(tk *task) {
			// What Suspend does, with a Resume between its two steps.
			require.True(t, tk.state.CompareAndSwap(taskRunning, taskSuspending))
			tk.Resume()
			assert.Equal(t, taskWokenEarly, tk.state.Load())
			tk.yield(true)
			steps <- "on"
		}
		r.serveTask(nil)
		assert.Equal(t, "on", <-steps, "the driver ran it on before returning")
		assert.Zero(t, p.tasks.queued.Load())
	})

	t.Run("another goroutine cannot suspend it", func(t *testing.T) {
		script = func(tk *task) {
			other := make(chan bool)
			go func() { other <- tk.Suspend() }()
			assert.False(t, <-other)
			assert.Equal(t, taskRunning, tk.state.Load())
			steps <- "on"
		}
		r.serveTask(nil)
		assert.Equal(t, "on", <-steps)
	})
}

// TestTaskResumedAfterStop checks that a task resumed once its poller has
// stopped runs on a goroutine of its own, and ends with its job.
func TestTaskResumedAfterStop(t *testing.T) {
	steps := make(chan string, 4)
	p := newTestPoller(t, func(_ *pollConn, tk *task) {
		tk.Suspend()
		steps <- "resumed"
	})
	tk := p.newTask()
	p.newRunner().drive(tk)
	require.Equal(t, taskParked, tk.state.Load())

	p.closeTasks()
	tk.Resume()
	assert.Equal(t, "resumed", recv(t, steps, "the task to run on"))
	assert.Nil(t, p.tasks.get(), "a stopped poller keeps no task")
}

// TestPollerTrimsIdleTasks checks that idle tasks no connection needed
// are let go a quarter at a time, down to keepIdle.
func TestPollerTrimsIdleTasks(t *testing.T) {
	p := newTestPoller(t, func(*pollConn, *task) {})
	const n = 40
	for range n {
		p.putTask(p.newTask())
	}
	p.trimTasks() // no count yet: none go
	assert.Equal(t, n, p.tasks.idle.len())
	p.trimTasks() // all sat unused: a quarter of the 32 above 8
	assert.Equal(t, n-8, p.tasks.idle.len())
	for range 30 {
		p.trimTasks()
	}
	assert.Equal(t, keepIdle, p.tasks.idle.len())
}

// TestWatchdogTicksWhileBusy checks that a request starts the watchdog's
// ticks, that a tick finding the active runner serving one request for
// stallAfter hands the loop over, that one finding a shorter request
// leaves it be, and that one finding the runner idle stops the ticks.
func TestWatchdogTicksWhileBusy(t *testing.T) {
	p := newTestPoller(t, nil)
	r := p.newRunner()
	p.active.Store(r)
	t.Cleanup(func() { // the runner the handoff starts leaves
		p.stop()
		for p.waiting.Load() > 0 {
			<-p.left
		}
	})

	r.begin(nil)
	assert.True(t, p.watch.on.Load(), "a request starts the ticks")
	p.watch.tick()
	assert.Same(t, r, p.active.Load(), "a request younger than stallAfter is left be")

	r.since.Store(nanotime() - int64(stallAfter))
	p.watch.tick()
	assert.NotSame(t, r, p.active.Load(), "a request that ran for stallAfter has the loop handed over")
	r.end()

	next := p.active.Load()
	p.watch.tick()
	assert.False(t, p.watch.on.Load(), "an idle runner stops the ticks")
	next.begin(nil)
	assert.True(t, p.watch.on.Load())
	next.end()
}

// TestTaskHoldLearnt checks that a task the watchdog took the loop from is
// reported as stalling only when its driver got its thread back
// learnAfter later or more, and once.
func TestTaskHoldLearnt(t *testing.T) {
	p := newTestPoller(t, func(_ *pollConn, tk *task) { tk.held.Store(true) }) // as the watchdog does
	r := p.newRunner()

	t.Cleanup(SetLearnAfter(time.Hour))
	r.serveTask(nil)
	tk := p.tasks.get()
	require.NotNil(t, tk)
	assert.False(t, tk.takeStall(), "held for less than learnAfter")
	p.putTask(tk)

	learnAfter.Store(0)
	r.serveTask(nil)
	tk = p.tasks.get()
	assert.True(t, tk.takeStall())
	assert.False(t, tk.takeStall(), "reported once")
	p.putTask(tk)
}
