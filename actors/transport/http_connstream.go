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
type connStream struct {
	ep    *endpoint
	ref   *session.Ref
	max   int
	retry string

	mu        sync.Mutex
	conn      net.Conn // nil until the HTTP server hands it over
	head      []byte   // the HTTP response head, written first
	queue     []messages.Frame
	spare     []messages.Frame
	writing   bool // a goroutine is writing
	closing   bool // no more frames: close once the queue is written
	done      bool // the connection is closed
	ping      bool // a keep-alive comment is due
	lastWrite time.Time
	buf       []byte

	watch *watch    // the close watcher's entry, or nil
	start time.Time // when the GET arrived, for the Observer
}

// sseHead is the response head of a taken-over event stream. Its body ends
// when the connection closes.
const sseHead = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nX-Accel-Buffering: no\r\nConnection: close\r\n\r\n"

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
		s.closing = true
		s.queue = s.queue[:0] // the session keeps them in its event log
		s.kick()
		return false
	}
	s.queue = append(s.queue, f)
	s.kick()
	return true
}

// Close ends the stream once what is queued has been written.
func (s *connStream) Close() {
	s.mu.Lock()
	s.closing = true
	s.kick()
	s.mu.Unlock()
}

// take is handed the connection by the HTTP server (nil when it could not
// give it).
func (s *connStream) take(conn net.Conn) {
	if conn == nil {
		s.mu.Lock()
		s.closing, s.done = true, true
		s.mu.Unlock()
		s.ref.Send(&messages.DetachStream{Sink: s})
		return
	}
	s.mu.Lock()
	s.conn = conn
	s.lastWrite = time.Now()
	s.watch = s.ep.watcher.add(conn, s.clientGone)
	s.kick()
	s.mu.Unlock()
	s.ep.hub.add(s)
}

// clientGone is called by the close watcher when the client has closed the
// connection.
func (s *connStream) clientGone() {
	s.mu.Lock()
	if s.done {
		s.mu.Unlock()
		return
	}
	s.queue, s.ping = s.queue[:0], false
	s.closing = true
	if s.writing { // the writer finishes the stream
		s.mu.Unlock()
		s.ref.Send(&messages.DetachStream{Sink: s})
		return
	}
	s.done = true
	conn := s.conn
	s.mu.Unlock()
	s.finish(conn, true)
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

// run writes until there is nothing left to write.
func (s *connStream) run() {
	for {
		s.mu.Lock()
		batch, head, ping, closing, conn := s.queue, s.head, s.ping, s.closing, s.conn
		s.queue, s.spare = s.spare[:0], batch
		s.head, s.ping = nil, false
		if len(batch) == 0 && head == nil && !ping {
			s.writing = false
			if closing && !s.done {
				s.done = true
				s.mu.Unlock()
				s.finish(conn, false)
				return
			}
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()

		buf := append(s.buf[:0], head...)
		buf, end := appendEvents(buf, batch, s.retry)
		if ping {
			buf = append(buf, ": keepalive\n\n"...)
		}
		s.buf = buf
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
			s.finish(conn, err != nil)
			return
		}
		s.mu.Unlock()
	}
}

// finish closes the connection; after a failed write the session is told
// the stream has no connection any more.
func (s *connStream) finish(conn net.Conn, failed bool) {
	s.mu.Lock()
	wt := s.watch
	s.mu.Unlock()
	s.ep.watcher.remove(wt) // before Close: the descriptor number may be reused
	_ = conn.Close()
	s.ep.hub.remove(s)
	if failed {
		s.ref.Send(&messages.DetachStream{Sink: s})
	}
	if obs := s.ep.opts.Observer; obs != nil {
		obs.HTTPRequest("GET", 200, time.Since(s.start))
	}
}

// streamHub pings the quiet taken-over streams of an endpoint. Its one
// goroutine runs only while there are streams.
type streamHub struct {
	interval time.Duration // <= 0: no pings

	mu      sync.Mutex
	streams map[*connStream]struct{}
	stop    chan struct{} // closed to end the running loop; nil when none runs
}

func newStreamHub(interval time.Duration) *streamHub {
	return &streamHub{interval: interval, streams: map[*connStream]struct{}{}}
}

func (h *streamHub) add(s *connStream) {
	if h.interval <= 0 {
		return
	}
	h.mu.Lock()
	h.streams[s] = struct{}{}
	if h.stop == nil {
		h.stop = make(chan struct{})
		go h.loop(h.stop)
	}
	h.mu.Unlock()
}

func (h *streamHub) remove(s *connStream) {
	h.mu.Lock()
	delete(h.streams, s)
	if len(h.streams) == 0 && h.stop != nil {
		close(h.stop)
		h.stop = nil
	}
	h.mu.Unlock()
}

// loop pings quiet streams every half interval until stopped.
func (h *streamHub) loop(stop <-chan struct{}) {
	t := time.NewTicker(h.interval / 2)
	defer t.Stop()
	var due []*connStream
	for {
		select {
		case now := <-t.C:
			h.mu.Lock()
			due = due[:0]
			for s := range h.streams {
				due = append(due, s)
			}
			h.mu.Unlock()
			for _, s := range due {
				s.keepAlive(now, h.interval)
			}
			clear(due)
		case <-stop:
			return
		}
	}
}
