package transport

import (
	"net"
	"sync"
	"time"

	"github.com/mcp-actors/mcp-actors/actors/session"
	"github.com/mcp-actors/mcp-actors/messages"
)

// connStream is a long-lived event stream (a GET) on a connection taken
// over from the HTTP server. It owns no goroutine while idle: the session
// actor queues frames with Deliver, a pooled goroutine writes them, and the
// endpoint's keep-alive hub pings it when it has been quiet. A client that
// goes away is noticed at the next write, which fails; the stream then
// tells the session to forget it (frames stay in the session's event log
// for a client that resumes).
//
//	actor ──Deliver──▶ queue ──kick──▶ pool goroutine ──Write──▶ conn
//	hub (one goroutine per endpoint) ──ping due──▶ kick
//
// When the HTTP server can take the connection back (fasthttp, HTTP/1.1),
// the body is chunked: a stream the server ends (the session closed, or
// asked the client to reconnect) ends its body and hands the connection
// back for the client's next requests, so a session's end costs its
// client no new connection. Otherwise the body ends when the connection
// closes.
type connStream struct {
	ep    *endpoint
	ref   *session.Ref
	max   int
	retry string

	mu        sync.Mutex
	conn      net.Conn       // nil until the HTTP server hands it over
	back      func(net.Conn) // gives the connection back to the HTTP server; nil: close it
	head      []byte         // the HTTP response head, written first
	queue     []messages.Frame
	spare     []messages.Frame
	writing   bool // a goroutine is writing
	closing   bool // no more frames: close once the queue is written
	cut       bool // close the connection rather than end the body (a client that fell behind)
	done      bool // the connection is closed
	ping      bool // a keep-alive comment is due
	lastWrite time.Time
	buf       []byte
	events    []byte // a chunk's content, before it is framed into buf

	watch *watch    // the close watcher's entry, or nil
	start time.Time // when the GET arrived, for the Observer
}

// sseHead is the response head of a taken-over event stream whose body
// ends when the connection closes (a chunked one has directHead).
const sseHead = "HTTP/1.1 200 OK\r\n" + sseHeaders + "Connection: close\r\n\r\n"

func newConnStream(ep *endpoint, ref *session.Ref) *connStream {
	return &connStream{
		ep:    ep,
		ref:   ref,
		max:   ep.opts.StreamQueue,
		retry: ep.retry,
		head:  []byte(sseHead),
		start: time.Now(),
	}
}

// Deliver queues f; it refuses frames once the stream is closing, and
// closes it when the client has fallen StreamQueue frames behind. Before the
// connection is handed over, frames are only queued: a replay for a GET
// with Last-Event-ID arrives then, bounded by the session's event log.
func (s *connStream) Deliver(f messages.Frame) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	if s.conn != nil && len(s.queue) >= s.max {
		s.closing, s.cut = true, true
		s.queue = s.queue[:0] // the session keeps them in its event log
		s.kick()
		return false
	}
	s.queue = append(s.queue, f)
	s.kick()
	return true
}

// Close ends the stream once what is queued has been written. When
// nothing is, and the body's end is all there is to write, it is written
// here (without waiting: the caller may be the session actor) and no
// pooled goroutine is woken for it.
func (s *connStream) Close() {
	s.mu.Lock()
	s.closing = true
	_, direct := s.conn.(tryWriter)
	if !direct || s.writing || s.done || s.ping || s.head != nil || len(s.queue) > 0 {
		s.kick()
		s.mu.Unlock()
		return
	}
	s.done = true
	conn, body := s.conn, s.back != nil && !s.cut
	s.mu.Unlock()
	s.end(conn, body, false)
}

// take is handed the connection by the HTTP server (nil when it could not
// give it), and back when the server can take it back at the end of the
// stream.
func (s *connStream) take(conn net.Conn, back func(net.Conn)) {
	if conn == nil {
		s.mu.Lock()
		s.closing, s.done = true, true
		s.mu.Unlock()
		s.ref.Send(&messages.DetachStream{Sink: s})
		return
	}
	s.mu.Lock()
	s.conn, s.back = conn, back
	if back != nil {
		s.head = []byte(directHead)
	}
	s.lastWrite = time.Now()
	teller, tells := conn.(goneTeller)
	if !tells {
		s.watch = s.ep.watcher.add(conn, s.clientGone)
	}
	// The head (and a replay queued before the hand-over) is written here,
	// on the HTTP server's goroutine, which has nothing else to do: no
	// pooled goroutine is woken for it.
	inline := !s.writing && !s.done
	if inline {
		s.writing = true
	}
	s.mu.Unlock()
	if tells {
		teller.tellGone(s.clientGone)
	}
	s.ep.hub.add(s)
	if inline {
		s.run()
	}
}

// goneTeller is a connection that tells itself when its client hangs up
// (a LoopServer's pollConn), so that no close watcher is needed for it.
type goneTeller interface {
	tellGone(gone func())
}

// clientGone is called by the close watcher (or the connection itself, a
// goneTeller) when the client has closed the connection.
func (s *connStream) clientGone() {
	s.mu.Lock()
	if s.done {
		s.mu.Unlock()
		return
	}
	s.queue, s.ping = s.queue[:0], false
	s.closing, s.cut = true, true
	if s.writing { // the writer finishes the stream
		s.mu.Unlock()
		s.ref.Send(&messages.DetachStream{Sink: s})
		return
	}
	s.done = true
	conn := s.conn
	s.mu.Unlock()
	s.finish(conn, endFailed)
}

// Gone reports whether the client has closed the connection (a new GET of
// the same session asks before it is refused with 409).
func (s *connStream) Gone() bool {
	s.mu.Lock()
	conn, done := s.conn, s.done
	s.mu.Unlock()
	if done {
		return true
	}
	return conn != nil && peerGone(conn)
}

// keepAlive asks for a ping if the stream has been quiet for d.
func (s *connStream) keepAlive(now time.Time, d time.Duration) {
	s.mu.Lock()
	if !s.done && !s.writing && now.Sub(s.lastWrite) >= d {
		s.ping = true
		s.kick()
	}
	s.mu.Unlock()
}

// kick starts a writer if there is work and none runs. Call with mu held.
func (s *connStream) kick() {
	if s.writing || s.done || s.conn == nil {
		return
	}
	if len(s.queue) == 0 && s.head == nil && !s.ping && !s.closing {
		return
	}
	s.writing = true
	s.ep.pool.Go(s.run)
}

// How a stream ends: its connection closed because a write failed (the
// session is told), closed on purpose, or its body ended (the connection
// goes back to the HTTP server when it can take it).
const (
	endFailed = iota
	endCut
	endBody
)

// run writes until there is nothing left to write.
func (s *connStream) run() {
	for {
		s.mu.Lock()
		batch, head, ping, closing, conn := s.queue, s.head, s.ping, s.closing, s.conn
		chunked, cut := s.back != nil, s.cut
		s.queue, s.spare = s.spare[:0], batch
		s.head, s.ping = nil, false
		if len(batch) == 0 && head == nil && !ping {
			s.writing = false
			if closing && !s.done {
				s.done = true
				s.mu.Unlock()
				s.end(conn, chunked && !cut, true)
				return
			}
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()

		buf, end := s.format(head, batch, ping, chunked)
		_ = conn.SetWriteDeadline(time.Now().Add(s.ep.opts.WriteTimeout))
		_, err := conn.Write(buf)
		if obs := s.ep.opts.Observer; obs != nil && err == nil {
			for range batch {
				obs.StreamEvent(false)
			}
		}
		clear(batch)
		s.mu.Lock()
		s.lastWrite = time.Now()
		if err != nil || end { // end: a resumed request stream got its response
			s.done, s.closing, s.writing = true, true, false
			s.queue = nil
			s.mu.Unlock()
			switch {
			case err != nil:
				s.finish(conn, endFailed)
			case chunked:
				s.finish(conn, endBody) // the body's end went with the response
			default:
				s.finish(conn, endCut)
			}
			return
		}
		s.mu.Unlock()
	}
}

// format puts head, the batch's events and a ping into one buffer (one
// chunk of a chunked body, followed by the body's end when the batch ends
// the stream).
func (s *connStream) format(head []byte, batch []messages.Frame, ping, chunked bool) ([]byte, bool) {
	ev, end := appendEvents(s.events[:0], batch, ping, s.retry)
	buf := appendBody(append(s.buf[:0], head...), ev, chunked, end)
	s.buf, s.events = buf, ev
	return buf, end
}

// end ends a stream whose queue is written: the body's end, when there is
// one to write, then the connection goes back to the HTTP server;
// otherwise it is closed. Without wait (Close, which may run on the
// session actor's goroutine) the end is written only as far as the socket
// takes it at once: a client whose socket will not take five bytes has
// stopped reading, and its connection is closed instead.
func (s *connStream) end(conn net.Conn, body, wait bool) {
	if !body {
		s.finish(conn, endCut)
		return
	}
	var n int
	var err error
	if w, ok := conn.(tryWriter); ok && !wait {
		n, err = w.tryWrite(bodyEndBytes)
	} else {
		_ = conn.SetWriteDeadline(time.Now().Add(s.ep.opts.WriteTimeout))
		n, err = conn.Write(bodyEndBytes)
	}
	switch {
	case err != nil:
		s.finish(conn, endFailed)
	case n < len(bodyEndBytes):
		s.finish(conn, endCut)
	default:
		s.finish(conn, endBody)
	}
}

// finish lets go of the connection: back to the HTTP server after the
// body's end, closed otherwise; after a failed write the session is told
// the stream has no connection any more.
func (s *connStream) finish(conn net.Conn, how int) {
	s.mu.Lock()
	wt, back := s.watch, s.back
	s.mu.Unlock()
	s.ep.watcher.remove(wt) // before Close: the descriptor number may be reused
	s.ep.hub.remove(s)
	if how == endBody {
		_ = conn.SetDeadline(time.Time{})
		back(conn)
	} else {
		_ = conn.Close()
	}
	if how == endFailed {
		s.ref.Send(&messages.DetachStream{Sink: s})
	}
	if obs := s.ep.opts.Observer; obs != nil {
		obs.HTTPRequest("GET", 200, time.Since(s.start))
	}
}
