package transport_test

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/mcp-actors/mcp-actors/actors/transport"
)

// TestListenerAccepts checks that Accept returns the inner listener's
// connections and the ones given back, and that Close ends it all: Accept
// fails with net.ErrClosed (one waiting as well as one called after),
// GiveBack refuses, the inner listener is closed and no goroutine is left.
func TestListenerAccepts(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	l := transport.NewListener(inner)
	assert.Equal(t, inner.Addr(), l.Addr())

	dialed, err := net.Dial("tcp", inner.Addr().String())
	require.NoError(t, err)
	defer dialed.Close()
	c, err := l.Accept()
	require.NoError(t, err)
	assert.Equal(t, dialed.LocalAddr().String(), c.RemoteAddr().String(), "the inner listener's connection")
	require.NoError(t, c.Close())

	given, _ := net.Pipe()
	require.True(t, l.GiveBack(given))
	c, err = l.Accept()
	require.NoError(t, err)
	assert.Same(t, given, netConn(c), "the connection given back")

	waiting := make(chan error, 1)
	go func() {
		_, err := l.Accept()
		waiting <- err
	}()
	require.NoError(t, l.Close())
	require.ErrorIs(t, recv(t, waiting, "Accept to return"), net.ErrClosed)
	_, err = l.Accept()
	require.ErrorIs(t, err, net.ErrClosed)
	refused, _ := net.Pipe()
	assert.False(t, l.GiveBack(refused), "GiveBack after Close")
	assert.ErrorIs(t, l.Close(), net.ErrClosed, "a second Close")
	_, err = inner.Accept()
	assert.ErrorIs(t, err, net.ErrClosed, "the inner listener is closed")
}

// TestListenerClosesQuietConnections checks which connections given back
// Close closes: those not accepted, and those accepted that no request
// was read from (http.Server takes them for new, not idle, and its
// Shutdown would wait for them); not one a request was read from.
func TestListenerClosesQuietConnections(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	l := transport.NewListener(inner)
	quiet, quietPeer := net.Pipe()
	busy, busyPeer := net.Pipe()
	waiting, waitingPeer := net.Pipe()
	for _, c := range []net.Conn{quiet, busy, waiting} {
		require.True(t, l.GiveBack(c))
	}
	quietConn, err := l.Accept()
	require.NoError(t, err)
	require.Same(t, quiet, netConn(quietConn))
	busyConn, err := l.Accept()
	require.NoError(t, err)
	require.Same(t, busy, netConn(busyConn))
	go func() { _, _ = busyPeer.Write([]byte("GET")) }()
	_, err = io.ReadFull(busyConn, make([]byte, 3)) // a request comes
	require.NoError(t, err)

	closed := map[string]net.Conn{"accepted and quiet": quietPeer, "not accepted": waitingPeer}
	for _, peer := range closed {
		require.NoError(t, peer.SetReadDeadline(time.Now().Add(watchdog)))
	}
	require.NoError(t, l.Close())
	for name, peer := range closed {
		_, err = peer.Read(make([]byte, 1))
		assert.ErrorIs(t, err, io.EOF, "%s: closed", name)
	}
	go func() { _, _ = busyConn.Write([]byte("200")) }()
	_, err = io.ReadFull(busyPeer, make([]byte, 3))
	assert.NoError(t, err, "one serving a request is the server's")
	require.NoError(t, busyConn.Close())
	_ = quietConn.Close() // a second close, as http.Server would
}

// TestListenerPassesAcceptErrors checks that the inner listener's errors
// reach Accept as they are: http.Server retries temporary ones and stops
// on the others.
func TestListenerPassesAcceptErrors(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	boom := errors.New("boom")
	conn, _ := net.Pipe()
	inner := newScriptedListener(acceptResult{err: boom}, acceptResult{conn: conn})
	l := transport.NewListener(inner)

	_, err := l.Accept()
	assert.Same(t, boom, err, "the inner error, as it is")
	c, err := l.Accept()
	require.NoError(t, err)
	assert.Same(t, conn, c, "Accept goes on after an error")
	require.NoError(t, l.Close())
	_, err = l.Accept()
	assert.ErrorIs(t, err, net.ErrClosed)
}

// TestListenerLosesNoConnection gives connections back while Accept runs
// (and closes what it accepts, as http.Server does in the end) and Close
// comes: each one given back is closed exactly once, by Close if not by
// the acceptor, and each one refused is left to its giver. Run it with
// -race -count=20.
func TestListenerLosesNoConnection(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const givers, each = 4, 64
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	l := transport.NewListener(inner)

	var accepted, given, refused atomic.Int64
	someAccepted := make(chan struct{})
	acceptDone := make(chan error, 1)
	go func() {
		var once sync.Once
		for {
			c, err := l.Accept()
			if err != nil {
				acceptDone <- err
				return
			}
			netConn(c).(*trackedConn).accepted.Add(1)
			accepted.Add(1)
			_ = c.Close()
			once.Do(func() { close(someAccepted) })
		}
	}()
	var conns []*trackedConn
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range givers {
		wg.Go(func() {
			for range each {
				c := &trackedConn{}
				if l.GiveBack(c) {
					given.Add(1)
				} else {
					c.refused = true
					refused.Add(1)
				}
				mu.Lock()
				conns = append(conns, c)
				mu.Unlock()
			}
		})
	}
	<-someAccepted
	require.NoError(t, l.Close()) // while the givers give
	wg.Wait()
	require.ErrorIs(t, recv(t, acceptDone, "Accept to fail"), net.ErrClosed)

	for _, c := range conns {
		a, cl := c.accepted.Load(), c.closed.Load()
		if c.refused {
			assert.Zero(t, a+cl, "a refused connection is its giver's")
			continue
		}
		assert.LessOrEqual(t, a, int64(1), "accepted twice")
		assert.Equal(t, int64(1), cl, "closed %d times", cl)
	}
	assert.Equal(t, int64(givers*each), given.Load()+refused.Load())
	t.Logf("%d accepted, %d closed by Close, %d refused", accepted.Load(), given.Load()-accepted.Load(), refused.Load())
}

// TestGivenBackInput checks a connection a held stream gives back: what
// net/http had read ahead of the stream is read first, then the
// connection, and a connection given back again is not wrapped twice.
func TestGivenBackInput(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	l := transport.NewListener(inner)
	defer l.Close()
	c, peer := net.Pipe()
	defer peer.Close()

	require.True(t, transport.GiveBackWithInput(l, c, []byte("cdef")))
	first, err := l.Accept()
	require.NoError(t, err)
	go func() { _, _ = peer.Write([]byte("ghi")) }()
	b := make([]byte, 2)
	_, err = io.ReadFull(first, b) // net/http reads part of it, then is taken over
	require.NoError(t, err)
	assert.Equal(t, "cd", string(b))

	require.True(t, transport.GiveBackWithInput(l, first, []byte("ab")))
	again, err := l.Accept()
	require.NoError(t, err)
	assert.Same(t, c, netConn(again), "one wrapper, not two")
	b = make([]byte, 7)
	_, err = io.ReadFull(again, b)
	require.NoError(t, err)
	assert.Equal(t, "abefghi", string(b), "read ahead, left of the first, then the connection")
	require.NoError(t, peer.SetReadDeadline(time.Now().Add(watchdog)))
	require.NoError(t, again.Close())
	_, err = peer.Read(b)
	assert.ErrorIs(t, err, io.EOF, "Close closes the connection")
}

// netConn returns the connection under one given back.
func netConn(c net.Conn) net.Conn {
	if nc, ok := c.(interface{ NetConn() net.Conn }); ok {
		return nc.NetConn()
	}
	return c
}

// trackedConn counts how often it was accepted and closed.
type trackedConn struct {
	net.Conn
	refused          bool
	accepted, closed atomic.Int64
}

func (c *trackedConn) Close() error {
	c.closed.Add(1)
	return nil
}

// acceptResult is one answer of a scriptedListener.
type acceptResult struct {
	conn net.Conn
	err  error
}

// scriptedListener answers Accept from its script, then waits for Close.
type scriptedListener struct {
	script chan acceptResult
	closed chan struct{}
	once   sync.Once
}

func newScriptedListener(script ...acceptResult) *scriptedListener {
	l := &scriptedListener{script: make(chan acceptResult, len(script)), closed: make(chan struct{})}
	for _, r := range script {
		l.script <- r
	}
	return l
}

func (l *scriptedListener) Accept() (net.Conn, error) {
	select {
	case r := <-l.script:
		return r.conn, r.err
	default:
	}
	<-l.closed
	return nil, net.ErrClosed
}

func (l *scriptedListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *scriptedListener) Addr() net.Addr { return &net.TCPAddr{} }
