//go:build !linux

package transport

import "net"

// closeWatcher cannot watch connections on this platform: a client that
// goes away is noticed at the next write (a keep-alive at the latest).
type closeWatcher struct{}

type watch struct{}

func newCloseWatcher() *closeWatcher              { return &closeWatcher{} }
func (*closeWatcher) add(net.Conn, func()) *watch { return nil }
func (*closeWatcher) remove(*watch)               {}
func (*closeWatcher) close()                      {}
