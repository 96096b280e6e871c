package transport

import (
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/mcp-actors/mcp-actors/messages"
)

// directHead is the head of a POST's event stream written by a
// directStream: chunked, so that the connection outlives it.
const directHead = "HTTP/1.1 200 OK\r\n" + sseHeaders + "Transfer-Encoding: chunked\r\n\r\n"

// maxDirectPending bounds what a directStream holds for a client that does
// not read: past it the stream ends early (the client resumes from the
// session's event log).
const maxDirectPending = 1 << 20

// tryWriter writes as much of b as a socket takes without waiting: a
// pollConn itself, or a rawWriter on another server's socket.
type tryWriter interface {
	tryWrite(b []byte) (int, error)
}

// directStream writes the event stream of a request whose handler runs on
// the goroutine serving its HTTP request (messages.Runner), straight from
// the goroutine that delivers each frame: usually the handler's own, as
// it sends an elicitation or a progress notification. No goroutine is
// started for the stream, unless the socket will not take a write at once
// (a client that reads slowly): then one goroutine writes what is left,
// with the write deadline, and later frames queue behind it. Deliver
// therefore never blocks on the network.
//
// The stream is a complete chunked response; once it has ended, the HTTP
// server's own response to the request is discarded (endConn.discardHead)
// and the connection serves the client's next request.
type directStream struct {
	sock    net.Conn // the socket itself, beneath any wrapper
	w       tryWriter
	retry   string
	timeout time.Duration
	obs     Observer

	mu       sync.Mutex
	started  bool           // the head has been written (or queued)
	scratch  *directScratch // where buf, events and prime came from, until recycle
	prime    []byte         // a priming event, sent with the next frame
	events   []byte         // scratch: the events of one write
	buf      []byte         // scratch: one write
	pending  []byte         // bytes the flusher goroutine has yet to write
	flushing bool
	ended    bool // the end of the body has been written (or queued)
	failed   bool // a write failed: the connection is dead
	wake     chan struct{}
	done     chan struct{} // closed once ended and written, or failed
}

// newDirectStream returns a stream for the socket sock, or nil when sock
// cannot be written this way.
func newDirectStream(sock net.Conn, o *HTTPOptions, retry string) *directStream {
	w, ok := sock.(tryWriter)
	if !ok {
		sc, ok := sock.(syscall.Conn)
		if !ok {
			return nil
		}
		raw, err := sc.SyscallConn()
		if err != nil {
			return nil
		}
		w = newRawWriter(raw)
	}
	scratch := directScratches.Get().(*directScratch)
	return &directStream{
		sock: sock, w: w, retry: retry, timeout: o.WriteTimeout, obs: o.Observer,
		wake: make(chan struct{}, 1), done: make(chan struct{}), scratch: scratch,
		buf: scratch.buf[:0], events: scratch.events[:0], prime: scratch.prime[:0],
	}
}

// directScratch is a directStream's write buffers, which the next stream
// reuses once one has ended (recycle).
type directScratch struct{ buf, events, prime []byte }

// maxScratch bounds the buffers kept for reuse: a stream that wrote a
// huge event does not keep its buffer alive.
const maxScratch = 64 << 10

var directScratches = sync.Pool{New: func() any {
	return &directScratch{buf: make([]byte, 0, 1024)} // the head and a typical event, at once
}}

// recycle gives the stream's buffers back for reuse once it has ended or
// failed and nothing is left to write; deliver and close do not touch them
// from then on. Called with mu held.
func (d *directStream) recycle() {
	if d.flushing || (!d.ended && !d.failed) || d.scratch == nil {
		return
	}
	if cap(d.buf)+cap(d.events)+cap(d.prime) <= maxScratch {
		*d.scratch = directScratch{buf: d.buf[:0], events: d.events[:0], prime: d.prime[:0]}
		directScratches.Put(d.scratch)
	}
	d.scratch, d.buf, d.events, d.prime = nil, nil, nil, nil
}

// deliver writes f, or refuses it once the stream has ended or failed.
func (d *directStream) deliver(f messages.Frame) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ended || d.failed {
		return false
	}
	if f.Data == nil { // a priming event is always followed by a frame or the end
		d.prime = appendEvent(d.prime[:0], f, d.retry)
		return true
	}
	events := appendEvent(append(d.events[:0], d.prime...), f, d.retry)
	d.prime = d.prime[:0]
	b := d.buf[:0]
	if !d.started {
		b = append(b, directHead...)
		d.started = true
	}
	b = appendBody(b, events, true, f.End)
	if f.End {
		d.ended = true
	}
	if d.obs != nil {
		d.obs.StreamEvent(false)
	}
	if d.flushing && len(d.pending)+len(b) > maxDirectPending {
		d.pending = append(d.pending, bodyEnd...) // end early: the client resumes
		d.ended = true
		d.kick()
		return false
	}
	d.write(b)
	d.events, d.buf = events, b
	return !d.failed
}

// close ends the stream without a response (a cancelled request, a closed
// session): whatever is pending, then the end of the body. A stream that
// has sent nothing stays unsent: the HTTP server answers instead.
func (d *directStream) close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ended || d.failed || (!d.started && len(d.prime) == 0) {
		return
	}
	b := d.buf[:0]
	if !d.started {
		b = append(b, directHead...)
		d.started = true
	}
	b = appendBody(b, d.prime, true, true)
	d.prime = d.prime[:0]
	d.ended = true
	d.write(b)
}

// write sends b at once if the socket takes it, and otherwise hands the
// rest to the flusher goroutine. Called with mu held.
func (d *directStream) write(b []byte) {
	if d.flushing {
		d.pending = append(d.pending, b...)
		d.kick()
		return
	}
	n, err := d.w.tryWrite(b)
	switch {
	case err != nil:
		d.failed = true
		d.finish()
	case n < len(b):
		d.pending = append(d.pending, b[n:]...)
		d.flushing = true
		go d.flush()
	case d.ended:
		d.finish()
	}
}

func (d *directStream) kick() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// finish closes done, once. Called with mu held.
func (d *directStream) finish() {
	select {
	case <-d.done:
	default:
		close(d.done)
	}
}

// flush writes pending bytes, blocking, until the stream has ended and all
// is written, or a write fails.
func (d *directStream) flush() {
	for {
		d.mu.Lock()
		if d.failed { // cut by wait
			d.flushing = false
			d.mu.Unlock()
			return
		}
		b := d.pending
		d.pending = nil
		if len(b) == 0 {
			if d.ended {
				d.flushing = false
				d.finish()
				d.mu.Unlock()
				return
			}
			d.mu.Unlock()
			<-d.wake
			continue
		}
		d.mu.Unlock()
		_ = d.sock.SetWriteDeadline(time.Now().Add(d.timeout))
		if _, err := d.sock.Write(b); err != nil {
			d.mu.Lock()
			d.failed, d.flushing = true, false
			d.finish()
			d.mu.Unlock()
			return
		}
	}
}

// wait blocks until the stream has ended and been written, or failed, or
// stop is closed; it reports whether the connection can serve on. The
// stream's buffers go back for reuse if nothing is left to write.
func (d *directStream) wait(stop <-chan struct{}) bool {
	select {
	case <-d.done:
	case <-stop:
		d.mu.Lock()
		d.failed = true // the server is shutting down: the stream is cut
		d.recycle()
		d.mu.Unlock()
		d.kick()
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.recycle()
	return !d.failed
}

// begun reports whether anything of the stream has been sent.
func (d *directStream) begun() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.started
}
