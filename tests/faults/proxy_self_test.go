package faults_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeNode speaks the start of a NATS route handshake on a loopback
// port: it sends its INFO line to every connection, then echoes every
// line it reads and passes it on to got. The tests send it lines of the
// route protocol (RS+, RMSG and its payload), which the proxies read.
type fakeNode struct {
	name string
	ln   net.Listener
	got  chan string
	wg   sync.WaitGroup
	mu   sync.Mutex
	open []net.Conn
}

func startFakeNode(t *testing.T, name string) *fakeNode {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	f := &fakeNode{name: name, ln: ln, got: make(chan string, 64)}
	f.wg.Add(1)
	go f.accept()
	t.Cleanup(func() {
		_ = ln.Close()
		f.mu.Lock()
		for _, c := range f.open {
			_ = c.Close()
		}
		f.mu.Unlock()
		f.wg.Wait()
	})
	return f
}

func (f *fakeNode) accept() {
	defer f.wg.Done()
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.mu.Lock()
		f.open = append(f.open, c)
		f.mu.Unlock()
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			defer c.Close()
			if _, err := fmt.Fprintf(c, "INFO {\"server_id\":\"ID-%s\",\"server_name\":%q}\r\n", f.name, f.name); err != nil {
				return
			}
			r := bufio.NewReader(c)
			for {
				line, err := r.ReadString('\n')
				if err != nil {
					return
				}
				select {
				case f.got <- line:
				default:
				}
				if _, err := io.WriteString(c, line); err != nil {
					return
				}
			}
		}()
	}
}

// receives reports whether the node reads line within d (other lines may
// come first).
func (f *fakeNode) receives(line string, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case got := <-f.got:
			if got == line {
				return true
			}
		case <-timer.C:
			return false
		}
	}
}

// fakeRoute is a route connection that node from dials to node to's
// proxy, handshake done: the proxies know who dialed.
type fakeRoute struct {
	t    *testing.T
	conn net.Conn
	r    *bufio.Reader
}

// dialFake dials to's proxy as node from and does the handshake: CONNECT
// naming from's server ID, then (once to's INFO came) from's INFO, both
// echoed back.
func dialFake(t *testing.T, s *routeProxies, from, to string) *fakeRoute {
	t.Helper()
	conn, err := net.Dial("tcp", s.addr(to))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	fr := &fakeRoute{t: t, conn: conn, r: bufio.NewReader(conn)}
	fr.send(fmt.Sprintf("CONNECT {\"name\":\"ID-%s\",\"pass\":\"not logged\"}", from))
	require.Equal(t, fmt.Sprintf("INFO {\"server_id\":\"ID-%s\",\"server_name\":%q}\r\n", to, to), fr.read(time.Second))
	fr.send(fmt.Sprintf("INFO {\"server_id\":\"ID-%s\",\"server_name\":%q}", from, from))
	assert.Contains(t, fr.read(time.Second), "CONNECT ")
	assert.Contains(t, fr.read(time.Second), "INFO ")
	return fr
}

func (fr *fakeRoute) send(line string) {
	fr.t.Helper()
	_, err := io.WriteString(fr.conn, line+"\r\n")
	require.NoError(fr.t, err)
}

// read returns the next line within d, or "" and the error's text when
// none comes (a timeout: "timeout"; the proxy closed it: "closed").
func (fr *fakeRoute) read(d time.Duration) string {
	require.NoError(fr.t, fr.conn.SetReadDeadline(time.Now().Add(d)))
	line, err := fr.r.ReadString('\n')
	var ne net.Error
	switch {
	case err == nil:
		return line
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	default:
		return "closed"
	}
}

// quiet is how long a check waits to see that nothing arrives.
const quiet = 300 * time.Millisecond

// TestRouteProxyFaults drives the proxies with fake route handshakes:
// connections are tagged with who dialed whom, and each fault does what
// it says, until healed.
func TestRouteProxyFaults(t *testing.T) {
	a, b := startFakeNode(t, "a"), startFakeNode(t, "b")
	s := startRouteProxies(t, map[string]string{"a": a.ln.Addr().String(), "b": b.ln.Addr().String()})
	ab := dialFake(t, s, "a", "b")
	ba := dialFake(t, s, "b", "a")
	rc := s.count()
	assert.Equal(t, map[link]int{{"a", "b"}: 1, {"b", "a"}: 1}, rc.live, "%s", rc)
	assert.Equal(t, map[string]int{"a": 1, "b": 1}, rc.accepted)
	assert.Zero(t, rc.untagged)
	assert.Zero(t, rc.untold)

	t.Run("delay", func(t *testing.T) {
		s.delay("b", 150*time.Millisecond)
		defer s.heal()
		start := time.Now()
		ab.send("RS+ $G slow")
		require.Equal(t, "RS+ $G slow\r\n", ab.read(5*time.Second))
		assert.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond, "the delay, each way")
	})

	t.Run("one way: what reaches b is held", func(t *testing.T) {
		s.oneWay("b", true)
		defer s.heal() // also when a check fails
		ab.send("RS+ $G held")
		assert.Equal(t, "timeout", ab.read(quiet), "a's bytes do not reach b")
		ba.send("RS+ $G from-b")
		assert.Equal(t, "timeout", ba.read(quiet), "b's bytes reach a, a's echo does not reach b")
		s.heal()
		assert.Equal(t, "RS+ $G held\r\n", ab.read(5*time.Second), "held bytes go on once healed")
		assert.Equal(t, "RS+ $G from-b\r\n", ba.read(5*time.Second))
	})

	t.Run("one way: what b sends is held", func(t *testing.T) {
		s.oneWay("b", false)
		defer s.heal() // also when a check fails
		ab.send("RS+ $G to-b")
		require.True(t, b.receives("RS+ $G to-b\r\n", 5*time.Second), "a's bytes reach b")
		assert.Equal(t, "timeout", ab.read(quiet), "b's echo does not reach a")
		s.heal()
		assert.Equal(t, "RS+ $G to-b\r\n", ab.read(5*time.Second))
	})

	t.Run("black hole", func(t *testing.T) {
		s.blackhole("a")
		defer s.heal() // also when a check fails
		ab.send("RS+ $G lost-for-now")
		ba.send("RS+ $G also")
		assert.Equal(t, "timeout", ab.read(quiet))
		assert.Equal(t, "timeout", ba.read(quiet))
		assert.Equal(t, 2, len(s.count().live), "the connections stay open")
		s.heal()
		assert.Equal(t, "RS+ $G lost-for-now\r\n", ab.read(5*time.Second))
		assert.Equal(t, "RS+ $G also\r\n", ba.read(5*time.Second))
	})

	t.Run("cut", func(t *testing.T) {
		s.cut("a")
		defer s.heal() // also when a check fails
		assert.Equal(t, "closed", ab.read(5*time.Second), "open connections are closed")
		assert.Equal(t, "closed", ba.read(5*time.Second))
		// A new connection from a is closed as soon as its CONNECT names
		// it: b's INFO never reaches it.
		conn, err := net.Dial("tcp", s.addr("b"))
		require.NoError(t, err)
		defer conn.Close()
		_, err = io.WriteString(conn, "CONNECT {\"name\":\"ID-a\"}\r\n")
		require.NoError(t, err)
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
		n, err := conn.Read(make([]byte, 1))
		assert.Zero(t, n)
		assert.ErrorIs(t, err, io.EOF, "refused")

		s.heal()
		again := dialFake(t, s, "a", "b")
		again.send("RS+ $G back")
		assert.Equal(t, "RS+ $G back\r\n", again.read(5*time.Second))
	})
	rc = s.count()
	assert.Zero(t, rc.untold, "%s", rc)
	assert.Zero(t, rc.untagged, "%s", rc)
	assert.Zero(t, rc.unparsed, "%s", rc)
}

// TestRoutesCrossProxies: in a three-node cluster every route crosses
// the proxies — every pair of nodes is joined through them, and a node
// cut off at its proxies has no route left (its /readyz says so), which
// would not hold if one went around them. Healed, every node is ready
// again.
func TestRoutesCrossProxies(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	c := startCluster(t, 5*time.Second)
	rc := c.proxies.count()
	t.Logf("route connections: %s", rc)
	assert.Equal(t, []string{"n1-n2", "n1-n3", "n2-n3"}, rc.pairs(), "every pair is joined through the proxies")
	assert.Zero(t, rc.untagged)
	assert.Zero(t, rc.untold)
	assert.Zero(t, rc.unparsed, "the routes' bytes read as the route protocol")
	for l := range rc.live {
		assert.NotEqual(t, l.from, l.to, "a node routed to itself")
	}

	n3 := c.byID("n3")
	c.proxies.cut("n3")
	var code int
	var why string
	require.Eventually(t, func() bool {
		code, why = n3.readyz(t.Context())
		return code == http.StatusServiceUnavailable && strings.Contains(why, "no route")
	}, 10*time.Second, 50*time.Millisecond, "n3 keeps a route to another node while cut off at the proxies")
	t.Logf("n3 cut off: /readyz %d %s", code, why)
	for _, l := range []link{{"n1", "n3"}, {"n3", "n1"}, {"n2", "n3"}, {"n3", "n2"}} {
		assert.Zero(t, c.proxies.count().live[l], "connections %s→%s while cut", l.from, l.to)
	}

	c.proxies.heal()
	c.waitReady() // ready with one route: the others follow
	var pairs []string
	assert.Eventually(t, func() bool {
		pairs = c.proxies.count().pairs()
		return slices.Equal(pairs, []string{"n1-n2", "n1-n3", "n2-n3"})
	}, 30*time.Second, 50*time.Millisecond, "every pair is joined again: %v", &pairs)
	assert.Zero(t, c.proxies.count().unparsed, "the routes' bytes read as the route protocol")
}
