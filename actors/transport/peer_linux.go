//go:build linux

package transport

import (
	"net"
	"syscall"
)

// Below the platform, with the held streams (http_held.go), and leaving
// with them: net/http tells a handler that its client went away (the
// request's context), but a hijacked connection has no handler, so this
// asks the socket itself. No library offers a non-consuming liveness check
// on a net.Conn.

// peerGone reports whether the other end has closed conn, without waiting
// and without consuming data: a non-blocking MSG_PEEK read sees end of file
// (or an error) on a closed connection and EAGAIN on a live, quiet one.
func peerGone(conn net.Conn) bool {
	if c, ok := conn.(interface{ NetConn() net.Conn }); ok { // TLS
		conn = c.NetConn()
	}
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	gone := false
	var buf [1]byte
	err = raw.Read(func(fd uintptr) bool {
		n, _, rerr := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case rerr == syscall.EAGAIN || rerr == syscall.EINTR:
		case rerr != nil || n == 0:
			gone = true
		}
		return true // never wait
	})
	return gone || err != nil
}
