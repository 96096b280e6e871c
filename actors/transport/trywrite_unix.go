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
	w.n, w.err = writeSome(int(fd), w.b)
	return true // never wait here
}

// writeSome writes as much of b to the non-blocking socket fd as it takes.
func writeSome(fd int, b []byte) (n int, err error) {
	for n < len(b) {
		m, e := syscall.Write(fd, b[n:])
		switch {
		case e == syscall.EINTR:
			continue
		case e == syscall.EAGAIN:
			return n, nil // full: the rest is the flusher's
		case e != nil:
			return n, e
		case m <= 0:
			return n, syscall.EIO // a socket that takes nothing and says nothing
		}
		n += m
	}
	return n, nil
}
