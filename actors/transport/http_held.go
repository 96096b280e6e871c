package transport

import (
	"bytes"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mcp-actors/mcp-actors/actors/router"
	"github.com/mcp-actors/mcp-actors/messages"
)

// Below the platform, and on its way out: holding a stream hijacks its
// connection from net/http and writes HTTP/1.1 chunk framing by hand. It
// exists for an idle-memory target per session that net/http alone cannot
// meet (about 30 KB per held handler goroutine and its buffers); that
// target is withdrawn, and the next issue ("back on the platform") puts
// GET streams back on plain net/http handlers, which HTTP/2 from a load
// balancer makes cheap. Nothing in the standard library holds a response
// without a goroutine, which is why this was written.

// holdAfter is how long a GET stream stays quiet on its handler's
// goroutine before it is held instead (see heldStream). Streams of short
// sessions end before it, and give their connection back to net/http;
// the streams of idle sessions, the many, cost no goroutine. (A variable
// for the tests.)
var holdAfter = 25 * time.Millisecond

// heldStream is a GET's event stream once its handler has let go of it:
// the connection is taken over from net/http (Hijack) and no goroutine
// waits on it. The session's events are queued as they arrive and written
// by a goroutine started for the purpose, which ends when the queue is
// empty; the handler's hub pings the stream when it has been quiet; a
// write that fails ends it, and the session is told. The body goes on as
// net/http began it (chunked over HTTP/1.1). net/http cannot take the
// connection back, but the listener it accepts from can (Listener): a
// stream the server ends cleanly gives its connection back when it may
// (reuse), for the client's next request, and closes it otherwise.
//
//	session ──StreamEvent──▶ Queue (forwarding) ──▶ heldStream.queue ──go run──▶ conn
//	hub (one goroutine per handler while streams are held) ──ping due──▶ run
//	run ──the body's end──▶ finish ──GiveBack──▶ Listener ──Accept──▶ http.Server
//
// Once done the stream touches the connection no more (no write, no
// peerGone): it may be serving another request.
type heldStream struct {
	h       *HTTPHandler
	session string
	sid     messages.StreamID
	conn    net.Conn
	chunked bool
	reuse   bool      // a clean end gives the connection back (see reusable)
	input   []byte    // what net/http had read of the connection beyond the GET, when reuse
	start   time.Time // when the GET arrived, for the Observer

	mu        sync.Mutex
	queue     []messages.StreamEvent
	writing   bool // a goroutine is writing
	ping      bool // a keep-alive comment is due
	ending    bool // the stream ends once the queue is written
	cut       bool // its client fell behind: the body is cut off, not ended
	done      bool // the connection is closed or given back
	lastWrite time.Time
	buf       []byte
	frames    []messages.Frame
}

// hold takes a quiet GET stream over from its handler: true when it did,
// and the handler returns at once without unregistering the stream.
// Connections that cannot be taken over (HTTP/2) stay with the handler.
// reuse says whether the head let the client keep the connection.
func (h *HTTPHandler) hold(x *exchange, q *router.Queue, sid messages.StreamID, reuse bool) bool {
	if x.r.ProtoMajor != 1 {
		return false
	}
	conn, rw, err := http.NewResponseController(x.w).Hijack()
	if err != nil {
		return false
	}
	// What net/http read ahead of the connection's input (a request the
	// client pipelined behind the GET) is kept for the connection's next
	// owner; without one it is dropped with the reader.
	var input []byte
	if n := rw.Reader.Buffered(); reuse && n > 0 {
		b, _ := rw.Reader.Peek(n)
		input = bytes.Clone(b)
	}
	_ = conn.SetDeadline(time.Time{})
	s := &heldStream{h: h, session: x.session, sid: sid, conn: conn, chunked: x.r.ProtoAtLeast(1, 1),
		reuse: reuse, input: input, start: x.start, lastWrite: time.Now()}
	x.held = true
	q.Forward(s)
	h.router.Streams().Replace(sid, s) // the queue is let go of
	h.hub.add(s)
	return true
}

// Receive implements router.Receiver.
func (s *heldStream) Receive(ev messages.StreamEvent) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done || s.ending {
		return false
	}
	if len(s.queue) >= s.h.opts.StreamQueue && ev.Signal == messages.SignalFrame {
		// The client is not keeping up: end the stream; the session keeps
		// the frames in its event log for the client to resume.
		s.queue, s.ending, s.cut = s.queue[:0], true, true
		s.kick()
		return false
	}
	s.queue = append(s.queue, ev)
	if ev.Signal.Ends() {
		s.ending = true
	}
	s.kick()
	return true
}

// Gone implements router.Receiver: the stream has ended, or its client has
// closed the connection. It looks at the connection under mu, never once
// the stream is done: a connection given back has another reader, whose
// pending read the peek would wait for.
func (s *heldStream) Gone() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done || peerGone(s.conn)
}

// look ends the stream if its client has closed the connection, and
// otherwise asks for a ping if it has been quiet for d (> 0).
func (s *heldStream) look(now time.Time, d time.Duration) {
	s.mu.Lock()
	if s.done {
		s.mu.Unlock()
		return
	}
	if peerGone(s.conn) {
		s.mu.Unlock()
		s.clientGone()
		return
	}
	defer s.mu.Unlock()
	if d > 0 && !s.writing && now.Sub(s.lastWrite) >= d {
		s.ping = true
		s.kick()
	}
}

// clientGone ends a stream whose client has gone; the session is told.
func (s *heldStream) clientGone() {
	s.mu.Lock()
	if s.done || s.writing { // a writer finishes it (its write fails)
		s.mu.Unlock()
		return
	}
	s.done = true
	s.mu.Unlock()
	s.finish(true)
}

// kick starts a writer if there is something to write and none runs.
// Called with mu held.
func (s *heldStream) kick() {
	if s.writing || s.done || (len(s.queue) == 0 && !s.ping && !s.ending) {
		return
	}
	s.writing = true
	go s.run()
}

// run writes until there is nothing left to write.
func (s *heldStream) run() {
	for {
		s.mu.Lock()
		batch, ping, ending, cut := s.queue, s.ping, s.ending, s.cut
		s.queue, s.ping = nil, false
		if len(batch) == 0 && !ping && !ending {
			s.writing = false
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()

		var end messages.StreamSignal
		s.frames, end = collect(s.frames[:0], batch)
		events := appendEvents(nil, s.frames, ping, s.h.retry)
		last := ending && end != messages.SignalFrame || ending && len(batch) == 0
		s.buf = s.format(s.buf[:0], events)
		if (last || end != messages.SignalFrame) && s.chunked && !cut {
			s.buf = append(s.buf, "0\r\n\r\n"...) // the body's end
		}
		var err error
		if len(s.buf) > 0 {
			_ = s.conn.SetWriteDeadline(time.Now().Add(s.h.opts.WriteTimeout))
			_, err = s.conn.Write(s.buf)
		}
		if obs := s.h.opts.Observer; obs != nil && err == nil {
			for range s.frames {
				obs.StreamEvent(false)
			}
		}
		if err != nil || last || end != messages.SignalFrame {
			s.finish(err != nil)
			return
		}
		s.mu.Lock()
		s.lastWrite = time.Now()
		s.mu.Unlock()
	}
}

// format frames events as the next piece of the body: one chunk over
// HTTP/1.1, as they are over HTTP/1.0. A stream the server ends (its
// session closed, a conflict, a node lost) ends its body cleanly (run
// writes the last chunk), and then the connection is given back or
// closed, as its head said (see get): a client must not see an error for
// a stream it was told is over. The stream of a client that fell behind is
// cut off, and its connection closed, so that it knows to resume.
func (s *heldStream) format(b, events []byte) []byte {
	if !s.chunked {
		return append(b, events...)
	}
	if len(events) > 0 {
		b = strconv.AppendInt(b, int64(len(events)), 16)
		b = append(b, "\r\n"...)
		b = append(b, events...)
		b = append(b, "\r\n"...)
	}
	return b
}

// finish forgets the stream and lets go of the connection: given back to
// the listener after a clean end (the body ended, the connection may be
// reused), closed otherwise (a failed write, a client gone or cut off, a
// body that ends with the connection). After a failed write the session
// is told the stream has no connection any more.
func (s *heldStream) finish(failed bool) {
	s.mu.Lock()
	clean := s.reuse && !failed && !s.cut // reuse implies HTTP/1.1: a chunked body, ended
	s.done, s.writing, s.queue = true, false, nil
	s.mu.Unlock()
	s.h.hub.remove(s)
	s.h.router.Streams().Unregister(s.sid)
	if !clean || !s.giveBack() {
		_ = s.conn.Close()
	}
	if failed {
		_ = s.h.router.Deliver(s.h.ctx, s.session, &messages.DetachStream{Stream: s.sid})
	}
	if obs := s.h.opts.Observer; obs != nil {
		obs.HTTPRequest(http.MethodGet, http.StatusOK, time.Since(s.start))
	}
}

// giveBack gives the connection, its deadlines cleared and what net/http
// had read ahead put back, to the listener the http.Server accepts from,
// and reports whether it was taken.
func (s *heldStream) giveBack() bool {
	if s.conn.SetDeadline(time.Time{}) != nil {
		return false
	}
	return s.h.opts.Listener.giveBack(s.conn, s.input)
}

// reusable reports whether the connection of r's GET stream may serve the
// client's next request after the server ends the stream, held or not:
// over plain HTTP/1.1 with a Listener to give a held connection back to,
// when the client did not ask to close and sent no body (a body left
// unread would be taken for the next request).
func (h *HTTPHandler) reusable(r *http.Request) bool {
	return h.opts.Listener != nil && r.ProtoMajor == 1 && r.ProtoAtLeast(1, 1) && r.TLS == nil &&
		!r.Close && r.ContentLength == 0 && len(r.TransferEncoding) == 0
}
