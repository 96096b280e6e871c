//go:build unix

package transport

import "syscall"

// tryWrite writes as much of b as the socket takes without waiting.
func tryWrite(raw syscall.RawConn, b []byte) (int, error) {
	n := 0
	var werr error
	err := raw.Write(func(fd uintptr) bool {
		for n < len(b) {
			m, e := syscall.Write(int(fd), b[n:])
			switch {
			case e == syscall.EINTR:
				continue
			case e == syscall.EAGAIN:
				return true // full: the rest is the flusher's
			case e != nil:
				werr = e
				return true
			case m <= 0:
				return true
			}
			n += m
		}
		return true // never wait here
	})
	if err != nil {
		return n, err
	}
	return n, werr
}
