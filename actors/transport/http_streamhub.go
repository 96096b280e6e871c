package transport

import (
	"sync"
	"time"
)

// streamHub pings the quiet taken-over streams of an endpoint. Its one
// goroutine starts with the first stream and stops at a tick that finds
// none (so that sessions opened and closed one after another do not start
// one each), or at close.
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
	h.mu.Unlock()
}

// close stops the goroutine.
func (h *streamHub) close() {
	h.mu.Lock()
	if h.stop != nil {
		close(h.stop)
		h.stop = nil
	}
	h.mu.Unlock()
}

// loop pings quiet streams every half interval until stopped, or until a
// tick finds no stream.
func (h *streamHub) loop(stop chan struct{}) {
	t := time.NewTicker(h.interval / 2)
	defer t.Stop()
	var due []*connStream
	for {
		select {
		case now := <-t.C:
			h.mu.Lock()
			if len(h.streams) == 0 {
				if h.stop == stop {
					h.stop = nil // the next add starts a new loop
				}
				h.mu.Unlock()
				return
			}
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
