//go:build linux

package transport

import (
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// loopbackPair returns both ends of a TCP connection on loopback.
func loopbackPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	client, err = net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	server, err = ln.Accept()
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Close(); _ = server.Close() })
	return client, server
}

func (w *closeWatcher) running() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.run != nil
}

// TestCloseWatcherOutlivesItsLastWatch checks the watcher's goroutine: it
// tells of a hang-up, stays for the next watch after the last one is
// removed (one goroutine for sessions opened one after another), stops by
// itself once idle, and stops at close.
func TestCloseWatcherOutlivesItsLastWatch(t *testing.T) {
	w := newCloseWatcher()
	defer w.close()
	client, server := loopbackPair(t)

	gone := make(chan struct{})
	wt := w.add(server, func() { close(gone) })
	require.NotNil(t, wt)
	require.NoError(t, client.Close())
	select {
	case <-gone:
	case <-time.After(10 * time.Second):
		t.Fatal("the hang-up was not reported")
	}

	_, server2 := loopbackPair(t)
	wt2 := w.add(server2, func() {})
	require.NotNil(t, wt2)
	w.remove(wt2)
	require.True(t, w.running(), "the goroutine stays for the next watch")

	require.Eventually(t, func() bool { return !w.running() }, 10*time.Second, 20*time.Millisecond,
		"an idle watcher stops its goroutine")

	_, server3 := loopbackPair(t)
	require.NotNil(t, w.add(server3, func() {}), "a later watch starts a new one")
	require.True(t, w.running())
	w.close()
	require.False(t, w.running())
	w.remove(wt2) // after close: nothing to do, no panic
}
