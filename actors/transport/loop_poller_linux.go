package transport

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// poller is a LoopServer's event loop: one epoll set holding the listening
// socket and every connection, and one goroutine at a time (the active
// runner) waiting on it. The runner reads what arrives and serves whole
// requests itself, on its own stack: no goroutine is woken per request,
// which is most of what serving a small request costs on Go's own
// network poller.
//
// Each connection's requests are served in a task (a coroutine the runner
// drives on its own thread, see task). A handler that waits for its
// client suspends its task: the runner goes on with the loop, and whoever
// reads the answer resumes the task (ready, runReady). A request that
// keeps the runner any other way (a handler that sleeps, computes, or
// waits from another goroutine) hands the loop to a new runner once it
// has run for stallAfter (a watchdog). The old runner finishes the
// events it holds and waits as a spare.
//
//	runner ─epoll_wait─▶ read ─▶ whole request? ─▶ task: endpoint (handler inline)
//	   handler waits for its client ──suspend──▶ runner ─epoll_wait─▶ …
//	   answer read ─▶ resume ─▶ the task goes on, on that runner's thread
//	   handler stalls ──handoff (stallAfter)──▶ new runner ─epoll_wait─▶ …
type poller struct {
	epfd     int
	wakeFD   int // an eventfd that wakes the runner to stop
	resumeFD int // an eventfd that wakes the runner for resumed tasks
	laddr    net.Addr
	serve    func(c *pollConn, t *task) // serves c's whole requests, in t
	sweep    func(p *poller, now int64) // timeouts, every tick
	tick     time.Duration
	bound    int // input held per connection

	mu    sync.Mutex
	lfd   int // the listening socket; -1 once no longer accepting
	conns []*pollConn
	count int

	lastSweep atomic.Int64
	draining  atomic.Bool // Shutdown began: a connection closes once its request is done

	active   atomic.Pointer[runner]
	stopping atomic.Bool
	busy     atomic.Int64  // connections serving a request or taken over
	waiting  atomic.Int32  // runners in wait
	left     chan struct{} // the last runner left wait once stopping
	idle     chan struct{}
	spares   idlePool[*runner] // runners waiting to be made active again
	handoffs atomic.Int64      // how often the loop went to another runner
	tasks    taskSet
	watch    *watchdog
	sleeping atomic.Bool   // the active runner waits for events: ready wakes it
	done     chan struct{} // closed by stop
}

func newPoller(lfd int, laddr net.Addr, tick time.Duration, bound int) (*poller, error) {
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	wfd, _, errno := syscall.Syscall(syscall.SYS_EVENTFD2, 0, syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	if errno != 0 {
		_ = syscall.Close(epfd)
		return nil, errno
	}
	rfd, _, errno := syscall.Syscall(syscall.SYS_EVENTFD2, 0, syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	if errno != 0 {
		_ = syscall.Close(int(wfd))
		_ = syscall.Close(epfd)
		return nil, errno
	}
	p := &poller{epfd: epfd, wakeFD: int(wfd), resumeFD: int(rfd), laddr: laddr, tick: tick, bound: bound, lfd: lfd,
		idle: make(chan struct{}, 1), left: make(chan struct{}, 1), done: make(chan struct{})}
	for _, fd := range []int{p.wakeFD, p.resumeFD, lfd} {
		// The wake descriptor is level-triggered and never drained: once
		// stop writes it, every epoll_wait returns at once.
		events := uint32(syscall.EPOLLIN)
		if fd == lfd {
			events |= epollET
		}
		ev := syscall.EpollEvent{Events: events, Fd: int32(fd)}
		if err := syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
			p.closeFDs()
			return nil, err
		}
	}
	if p.watch, err = newWatchdog(p); err != nil {
		p.closeFDs()
		return nil, err
	}
	return p, nil
}

// epollET is EPOLLET as the unsigned flag EpollEvent.Events holds.
const epollET = 1 << 31

// wait is epoll_wait, unless the poller is stopping: release closes the
// epoll set only once no runner is inside.
func (p *poller) wait(events []syscall.EpollEvent, ms int) (int, error) {
	p.waiting.Add(1)
	defer func() {
		if p.waiting.Add(-1) == 0 && p.stopping.Load() {
			select {
			case p.left <- struct{}{}:
			default:
			}
		}
	}()
	if p.stopping.Load() {
		return 0, net.ErrClosed
	}
	for {
		n, err := syscall.EpollWait(p.epfd, events, ms)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		return max(n, 0), err
	}
}

// event handles readiness of fd.
func (p *poller) event(fd int32, r *runner) {
	switch int(fd) {
	case p.wakeFD: // stopping
		return
	case p.resumeFD: // tasks were resumed (runReady takes them)
		var b [8]byte
		_, _ = syscall.Read(p.resumeFD, b[:])
		return
	}
	c, listener := p.lookup(int(fd))
	if listener {
		p.accept()
		return
	}
	if c == nil {
		return
	}
	free, gone := c.read(p.bound)
	if gone != nil {
		gone()
	}
	if free {
		r.serveTask(c)
	}
}

// lookup returns the connection on fd, or whether fd is the listener.
func (p *poller) lookup(fd int) (c *pollConn, listener bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if fd == p.lfd {
		return nil, true
	}
	if fd < len(p.conns) {
		return p.conns[fd], false
	}
	return nil, false
}

// accept takes every pending connection.
func (p *poller) accept() {
	for {
		p.mu.Lock()
		lfd := p.lfd
		p.mu.Unlock()
		if lfd < 0 {
			return
		}
		fd, sa, err := syscall.Accept4(lfd, syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC)
		switch {
		case errors.Is(err, syscall.EINTR), errors.Is(err, syscall.ECONNABORTED):
			continue
		case err != nil:
			return // EAGAIN: all taken; EMFILE and the like: the next arrival retries
		}
		_ = syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1)
		c := &pollConn{p: p, fd: fd, local: p.laddr, remote: sockaddrAddr(sa), lastUse: nanotime()}
		p.mu.Lock()
		for fd >= len(p.conns) {
			p.conns = append(p.conns, make([]*pollConn, len(p.conns)+64)...)
		}
		p.conns[fd] = c
		p.count++
		p.mu.Unlock()
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP | epollET, Fd: int32(fd)}
		if err := syscall.EpollCtl(p.epfd, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
			_ = c.Close()
		}
	}
}

// forget drops a closing connection. Called with c.mu held.
func (p *poller) forget(c *pollConn) {
	p.mu.Lock()
	if c.fd < len(p.conns) && p.conns[c.fd] == c {
		p.conns[c.fd] = nil
		p.count--
	}
	p.mu.Unlock()
	c.markFree()
}

// sweepIfDue runs the sweep once per tick; it returns the time it read.
func (p *poller) sweepIfDue() int64 {
	now := nanotime()
	last := p.lastSweep.Load()
	if now-last >= int64(p.tick) && p.lastSweep.CompareAndSwap(last, now) {
		if p.sweep != nil {
			p.sweep(p, now)
		}
		p.trimSpares()
		p.trimTasks()
	}
	return now
}

// each calls fn for every connection.
func (p *poller) each(fn func(c *pollConn)) {
	p.mu.Lock()
	all := make([]*pollConn, 0, p.count)
	for _, c := range p.conns {
		if c != nil {
			all = append(all, c)
		}
	}
	p.mu.Unlock()
	for _, c := range all {
		fn(c)
	}
}

// stopAccepting takes the listening socket out of the loop.
func (p *poller) stopAccepting() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.lfd >= 0 {
		_ = syscall.EpollCtl(p.epfd, syscall.EPOLL_CTL_DEL, p.lfd, nil)
		p.lfd = -1
	}
}

// stop ends the active runner and closes the epoll set; connections must
// be closed first.
func (p *poller) stop() {
	p.stopAccepting()
	p.stopping.Store(true)
	close(p.done)
	p.closeTasks()
	one := [8]byte{1}
	_, _ = syscall.Write(p.wakeFD, one[:])
}

// release frees the poller's descriptors once stop has made every runner
// leave epoll_wait (a closed descriptor's number is soon someone else's).
func (p *poller) release() {
	for p.waiting.Load() > 0 {
		<-p.left // each returns at once: the wake descriptor is ready
	}
	p.watch.stop()
	p.closeFDs()
}

// closeFDs closes the poller's own descriptors.
func (p *poller) closeFDs() {
	for _, fd := range []int{p.wakeFD, p.resumeFD, p.epfd} {
		_ = syscall.Close(fd)
	}
}

func sockaddrAddr(sa syscall.Sockaddr) net.Addr {
	switch a := sa.(type) {
	case *syscall.SockaddrInet4:
		return &net.TCPAddr{IP: append(net.IP(nil), a.Addr[:]...), Port: a.Port}
	case *syscall.SockaddrInet6:
		return &net.TCPAddr{IP: append(net.IP(nil), a.Addr[:]...), Port: a.Port}
	case *syscall.SockaddrUnix:
		return &net.UnixAddr{Name: a.Name, Net: "unix"}
	}
	return &net.TCPAddr{}
}

var clockStart = time.Now()

// nanotime is a monotonic clock reading.
func nanotime() int64 { return int64(time.Since(clockStart)) }
