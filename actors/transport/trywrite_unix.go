//go:build unix

package transport

import "syscall"

// rawWriter writes to a socket as much as it takes without waiting. It is
// reused for every write of a stream (its callback is made once), so a
// write allocates nothing; one goroutine at a time may use it.
type rawWriter struct {
	raw syscall.RawConn
	fn  func(fd uintptr) bool
	b   []byte
	n   int
	err error
}

func newRawWriter(raw syscall.RawConn) *rawWriter {
	w := &rawWriter{raw: raw}
	w.fn = w.write
	return w
}

// tryWrite writes as much of b as the socket takes without waiting.
func (w *rawWriter) tryWrite(b []byte) (int, error) {
	w.b, w.n, w.err = b, 0, nil
	err := w.raw.Write(w.fn)
	n, werr := w.n, w.err
	w.b = nil
	if err != nil {
		return n, err
	}
	return n, werr
}

func (w *rawWriter) write(fd uintptr) bool {
	for w.n < len(w.b) {
		m, e := syscall.Write(int(fd), w.b[w.n:])
		switch {
		case e == syscall.EINTR:
			continue
		case e == syscall.EAGAIN:
			return true // full: the rest is the flusher's
		case e != nil:
			w.err = e
			return true
		case m <= 0:
			return true
		}
		w.n += m
	}
	return true // never wait here
}
