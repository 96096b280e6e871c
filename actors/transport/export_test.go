package transport

import (
	"net"
	"time"
)

// SetHoldAfter sets how long a GET stream stays quiet before it is held,
// until restore is called.
func SetHoldAfter(d time.Duration) (restore func()) {
	old := holdAfter
	holdAfter = d
	return func() { holdAfter = old }
}

// Held returns how many GET streams h holds.
func Held(h *HTTPHandler) int {
	h.hub.mu.Lock()
	defer h.hub.mu.Unlock()
	return len(h.hub.streams)
}

// GiveBackWithInput gives c back to l with input to be read first, as a
// held stream gives its connection back.
func GiveBackWithInput(l *Listener, c net.Conn, input []byte) bool { return l.giveBack(c, input) }
