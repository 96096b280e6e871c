package transport

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"
)

// maxRequestHead bounds a request's line and headers, as FastServer's read
// buffer does.
const maxRequestHead = 16 << 10

// LoopServer serves the Streamable HTTP endpoint on its own event loop
// (see poller): the same rules as FastServer and HTTPHandler (they share
// the endpoint code), with the least CPU per request of the three. It
// serves HTTP/1.x; requests for any other path go to a net/http handler
// (health, metrics), on a goroutine of their own. Linux only; elsewhere
// NewLoopServer returns a FastServer.
type LoopServer struct {
	ep     *endpoint
	path   string
	other  http.Handler
	lim    requestLimits
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // closed by Shutdown: Serve returns

	mu      sync.Mutex
	p       *poller // set by Serve
	lnClose func() error
	shut    bool // Shutdown was called
}

// ErrLoopServerClosed is what Serve returns once the server has been shut
// down, or when it already serves.
var ErrLoopServerClosed = errors.New("transport: LoopServer closed or already serving")

// NewLoopServer returns a server for host's sessions on path; other (which
// may be nil: 404) serves every other path. opts may be nil.
func NewLoopServer(host SessionHost, path string, other http.Handler, opts *HTTPOptions) *LoopServer {
	ep := newEndpoint(host, opts)
	ctx, cancel := context.WithCancel(context.Background())
	return &LoopServer{
		ep: ep, path: path, other: other,
		lim: requestLimits{maxHead: maxRequestHead, maxBody: ep.opts.MaxBodyBytes},
		ctx: ctx, cancel: cancel,
		done: make(chan struct{}),
	}
}

// Serve accepts connections on ln, which must be a TCP or Unix listener,
// until Shutdown.
func (s *LoopServer) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.shut || s.p != nil {
		s.mu.Unlock()
		return ErrLoopServerClosed
	}
	p, err := s.listen(ln)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	s.p, s.lnClose = p, ln.Close
	p.start()
	s.mu.Unlock()
	<-s.done
	return nil
}

func (s *LoopServer) listen(ln net.Listener) (*poller, error) {
	sc, ok := ln.(syscall.Conn)
	if !ok {
		return nil, errors.New("transport: LoopServer needs a TCP or Unix listener")
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return nil, err
	}
	lfd := -1
	if err := raw.Control(func(fd uintptr) { lfd = int(fd) }); err != nil {
		return nil, err
	}
	// The listener stays the caller's (Shutdown closes it); the loop
	// accepts on its socket directly, so Go's poller never sees the
	// connections.
	p, err := newPoller(lfd, ln.Addr(), s.tick(), 2*maxRequestHead+2*int(s.lim.maxBody)+64<<10)
	if err != nil {
		return nil, err
	}
	p.serve = s.serveConn
	p.sweep = s.sweep
	return p, nil
}

// tick is how often timeouts are checked: often enough for the shortest.
func (s *LoopServer) tick() time.Duration {
	t := min(s.ep.opts.ReadTimeout/4, 250*time.Millisecond)
	return max(t, 10*time.Millisecond)
}

// StartDrain makes the endpoint refuse new sessions (503) while existing
// ones finish; see mcpactors.Server.Shutdown.
func (s *LoopServer) StartDrain() { s.ep.draining.Store(true) }

// Shutdown stops accepting connections and closes idle ones, waiting for
// the requests in flight until ctx ends; then it closes every connection
// and stops the endpoint's goroutines. End the sessions first (they close
// their streams).
func (s *LoopServer) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if s.shut {
		s.mu.Unlock()
		return nil
	}
	s.shut = true
	p := s.p
	s.mu.Unlock()
	if p == nil { // never served
		s.cancel()
		close(s.done)
		s.ep.close()
		return nil
	}
	p.stopAccepting()
	_ = s.lnClose()
	// From here a connection closes once its request is done (release),
	// so closing the idle ones once leaves only busy ones, and the last
	// to be released signals idle.
	p.draining.Store(true)
	closeIdle(p)
	var err error
	for p.busy.Load() > 0 && err == nil {
		select {
		case <-p.idle:
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	s.cancel()
	p.each(func(c *pollConn) { _ = c.Close() })
	p.stop()
	p.release()
	close(s.done)
	s.ep.close()
	return err
}

// closeIdle closes the connections that serve no request.
func closeIdle(p *poller) {
	p.each(func(c *pollConn) {
		c.mu.Lock()
		if !c.busy {
			_ = c.closeLocked()
		}
		c.mu.Unlock()
	})
}

// sweep enforces the read timeout on requests that are slow to arrive
// (408) and the idle timeout on kept-alive connections.
func (s *LoopServer) sweep(p *poller, now int64) {
	read, idle := int64(s.ep.opts.ReadTimeout), int64(2*time.Minute)
	p.each(func(c *pollConn) {
		c.mu.Lock()
		if c.busy || c.closed {
			c.mu.Unlock()
			return
		}
		switch {
		case c.inSince != 0 && read > 0 && now-c.inSince > read:
			c.markBusy()
			c.mu.Unlock()
			s.refuse(c, http.StatusRequestTimeout, "request timeout")
		case c.inSince == 0 && now-c.lastUse > idle:
			_ = c.closeLocked()
			c.mu.Unlock()
		default:
			c.mu.Unlock()
		}
	})
}
