package transport

import (
	"os"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// watchdog notices when the active runner has served one request for
// stallAfter (a handler that sleeps, computes or waits in a way that
// cannot suspend its task) and hands the loop to another runner.
//
// It is a periodic timerfd (every watchEvery), read by a goroutine of its
// own through Go's network poller, and it runs only while the loop is
// busy: the first request after a tick that found the loop idle starts it
// (begin), and a tick that finds the loop idle stops it. Each tick wakes a
// thread, which on a virtual machine costs tens of microseconds; so does
// each change of a timer's deadline (the hardware timer is reprogrammed).
// A watchdog whose deadline followed every request (stallAfter after it
// began) cost an elicitation round trip 5–10 % of its CPU, whether on a
// Go timer or a timerfd; ticking costs a tenth of that, and a stalled
// request is noticed within stallAfter + watchEvery.
type watchdog struct {
	p    *poller
	fd   int
	f    *os.File    // fd, for reading through Go's poller
	on   atomic.Bool // the timer ticks
	ran  bool        // start was called
	done chan struct{}
}

// watchEvery is how often the watchdog looks while the loop is busy.
const watchEvery = 10 * time.Millisecond

func newWatchdog(p *poller) (*watchdog, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	return &watchdog{p: p, fd: fd, f: os.NewFile(uintptr(fd), "loop-watchdog"), done: make(chan struct{})}, nil
}

// wake starts the ticks, unless they run: a request has begun (after the
// runner's seq changed, see tick).
func (w *watchdog) wake() {
	if !w.on.Load() && w.on.CompareAndSwap(false, true) {
		w.set(watchEvery)
	}
}

// set has the timer tick every d; 0 stops it.
func (w *watchdog) set(d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	spec := unix.ItimerSpec{Interval: ts, Value: ts}
	_ = unix.TimerfdSettime(w.fd, 0, &spec, nil)
}

// start runs the watchdog until stop.
func (w *watchdog) start() {
	w.ran = true
	go w.run()
}

// run waits for ticks until stop closes the timer.
func (w *watchdog) run() {
	defer close(w.done)
	var b [8]byte
	for {
		if _, err := w.f.Read(b[:]); err != nil {
			return // closed
		}
		w.tick()
	}
}

// tick hands the loop over if the active runner's request has run for
// stallAfter, and stops the ticks if the runner serves no request.
func (w *watchdog) tick() {
	r := w.p.active.Load()
	if r == nil {
		return
	}
	seq := r.seq.Load()
	if seq%2 == 1 {
		if time.Duration(nanotime()-r.since.Load()) >= stallAfter {
			if t := r.cur.Load(); t != nil {
				t.held.Store(true) // see learnAfter
			}
			w.p.handoff(r)
		}
		return
	}
	w.on.Store(false)
	w.set(0)
	// A request that began before on was cleared did not start the
	// ticks: they go on.
	if (r.seq.Load() != seq || w.p.active.Load() != r) && w.on.CompareAndSwap(false, true) {
		w.set(watchEvery)
	}
}

// stop ends run, and closes the timer.
func (w *watchdog) stop() {
	_ = w.f.Close()
	if w.ran {
		<-w.done
	}
}
