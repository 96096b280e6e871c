package transport

import "time"

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
