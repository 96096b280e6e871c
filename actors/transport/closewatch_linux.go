//go:build linux

package transport

import (
	"net"
	"sync"
	"syscall"
)

// closeWatcher tells streams at once when their client closes the
// connection, with one goroutine for all of them: the connections'
// descriptors sit in an epoll set of its own (beside the Go runtime's),
// watched for hang-ups only; nothing is ever read from them. The goroutine
// starts with the first watch and stops once nothing has been watched for
// a second (so that sessions opened and closed one after another do not
// start one each), or at close.
type closeWatcher struct {
	mu   sync.Mutex
	byFD map[int32]*watch
	run  *watchLoop // nil when no loop runs
}

// watch is one watched connection; gone runs (once, on the watcher's
// goroutine) when its client hangs up.
type watch struct {
	fd   int32
	gone func()
}

// watchLoop is one run of the watching goroutine: its epoll set and the
// pipe that wakes it to stop.
type watchLoop struct {
	epfd   int
	wakeR  int
	wakeW  int
	closed bool
}

func newCloseWatcher() *closeWatcher { return &closeWatcher{byFD: map[int32]*watch{}} }

// add watches conn and calls gone when its client hangs up. It returns nil
// when it cannot watch (then a dead client is noticed at the next write).
// Remove the watch before closing or reusing the connection.
func (w *closeWatcher) add(conn net.Conn, gone func()) *watch {
	fd, ok := connFD(conn)
	if !ok {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.run == nil {
		run, err := startWatchLoop()
		if err != nil {
			return nil
		}
		w.run = run
		go w.loop(run)
	}
	ev := syscall.EpollEvent{Events: syscall.EPOLLRDHUP | syscall.EPOLLHUP | syscall.EPOLLERR, Fd: fd}
	if err := syscall.EpollCtl(w.run.epfd, syscall.EPOLL_CTL_ADD, int(fd), &ev); err != nil {
		return nil
	}
	wt := &watch{fd: fd, gone: gone}
	w.byFD[fd] = wt
	return wt
}

func startWatchLoop() (*watchLoop, error) {
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC|syscall.O_NONBLOCK); err != nil {
		_ = syscall.Close(epfd)
		return nil, err
	}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(p[0])}
	if err := syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, p[0], &ev); err != nil {
		_ = syscall.Close(epfd)
		_ = syscall.Close(p[0])
		_ = syscall.Close(p[1])
		return nil, err
	}
	return &watchLoop{epfd: epfd, wakeR: p[0], wakeW: p[1]}, nil
}

// remove stops watching (nil is fine). Call it before closing the
// connection, so that a descriptor number reused later is not mistaken for
// it. The goroutine stops when nothing is left to watch.
func (w *closeWatcher) remove(wt *watch) {
	if wt == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.byFD[wt.fd] != wt {
		return // fired already
	}
	w.drop(wt)
}

// drop forgets wt. Call with mu held.
func (w *closeWatcher) drop(wt *watch) {
	_ = syscall.EpollCtl(w.run.epfd, syscall.EPOLL_CTL_DEL, int(wt.fd), nil)
	delete(w.byFD, wt.fd)
}

// close stops the goroutine and forgets every watch (their streams are
// told nothing); watches added later start a new goroutine.
func (w *closeWatcher) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.run != nil {
		w.run.closed = true
		_, _ = syscall.Write(w.run.wakeW, []byte{1})
		w.run = nil
	}
	clear(w.byFD)
}

// watchIdle is how long the goroutine outlives the last watch.
const watchIdle = 1000 // milliseconds

// loop waits for hang-ups until told to stop, or until it has watched
// nothing for watchIdle.
func (w *closeWatcher) loop(run *watchLoop) {
	defer func() {
		_ = syscall.Close(run.epfd)
		_ = syscall.Close(run.wakeR)
		_ = syscall.Close(run.wakeW)
	}()
	events := make([]syscall.EpollEvent, 64)
	for {
		n, err := syscall.EpollWait(run.epfd, events, watchIdle)
		if err == syscall.EINTR {
			continue
		}
		w.mu.Lock()
		if run.closed { // close stopped it (and forgot the watches)
			w.mu.Unlock()
			return
		}
		if err != nil || (n == 0 && len(w.byFD) == 0) { // broken, or idle
			w.run = nil // the next add starts a new loop
			w.mu.Unlock()
			return
		}
		var gone []*watch
		for _, ev := range events[:n] {
			if wt, ok := w.byFD[ev.Fd]; ok {
				gone = append(gone, wt)
				w.drop(wt) // once: the hang-up stays readable
			}
		}
		w.mu.Unlock()
		for _, wt := range gone {
			wt.gone()
		}
	}
}

// connFD returns the descriptor of a TCP or Unix connection.
func connFD(conn net.Conn) (int32, bool) {
	sc, ok := socketOf(conn).(syscall.Conn)
	if !ok {
		return 0, false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return 0, false
	}
	var fd int32 = -1
	if raw.Control(func(f uintptr) { fd = int32(f) }) != nil || fd < 0 {
		return 0, false
	}
	return fd, true
}
