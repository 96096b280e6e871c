//go:build !linux

package transport

import "net"

// closeWatcher cannot watch connections on this platform: a client that
// goes away is noticed at the next write (a keep-alive at the latest).
type closeWatcher struct{}

func newCloseWatcher() *closeWatcher                 { return &closeWatcher{} }
func (*closeWatcher) add(*connStream, net.Conn) bool { return false }
func (*closeWatcher) remove(*connStream)             {}
