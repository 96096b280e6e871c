//go:build linux

package transport

import (
	"net"
	"sync"
	"syscall"
)

// closeWatcher tells taken-over streams at once when their client closes
// the connection, with one goroutine for all of them: the connections'
// descriptors sit in an epoll set of its own (beside the Go runtime's),
// watched for hang-ups only; nothing is ever read from them. The goroutine
// runs only while something is watched.
type closeWatcher struct {
	mu   sync.Mutex
	byFD map[int32]*connStream
	run  *watchLoop // nil when no loop runs
}

// watchLoop is one run of the watching goroutine: its epoll set and the
// pipe that wakes it to stop.
type watchLoop struct {
	epfd   int
	wakeR  int
	wakeW  int
	closed bool
}

func newCloseWatcher() *closeWatcher { return &closeWatcher{byFD: map[int32]*connStream{}} }

// add watches s's connection; it reports false when it cannot (the stream
// then relies on keep-alive writes to notice a dead client).
func (w *closeWatcher) add(s *connStream, conn net.Conn) bool {
	fd, ok := connFD(conn)
	if !ok {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.run == nil {
		run, err := startWatchLoop()
		if err != nil {
			return false
		}
		w.run = run
		go w.loop(run)
	}
	ev := syscall.EpollEvent{Events: syscall.EPOLLRDHUP | syscall.EPOLLHUP | syscall.EPOLLERR, Fd: fd}
	if err := syscall.EpollCtl(w.run.epfd, syscall.EPOLL_CTL_ADD, int(fd), &ev); err != nil {
		return false
	}
	w.byFD[fd] = s
	s.watchFD = fd
	return true
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

// remove stops watching s; call it before closing the connection, so that
// a descriptor number reused later is not mistaken for it. The goroutine
// stops when nothing is left to watch.
func (w *closeWatcher) remove(s *connStream) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if s.watchFD < 0 || w.byFD[s.watchFD] != s {
		return
	}
	_ = syscall.EpollCtl(w.run.epfd, syscall.EPOLL_CTL_DEL, int(s.watchFD), nil)
	delete(w.byFD, s.watchFD)
	s.watchFD = -1
	if len(w.byFD) == 0 {
		w.run.closed = true
		_, _ = syscall.Write(w.run.wakeW, []byte{1})
		w.run = nil
	}
}

// loop waits for hang-ups until told to stop.
func (w *closeWatcher) loop(run *watchLoop) {
	defer func() {
		_ = syscall.Close(run.epfd)
		_ = syscall.Close(run.wakeR)
		_ = syscall.Close(run.wakeW)
	}()
	events := make([]syscall.EpollEvent, 64)
	for {
		n, err := syscall.EpollWait(run.epfd, events, -1)
		if err != nil && err != syscall.EINTR {
			return
		}
		var gone []*connStream
		w.mu.Lock()
		stop := run.closed
		for _, ev := range events[:max(n, 0)] {
			if s, ok := w.byFD[ev.Fd]; ok && !stop {
				gone = append(gone, s)
			}
		}
		w.mu.Unlock()
		for _, s := range gone {
			s.clientGone()
		}
		if stop {
			return
		}
	}
}

// connFD returns the descriptor of a TCP or Unix connection.
func connFD(conn net.Conn) (int32, bool) {
	sc, ok := conn.(syscall.Conn)
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
