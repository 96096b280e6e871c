package transport

import (
	"errors"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// stallAfter is how long a request may keep the runner before another
// goroutine takes over waiting for input (see poller).
const stallAfter = time.Millisecond

// Spare runners: a runner whose handler waited comes back as a spare, its
// grown stack ready for the next handoff (a new goroutine starts on 2 KiB
// and grows its stack four times on the way to a handler). Up to maxSpares
// wait; spares a whole sweep interval did not need are let go, a quarter
// at a time, down to keepSpares.
const (
	maxSpares  = 1024
	keepSpares = 8
)

// poller is a LoopServer's event loop: one epoll set holding the listening
// socket and every connection, and one goroutine at a time (the active
// runner) waiting on it. The runner reads what arrives and serves whole
// requests itself, on its own stack: no goroutine is woken per request,
// which is most of what serving a small request costs on Go's own
// network poller.
//
// A request that would keep the runner waiting hands the loop to a new
// runner: at once when its handler sends something other than its answer
// (it is about to wait for its client, or to stream: directStream.yield),
// and otherwise when it has run for stallAfter (a watchdog timer). The old
// runner finishes the events it holds and ends.
//
//	runner ─epoll_wait─▶ read ─▶ whole request? ─▶ endpoint (handler inline)
//	   handler waits ──handoff──▶ new runner ─epoll_wait─▶ …
type poller struct {
	epfd   int
	wakeFD int // an eventfd that wakes the runner to stop
	laddr  net.Addr
	serve  func(c *pollConn, r *runner) // serves c's whole requests
	sweep  func(p *poller, now int64)   // timeouts, every tick
	tick   time.Duration
	bound  int // input held per connection

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
	spares   chan *runner  // runners waiting to be made active again
	spareLow atomic.Int32  // the fewest spares waiting since the last trim
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
	p := &poller{epfd: epfd, wakeFD: int(wfd), laddr: laddr, tick: tick, bound: bound, lfd: lfd,
		idle: make(chan struct{}, 1), left: make(chan struct{}, 1), spares: make(chan *runner, maxSpares), done: make(chan struct{})}
	for _, fd := range []int{p.wakeFD, lfd} {
		// The wake descriptor is level-triggered and never drained: once
		// stop writes it, every epoll_wait returns at once.
		events := uint32(syscall.EPOLLIN)
		if fd == lfd {
			events |= epollET
		}
		ev := syscall.EpollEvent{Events: events, Fd: int32(fd)}
		if err := syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
			_ = syscall.Close(p.wakeFD)
			_ = syscall.Close(epfd)
			return nil, err
		}
	}
	return p, nil
}

// epollET is EPOLLET as the unsigned flag EpollEvent.Events holds.
const epollET = 1 << 31

// runner is one goroutine that waits on the poller while it is the active
// one.
type runner struct {
	p      *poller
	seq    atomic.Uint64 // odd while a request is served inline
	since  atomic.Int64  // when the request being served began (nanotime)
	armed  atomic.Bool   // the watchdog timer is set
	passed int64         // when it last passed through the scheduler (nanotime)
	timer  *time.Timer
	own    *batch // what its epoll_wait returns, while it is active
	wake   chan struct{}
	quit   bool // set by trimSpares before it wakes a spare to end it

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
	r := &runner{p: p, own: newBatch(), wake: make(chan struct{}, 1)}
	r.timer = time.AfterFunc(time.Hour, r.watch)
	r.timer.Stop()
	return r
}

// start makes a first runner active; it runs until stop.
func (p *poller) start() {
	r := p.newRunner()
	p.active.Store(r)
	go r.loop()
}

// handoff makes a new runner active in r's place, if r still is; the new
// one inherits the events r has yet to serve.
func (p *poller) handoff(r *runner) {
	if r == nil || p.stopping.Load() || p.active.Load() != r {
		return
	}
	var next *runner
	select {
	case next = <-p.spares:
		p.noteSpares()
	default:
	}
	if next == r { // r was replaced and parked since: a late watchdog
		p.park(next)
		return
	}
	spare := next != nil
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
	swapped := p.active.CompareAndSwap(r, next)
	r.mu.Unlock()
	if swapped && r.timer.Stop() {
		// r's request may go on for long (a handler waiting for its
		// client): its watchdog has nothing left to hand over, and
		// firing would cost a goroutine.
		r.armed.Store(false)
	}
	switch {
	case swapped && spare:
		next.wake <- struct{}{}
	case swapped:
		go next.loop()
	case spare:
		p.park(next)
	}
}

// yield hands the loop on: the request r serves is about to wait
// (yielder, for directStream).
func (r *runner) yield() { r.p.handoff(r) }

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
		if !r.p.park(r) || !r.waitAsSpare() {
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

// noteSpares records how few spares wait, after one was taken.
func (p *poller) noteSpares() {
	n := int32(len(p.spares))
	for {
		low := p.spareLow.Load()
		if n >= low || p.spareLow.CompareAndSwap(low, n) {
			return
		}
	}
}

// trimSpares lets go of a quarter of the spares no handoff needed since the
// last trim, keeping keepSpares.
func (p *poller) trimSpares() {
	unused := int(p.spareLow.Load())
	for range (unused - keepSpares + 3) / 4 {
		select {
		case r := <-p.spares:
			r.quit = true
			r.wake <- struct{}{}
		default:
			return
		}
	}
	p.spareLow.Store(int32(len(p.spares)))
}

// park keeps r as a spare, unless there are enough.
func (p *poller) park(r *runner) bool {
	select {
	case p.spares <- r:
		return true
	default:
		return false
	}
}

// begin and end bracket a request served inline, for the watchdog. The
// watchdog's timer is not set and stopped around every request (each
// change of a timer costs a lock and, often, a wake-up of the thread Go's
// runtime keeps waiting for timers): begin sets it when it is not set, and
// it sets itself again for as long as requests are being served.
func (r *runner) begin() {
	if r != nil {
		r.since.Store(nanotime())
		r.seq.Add(1)
		if !r.armed.Load() && r.armed.CompareAndSwap(false, true) {
			r.timer.Reset(stallAfter)
		}
	}
}

func (r *runner) end() {
	if r != nil {
		r.seq.Add(1)
	}
}

// watch runs when the watchdog's timer fires: a request that has run for
// stallAfter hands the loop over; one that began since gets the rest of
// its time; with none being served the timer rests until the next begin.
func (r *runner) watch() {
	for {
		if r.seq.Load()%2 == 1 {
			ran := time.Duration(nanotime() - r.since.Load())
			if ran < stallAfter {
				r.timer.Reset(stallAfter - ran)
				return
			}
			r.armed.Store(false)
			r.p.handoff(r)
			return
		}
		r.armed.Store(false)
		// A request that began before armed was cleared set no timer.
		if r.seq.Load()%2 == 0 || !r.armed.CompareAndSwap(false, true) {
			return
		}
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
		n, err := p.wait(r.own.events, ms)
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
	r.timer.Stop()
	r.armed.Store(false)
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
	if int(fd) == p.wakeFD { // stopping
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
		p.serve(c, r)
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
	}
	return now
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
	one := [8]byte{1}
	_, _ = syscall.Write(p.wakeFD, one[:])
}

// release frees the poller's descriptors once stop has made every runner
// leave epoll_wait (a closed descriptor's number is soon someone else's).
func (p *poller) release() {
	for p.waiting.Load() > 0 {
		<-p.left // each returns at once: the wake descriptor is ready
	}
	_ = syscall.Close(p.wakeFD)
	_ = syscall.Close(p.epfd)
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
