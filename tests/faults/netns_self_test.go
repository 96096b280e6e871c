//go:build linux

package faults_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// silence is how long a self-test waits to call a link silent.
const silence = time.Second

// TestNetnsLinks checks the network the namespace tests run on, with an
// echo server on each of n1's links: across a link taken down a dial
// times out and a connection open before reads nothing, without a reset
// (a black hole); the node's other link still carries; once healed, what
// was written during the fault arrives (TCP sent it again) and new
// connections go through; at the end of the test nothing of the network
// is left.
func TestNetnsLinks(t *testing.T) {
	var prefix string
	t.Run("links", func(t *testing.T) {
		nw := newNetwork(t, []string{"n1", "n2"})
		prefix = nw.prefix
		n1, n2 := nw.namespace("n1"), nw.namespace("n2")
		route := listenIn(t, n1, nw.clusterAddr("n1")+":7000")
		client := listenIn(t, n1, nw.clientAddr("n1")+":7001")

		peer := dialIn(t, n2, route) // a route from n2 to n1
		requireEcho(t, peer, "before")
		requireEcho(t, dialIn(t, "", client), "client before")

		nw.isolate("n1")
		requireSilent(t, peer, "during")
		requireDialTimesOut(t, n2, route)
		requireEcho(t, dialIn(t, "", client), "client while isolated")
		nw.heal()
		requireLine(t, peer, "during", 15*time.Second) // TCP's retransmission backs off: seconds
		requireEcho(t, dialIn(t, n2, route), "after isolate")

		nw.blackhole("n1")
		requireDialTimesOut(t, "", client)
		requireDialTimesOut(t, n2, route)
		nw.heal()
		requireEcho(t, dialIn(t, "", client), "client after black hole")
		requireEcho(t, dialIn(t, n2, route), "after black hole")
	})
	if prefix != "" {
		left, err := ownNames(prefix)
		require.NoError(t, err)
		assert.Empty(t, left, "what the network left behind")
	}
}

// TestNetnsStale checks that a test binary removes what one that is no
// longer running left: a namespace and a link named for pid 0.
func TestNetnsStale(t *testing.T) {
	requireNetns(t)
	const stale = "mcpf000000ff"
	require.NoError(t, ipAll([]string{"netns", "add", stale + "n1"}, []string{"link", "add", stale + "br", "type", "bridge"}))
	removed, err := removeStale()
	require.NoError(t, err)
	assert.Subset(t, removed, []string{stale + "n1", stale + "br"})
	left, err := ownNames(stale)
	require.NoError(t, err)
	assert.Empty(t, left)
}

// inNetns runs fn on an OS thread that has entered network namespace ns
// (the root namespace when ns is ""): sockets fn opens belong to ns. The
// thread ends with fn's goroutine, still locked, so no other goroutine
// ever runs in ns.
func inNetns(ns string, fn func() error) error {
	if ns == "" {
		return fn()
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		f, err := os.Open("/run/netns/" + ns)
		if err != nil {
			errc <- err
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- os.NewSyscallError("setns", err)
			return
		}
		errc <- fn()
	}()
	return <-errc
}

// listenIn starts an echo server (each line sent back) on addr in
// namespace ns; it stops at the end of t.
func listenIn(t *testing.T, ns, addr string) string {
	t.Helper()
	var ln net.Listener
	require.NoError(t, inNetns(ns, func() (err error) {
		ln, err = net.Listen("tcp", addr)
		return err
	}))
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []net.Conn
	)
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() { _, _ = io.Copy(c, c) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return addr
}

// dialIn connects to addr from namespace ns (the root namespace when ""),
// within silence; the connection closes at the end of t.
func dialIn(t *testing.T, ns, addr string) net.Conn {
	t.Helper()
	var c net.Conn
	require.NoError(t, inNetns(ns, func() (err error) {
		c, err = net.DialTimeout("tcp", addr, silence)
		return err
	}), "dialing %s from %q", addr, ns)
	t.Cleanup(func() { c.Close() })
	return c
}

// requireDialTimesOut checks that a dial to addr from ns times out:
// neither refused nor unreachable.
func requireDialTimesOut(t *testing.T, ns, addr string) {
	t.Helper()
	err := inNetns(ns, func() error {
		c, err := net.DialTimeout("tcp", addr, silence)
		if err == nil {
			c.Close()
		}
		return err
	})
	var ne net.Error
	require.True(t, errors.As(err, &ne) && ne.Timeout(), "a dial to %s from %q times out; got %v", addr, ns, err)
}

// requireEcho writes line on c and reads it back within silence.
func requireEcho(t *testing.T, c net.Conn, line string) {
	t.Helper()
	_, err := io.WriteString(c, line+"\n")
	require.NoError(t, err)
	requireLine(t, c, line, silence)
}

// requireSilent writes line on c and checks that nothing comes back
// within silence, and that the connection is not reset meanwhile.
func requireSilent(t *testing.T, c net.Conn, line string) {
	t.Helper()
	_, err := io.WriteString(c, line+"\n")
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(silence)))
	var b [1]byte
	_, err = c.Read(b[:])
	require.ErrorIs(t, err, os.ErrDeadlineExceeded, "nothing comes back, and no reset")
}

// requireLine reads one line from c within d and checks it is line.
func requireLine(t *testing.T, c net.Conn, line string, d time.Duration) {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(d)))
	got, err := bufio.NewReader(c).ReadString('\n') // one line in flight at a time: nothing is read past it
	require.NoError(t, err)
	assert.Equal(t, line, strings.TrimSuffix(got, "\n"))
}
