package transport

import (
	"bufio"
	"bytes"
	"errors"
	"net/http"
	"syscall"
	"time"
)

// continueHead is the interim answer to "Expect: 100-continue".
var continueHead = []byte("HTTP/1.1 100 Continue\r\n\r\n")

// serveConn serves c's whole requests one after the other on this
// goroutine: t's, the task a runner drives, or nil for any other
// goroutine.
func (s *LoopServer) serveConn(c *pollConn, t *task) {
	for {
		c.mu.Lock()
		if c.closed || c.busy {
			c.mu.Unlock()
			return
		}
		n, err := parseRequest(c.in, s.lim, &c.req)
		if err == nil && n == 0 && len(c.in) >= c.p.bound {
			err = &httpError{status: http.StatusRequestEntityTooLarge, msg: "request too large"}
		}
		if err != nil {
			c.markBusy()
			c.mu.Unlock()
			he := &httpError{status: http.StatusBadRequest, msg: "bad request"}
			errors.As(err, &he)
			s.refuse(c, he.status, he.msg)
			return
		}
		if n == 0 {
			if c.req.headDone && c.req.expectContinue && !c.continued {
				c.continued = true
				_, _ = syscall.Write(c.fd, continueHead) // a few bytes on an idle socket
			}
			if c.peerGone {
				_ = c.closeLocked()
			}
			c.mu.Unlock()
			return
		}
		c.markBusy()
		c.used = n
		raw := c.in[:n]
		c.mu.Unlock()

		x := &loopExchange{s: s, c: c, t: t, req: &c.req, raw: raw, keep: c.req.keepAlive}
		s.exchange(x)
		if x.deferred || !s.release(c, x.keep) {
			return
		}
	}
}

// release ends the request c was serving; it reports whether c can serve
// the next one (otherwise it is closed).
func (s *LoopServer) release(c *pollConn, keep bool) bool {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return false
	}
	rest := c.consume()
	if rest == 0 && cap(c.in) > 64<<10 {
		c.in = nil // a large request's buffer is not kept for the next
	}
	c.continued, c.gone = false, nil
	c.markFree()
	now := nanotime()
	c.lastUse, c.inSince = now, 0
	if rest > 0 {
		c.inSince = now
	}
	if !keep || c.p.draining.Load() || (c.peerGone && rest == 0) {
		_ = c.closeLocked()
		c.mu.Unlock()
		return false
	}
	stalled := c.stalled
	c.stalled = false
	c.mu.Unlock()
	if stalled { // input stopped at its bound: the poller will not say more is there
		c.read(c.p.bound)
	}
	return true
}

// resume ends a request whose answer outlived its serving goroutine (a
// stream), and serves what the client sent next.
func (s *LoopServer) resume(c *pollConn, keep bool) {
	if s.release(c, keep) {
		s.serveConn(c, nil)
	}
}

// giveBack ends a stream that took c over. The stream may end on any
// goroutine, the session actor's included (connStream.Close), so what
// the client sent meanwhile is served on a goroutine of its own; usually
// nothing has come, and the poller serves what comes next.
func (s *LoopServer) giveBack(c *pollConn) {
	if !s.release(c, true) {
		return
	}
	c.mu.Lock()
	pending := len(c.in) > 0
	c.mu.Unlock()
	if pending {
		go s.serveConn(c, nil) // ends when c has no whole request left, like any serveConn
	}
}

// refuse answers a request that cannot be served with status and closes
// the connection.
func (s *LoopServer) refuse(c *pollConn, status int, msg string) {
	x := &loopExchange{s: s, c: c, req: &c.req}
	s.ep.fail(x, status, msg)
	s.release(c, false)
}

// exchange serves one request.
func (s *LoopServer) exchange(x *loopExchange) {
	if string(x.req.path) != s.path {
		s.serveOther(x)
		return
	}
	obs := s.ep.opts.Observer
	if obs != nil {
		x.start = time.Now()
	}
	s.ep.serve(x)
	if !x.deferred && !x.answered {
		x.keep = false // nothing to say (the server is stopping): the connection ends
	}
	if obs != nil && !x.deferred {
		obs.HTTPRequest(x.method(), x.status, time.Since(x.start))
	}
}

// serveOther runs the net/http handler for paths other than the
// endpoint's, on a goroutine of its own (they may take long: profiles).
func (s *LoopServer) serveOther(x *loopExchange) {
	if s.other == nil {
		x.answer(http.StatusNotFound, plainContentType, []byte("404 page not found\n"))
		return
	}
	x.deferred = true
	raw := append([]byte(nil), x.raw...)
	// The goroutine ends with the handler, which has the server's context
	// (cancelled by Shutdown); the connection counts as busy until then.
	go func() {
		req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
		if err != nil {
			x.keep = false
			x.answer(http.StatusBadRequest, plainContentType, []byte("bad request\n"))
		} else {
			req.RemoteAddr = x.c.remote.String()
			w := &bufferedResponse{header: http.Header{}}
			s.other.ServeHTTP(w, req.WithContext(s.ctx))
			x.writeBuffered(w)
		}
		s.resume(x.c, x.keep)
	}()
}

// bufferedResponse is an http.ResponseWriter that keeps the whole answer.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *bufferedResponse) Header() http.Header { return w.header }

func (w *bufferedResponse) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *bufferedResponse) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(b)
}

// writeBuffered writes w's answer.
func (x *loopExchange) writeBuffered(w *bufferedResponse) {
	status := w.status
	if status == 0 {
		status = http.StatusOK
	}
	if w.header.Get("Content-Type") == "" && w.body.Len() > 0 {
		w.header.Set("Content-Type", http.DetectContentType(w.body.Bytes()))
	}
	w.header.Del("Content-Length")
	w.header.Del("Transfer-Encoding")
	w.header.Del("Connection")
	var hb bytes.Buffer
	_ = w.header.Write(&hb)
	x.answer(status, hb.Bytes(), w.body.Bytes())
}
