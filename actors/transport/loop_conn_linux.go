package transport

import (
	"errors"
	"net"
	"os"
	"slices"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// pollConn is a connection a LoopServer accepted: a non-blocking socket
// whose input the poller reads as it arrives, and which the goroutine
// serving its current request writes. It is a net.Conn (Write blocks
// until the socket took everything or the write deadline passed), so the
// streams written on other servers' connections (directStream, connStream)
// write it the same way, and it is a tryWriter and a goneTeller, so they
// need neither a rawWriter nor the close watcher for it.
//
// Every use of fd happens under mu with closed checked: a closed
// descriptor's number is soon reused by another connection.
type pollConn struct {
	p      *poller
	fd     int
	local  net.Addr
	remote net.Addr

	mu        sync.Mutex
	in        []byte // received, not yet served
	used      int    // bytes of in the request being served uses
	inSince   int64  // when the first byte of a request not yet whole arrived (nanotime); 0: none
	lastUse   int64  // when the last exchange ended (nanotime), for the idle timeout
	busy      bool   // a goroutine serves a request, or the connection is taken over
	stalled   bool   // input stopped being read: over its bound while busy
	peerGone  bool   // the client closed its side or the socket failed
	closed    bool   // fd is closed
	continued bool   // 100 Continue was sent for the request being read
	deadline  time.Time
	gone      func() // told once if the client goes while a stream is written
	req       httpRequest
	strs      strs // header values as strings, for the request being served
}

// read takes what the socket holds. It reports whether the connection is
// free to serve (not busy, not closed). Called by the poller's runner on
// an input event, with mu not held.
func (c *pollConn) read(bound int) (free bool, gone func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false, nil
	}
	for !c.peerGone {
		if len(c.in) >= bound {
			c.stalled = true // read again once the request being served is done
			break
		}
		if cap(c.in)-len(c.in) < 2048 {
			c.in = slices.Grow(c.in, max(4096, cap(c.in)))
		}
		space := c.in[len(c.in):cap(c.in)]
		n, err := syscall.Read(c.fd, space)
		switch {
		case n > 0:
			if len(c.in) == c.used && c.inSince == 0 {
				c.inSince = nanotime()
			}
			c.in = c.in[:len(c.in)+n]
			if n < len(space) {
				return !c.busy, nil
			}
			continue
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return !c.busy, nil
		}
		c.peerGone = true // EOF, or a reset
	}
	if c.peerGone && c.busy && c.gone != nil {
		gone, c.gone = c.gone, nil
	}
	return !c.busy, gone
}

// tellGone has gone called (once, by the poller's runner) if the client
// hangs up before the request being served, or the stream that took the
// connection over, is done; at once if it has already. The poller sees
// hang-ups anyway: no close watcher is needed for a pollConn.
func (c *pollConn) tellGone(gone func()) {
	c.mu.Lock()
	already := c.peerGone
	if !already {
		c.gone = gone
	}
	c.mu.Unlock()
	if already {
		gone()
	}
}

// dropServed forgets the request being served (its exchange has read all
// it needs: nothing may use it after), and the input buffer too when
// nothing follows the request; the parsed request's slices point into it.
func (c *pollConn) dropServed() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.consume() == 0 {
		c.in = nil
	}
	c.req = httpRequest{}
}

// consume drops the request being served from the input and returns how
// many bytes follow it. Called with mu held.
func (c *pollConn) consume() int {
	rest := copy(c.in, c.in[c.used:])
	c.in, c.used = c.in[:rest], 0
	return rest
}

// markBusy marks the connection busy (serving a request, or taken over),
// and markFree free again; the poller counts busy connections for
// Shutdown. Called with mu held.
func (c *pollConn) markBusy() {
	c.busy = true
	c.p.busy.Add(1)
}

func (c *pollConn) markFree() {
	if !c.busy {
		return
	}
	c.busy = false
	if c.p.busy.Add(-1) == 0 {
		select {
		case c.p.idle <- struct{}{}:
		default:
		}
	}
}

// Write writes all of b, waiting for the socket to take it until the
// write deadline.
func (c *pollConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	written := 0
	for {
		if c.closed {
			return written, net.ErrClosed
		}
		n, err := writeSome(c.fd, b[written:])
		written += n
		if err != nil || written == len(b) {
			return written, err
		}
		fd, deadline := c.fd, c.deadline
		c.mu.Unlock() // the poller must go on reading this connection
		err = waitWritable(fd, deadline)
		c.mu.Lock()
		if err != nil {
			return written, err
		}
	}
}

// waitWritable waits until fd takes more bytes or deadline passes.
func waitWritable(fd int, deadline time.Time) error {
	for {
		ms := -1
		if !deadline.IsZero() {
			left := time.Until(deadline)
			if left <= 0 {
				return os.ErrDeadlineExceeded
			}
			ms = int(left/time.Millisecond) + 1
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
		n, err := unix.Poll(fds, ms)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return err
		case n > 0:
			return nil // writable, or failed: the next write says which
		}
	}
}

// Read is not how a pollConn's input is taken (the poller reads it); a
// stream that owns the connection never reads.
func (c *pollConn) Read([]byte) (int, error) { return 0, errors.ErrUnsupported }

// Close closes the socket, once.
func (c *pollConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closeLocked()
}

func (c *pollConn) closeLocked() error {
	if c.closed {
		return nil
	}
	c.closed = true
	c.p.forget(c)
	_ = syscall.EpollCtl(c.p.epfd, syscall.EPOLL_CTL_DEL, c.fd, nil)
	return syscall.Close(c.fd)
}

func (c *pollConn) LocalAddr() net.Addr  { return c.local }
func (c *pollConn) RemoteAddr() net.Addr { return c.remote }

func (c *pollConn) SetDeadline(t time.Time) error { return c.SetWriteDeadline(t) }

// SetReadDeadline does nothing: the poller's sweep bounds reading.
func (c *pollConn) SetReadDeadline(time.Time) error { return nil }

func (c *pollConn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	c.deadline = t
	c.mu.Unlock()
	return nil
}

// SyscallConn gives the socket to peerGone (a GET stream asks whether its
// client is still there); the streams write through tryWrite and learn of
// hang-ups through tellGone.
func (c *pollConn) SyscallConn() (syscall.RawConn, error) { return pollRaw{c}, nil }

// tryWrite writes as much of b as the socket takes without waiting
// (tryWriter).
func (c *pollConn) tryWrite(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return 0, net.ErrClosed
	}
	return writeSome(c.fd, b)
}

// pollRaw is a pollConn's syscall.RawConn: each callback runs once, with
// the descriptor, under the connection's lock.
type pollRaw struct{ c *pollConn }

func (r pollRaw) Control(f func(fd uintptr)) error {
	return r.do(func(fd uintptr) bool { f(fd); return true })
}
func (r pollRaw) Read(f func(fd uintptr) bool) error  { return r.do(f) }
func (r pollRaw) Write(f func(fd uintptr) bool) error { return r.do(f) }

func (r pollRaw) do(f func(fd uintptr) bool) error {
	r.c.mu.Lock()
	defer r.c.mu.Unlock()
	if r.c.closed {
		return net.ErrClosed
	}
	f(uintptr(r.c.fd))
	return nil
}
