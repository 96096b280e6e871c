package transport

import (
	"context"
	"net"
	"sync"
)

// servedAgain tracks the connections that GET streams gave back to a
// FastServer: each is served by fasthttp on a goroutine of its own until
// it closes (or is taken over again), and Shutdown closes those left.
// The goroutines come from the endpoint's pool.
type servedAgain struct {
	mu      sync.Mutex
	stopped bool
	conns   map[*endConn]struct{}
	wg      sync.WaitGroup
}

// serveAgain serves the connection of a GET stream that has ended its
// body: the client's next requests arrive on it.
func (s *FastServer) serveAgain(conn net.Conn) {
	a := &s.again
	ec := &endConn{Conn: conn}
	a.mu.Lock()
	if a.stopped {
		a.mu.Unlock()
		_ = conn.Close()
		return
	}
	if a.conns == nil {
		a.conns = map[*endConn]struct{}{}
	}
	a.conns[ec] = struct{}{}
	a.wg.Add(1)
	a.mu.Unlock()
	s.ep.pool.Go(func() { // a warm goroutine: serving a request grows a new one's stack
		defer a.wg.Done()
		_ = s.srv.ServeConn(ec)
		a.mu.Lock()
		delete(a.conns, ec)
		a.mu.Unlock()
	})
}

// stop refuses connections given back from now on.
func (a *servedAgain) stop() {
	a.mu.Lock()
	a.stopped = true
	a.mu.Unlock()
}

// close closes the connections still served and waits, until ctx ends,
// for their goroutines.
func (a *servedAgain) close(ctx context.Context) {
	a.mu.Lock()
	for ec := range a.conns {
		_ = ec.Conn.Close()
	}
	a.mu.Unlock()
	done := make(chan struct{})
	go func() { // ends with the last serving goroutine
		a.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
}
