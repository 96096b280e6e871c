//go:build !linux

package transport

import "net/http"

// LoopServer is FastServer where there is no epoll.
type LoopServer = FastServer

// NewLoopServer returns a FastServer: the event loop needs Linux.
func NewLoopServer(host SessionHost, path string, other http.Handler, opts *HTTPOptions) *LoopServer {
	return NewFastServer(host, path, other, opts)
}
