//go:build !unix

package transport

import "syscall"

// rawWriter writes nothing on this platform: the flusher goroutine writes
// everything.
type rawWriter struct{}

func newRawWriter(syscall.RawConn) *rawWriter { return &rawWriter{} }

func (*rawWriter) tryWrite([]byte) (int, error) { return 0, nil }
