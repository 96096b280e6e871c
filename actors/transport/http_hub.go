package transport

import (
	"sync"
	"time"
)

// probeEvery bounds how long a held stream's client may be gone before the
// hub notices (it looks at each held connection at least this often).
const probeEvery = time.Second

// streamHub looks after the held streams of a handler: it pings those that
// have been quiet for the keep-alive interval, and ends those whose client
// has closed the connection. Its one goroutine runs while there are
// streams to look after: it starts with the first and stops with the last.
type streamHub struct {
	interval time.Duration // keep-alive; <= 0: no pings
	tick     time.Duration

	mu      sync.Mutex
	streams map[*heldStream]struct{}
	stop    chan struct{} // closed to end the running loop; nil when none runs
}

func newStreamHub(interval time.Duration) *streamHub {
	tick := probeEvery
	if interval > 0 {
		tick = min(interval/2, probeEvery)
	}
	return &streamHub{interval: interval, tick: tick, streams: map[*heldStream]struct{}{}}
}

func (h *streamHub) add(s *heldStream) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.streams[s] = struct{}{}
	if h.stop == nil {
		h.stop = make(chan struct{})
		go h.loop(h.stop)
	}
}

func (h *streamHub) remove(s *heldStream) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.streams, s)
	if len(h.streams) == 0 && h.stop != nil {
		close(h.stop)
		h.stop = nil
	}
}

// loop looks at every stream each tick until stopped.
func (h *streamHub) loop(stop chan struct{}) {
	t := time.NewTicker(h.tick)
	defer t.Stop()
	var due []*heldStream
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
				s.look(now, h.interval)
			}
			clear(due)
		case <-stop:
			return
		}
	}
}
