//go:build !unix

package transport

import "syscall"

// tryWrite writes nothing on this platform: the flusher goroutine writes
// everything.
func tryWrite(syscall.RawConn, []byte) (int, error) { return 0, nil }
