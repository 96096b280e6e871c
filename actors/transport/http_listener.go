package transport

import (
	"net"
	"sync"
	"sync/atomic"
)

// Listener is a net.Listener that also accepts the connections given back
// to it: an http.Server serving an HTTPHandler from it (HTTPOptions.Listener)
// gets back the connection of a held GET stream that ended cleanly, to
// serve the client's next request on it, as if it had not been taken over.
//
//	inner.Accept ──go accept──▶ accepted ─┐
//	heldStream.finish ──GiveBack──▶ given ─┴──▶ Accept ──▶ http.Server
//
// The goroutine that runs the inner listener's Accept starts with
// NewListener and ends with Close; http.Server.Serve closes its listener
// when it returns, and Shutdown at once. Only plain TCP connections may be
// given back: a server that wraps what it accepts (ServeTLS) must not be
// given one.
type Listener struct {
	inner    net.Listener
	accepted chan acceptResult // from the accept goroutine, to Accept
	woken    chan struct{}     // a connection was given back (1-buffered)
	closing  chan struct{}     // closed by Close
	stopped  chan struct{}     // closed when the accept goroutine ends

	mu     sync.Mutex
	given  []*givenConn            // given back, not yet accepted
	quiet  map[*givenConn]struct{} // given back, no request read from since, not closed
	closed bool
}

type acceptResult struct {
	conn net.Conn
	err  error
}

// NewListener returns a Listener that accepts from ln. Close it (Serve does).
func NewListener(ln net.Listener) *Listener {
	l := &Listener{
		inner:    ln,
		accepted: make(chan acceptResult),
		woken:    make(chan struct{}, 1),
		closing:  make(chan struct{}),
		stopped:  make(chan struct{}),
		quiet:    map[*givenConn]struct{}{},
	}
	go l.accept()
	return l
}

// accept runs the inner listener's Accept until Close, and hands each result
// to Accept. Its errors are handed on as they are: http.Server decides
// whether to retry (a temporary error) or stop, and the next result waits
// until it asks. A connection accepted as the listener closes is closed.
func (l *Listener) accept() {
	defer close(l.stopped)
	for {
		c, err := l.inner.Accept()
		select {
		case l.accepted <- acceptResult{c, err}:
		case <-l.closing:
			if c != nil {
				_ = c.Close()
			}
			return
		}
	}
}

// Accept returns the next connection given back, or else the next the inner
// listener accepts, or its error. After Close it fails with net.ErrClosed.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		l.mu.Lock()
		if l.closed {
			l.mu.Unlock()
			return nil, net.ErrClosed
		}
		if len(l.given) > 0 {
			c := l.given[0]
			l.given[0] = nil
			l.given = l.given[1:]
			l.mu.Unlock()
			return c, nil
		}
		l.mu.Unlock()
		select {
		case r := <-l.accepted:
			return r.conn, r.err
		case <-l.woken:
		case <-l.closing:
			return nil, net.ErrClosed
		}
	}
}

// GiveBack queues c for Accept to return, and reports whether it did: false
// once the listener is closed, and the caller closes c. A connection given
// back is the listener's until a request is read from it: Close closes it.
func (l *Listener) GiveBack(c net.Conn) bool { return l.giveBack(c, nil) }

// giveBack gives c back with input, read from c ahead of what c has left,
// to be read first: the connection as it was before net/http read ahead.
// A connection given back again is unwrapped, not wrapped twice.
func (l *Listener) giveBack(c net.Conn, input []byte) bool {
	old, again := c.(*givenConn)
	if again {
		input = append(input, old.input...)
		c = old.Conn
	}
	g := &givenConn{Conn: c, input: input, l: l}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	if again {
		delete(l.quiet, old) // Close must not close it under g
	}
	l.given = append(l.given, g)
	l.quiet[g] = struct{}{}
	select {
	case l.woken <- struct{}{}:
	default: // Accept will see it
	}
	return true
}

// Close closes the inner listener and the connections given back that no
// request has been read from since: to http.Server they are new, not idle
// keep-alive connections, and its Shutdown, which closes the listener
// first, would wait for them. It waits for the accept goroutine to end.
// Accept then fails with net.ErrClosed, and GiveBack refuses.
func (l *Listener) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return net.ErrClosed
	}
	l.closed = true
	quiet := l.quiet
	l.given, l.quiet = nil, nil
	close(l.closing)
	l.mu.Unlock()
	for g := range quiet {
		_ = g.Close()
	}
	err := l.inner.Close()
	<-l.stopped
	return err
}

// Addr returns the inner listener's address.
func (l *Listener) Addr() net.Addr { return l.inner.Addr() }

// forget drops g from the connections Close closes.
func (l *Listener) forget(g *givenConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.quiet, g) // nil once closed: a no-op
}

// givenConn is a connection given back: Read returns what was read from it
// ahead first, and the first input it returns tells the listener a
// request has come. Reads are not concurrent (net/http reads a connection
// from one goroutine at a time).
type givenConn struct {
	net.Conn        // as the inner listener accepted it
	input    []byte // what is left of the input read ahead
	l        *Listener
	busy     atomic.Bool // a request has been read from it
	closed   atomic.Bool
}

// Read implements net.Conn.
func (c *givenConn) Read(p []byte) (int, error) {
	var n int
	var err error
	if len(c.input) > 0 {
		n = copy(p, c.input)
		c.input = c.input[n:]
	} else {
		n, err = c.Conn.Read(p)
	}
	if n > 0 && !c.busy.Load() {
		c.busy.Store(true)
		c.l.forget(c)
	}
	return n, err
}

// Close implements net.Conn. The first call closes the connection (the
// listener's Close may race with the server's).
func (c *givenConn) Close() error {
	c.l.forget(c)
	if !c.closed.CompareAndSwap(false, true) {
		return net.ErrClosed
	}
	return c.Conn.Close()
}

// NetConn returns the connection underneath (for peerGone).
func (c *givenConn) NetConn() net.Conn { return c.Conn }

// CloseWrite half-closes a TCP connection, as net/http does before it
// closes one whose client may still be sending.
func (c *givenConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
