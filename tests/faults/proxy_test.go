package faults_test

import (
	"bytes"
	json "encoding/json/v2"
	"fmt"
	"maps"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// routeProxies are the TCP proxies in front of the nodes' route ports,
// one per node: each node listens on its real route address, advertises
// its proxy (--cluster-advertise) and dials the proxies (--routes), so
// every route connection between the embedded NATS servers crosses the
// proxy of the node that accepts it.
//
//	n1 ──dials──▶ proxy(n2) ──▶ n2's route port      a connection is tagged
//	n2 ──dials──▶ proxy(n1) ──▶ n1's route port      (from: the dialer, to: the proxy's node)
//
// A proxy tells who dialed from the route handshake: the dialer's first
// line is `CONNECT {"name":"<server ID>",…}`, and every node's `INFO`
// line (sent by each side) maps server IDs to server names, which are the
// node IDs. Until a connection is tagged, the accepting side's INFO is held
// back, so that nothing a fault would stop reaches the dialer.
//
// Faults are set per link — the bytes one node sends another — and apply
// to the connections open and to new ones:
//
//	cut    connections closed, new ones closed as soon as they are tagged
//	hold   bytes held, not forwarded, TCP left open (a paused or black-holed
//	       peer); delivered in order once healed
//	delay  bytes forwarded no sooner than the delay after they were read
//	drop   the next n messages whose subject matches a pattern dropped,
//	       whole, everything else passed (dropNext, routefilter_test.go)
//
// A cut of either direction cuts the pair (a connection carries both).
// Every connection's bytes are read, each way, as the NATS route protocol
// (routefilter_test.go), whether a rule drops anything or not.
type routeProxies struct {
	logf func(format string, args ...any) // the test's log

	mu       sync.Mutex
	proxies  map[string]*routeProxy // node ID → the proxy in front of it
	faults   map[link]linkFault
	ids      map[string]string // NATS server ID → node ID, learned from INFO lines
	conns    map[*routeConn]struct{}
	changed  chan struct{} // closed and replaced whenever faults change
	closed   bool
	untold   int         // connections closed because their dialer could not be told
	rules    []*dropRule // dropNext
	unparsed int         // connection directions whose bytes stopped reading as the route protocol

	wg sync.WaitGroup // accept loops and pipes
}

// link is the direction from one node to another.
type link struct{ from, to string }

// linkFault is what happens to the bytes of one link.
type linkFault struct {
	cut   bool
	hold  bool
	delay time.Duration
}

func (f linkFault) String() string {
	switch {
	case f.cut:
		return "cut"
	case f.hold:
		return "held"
	case f.delay > 0:
		return "delayed " + f.delay.String()
	}
	return "healthy"
}

// routeProxy is the proxy in front of one node's route port.
type routeProxy struct {
	node     string
	ln       net.Listener
	target   string // the node's real route address
	accepted int    // connections accepted (under routeProxies.mu)
}

// routeConn is one connection through a proxy: from the dialing node to
// the proxy's node.
type routeConn struct {
	in, out  net.Conn
	to       string
	from     string        // "" until tagged (under routeProxies.mu)
	told     chan struct{} // closed once the dialer is known, or will be known from its INFO
	done     chan struct{} // closed when the connection is closed
	doneOnce sync.Once
	// dedicated: the connection is an account's own route (its messages
	// name no account), learned from the dialer's INFO.
	dedicated atomic.Bool
}

// sniffLimit bounds how much of a handshake a proxy reads to tag a
// connection.
const sniffLimit = 64 << 10

// startRouteProxies starts one proxy on a loopback port for each node
// (node ID → its real route address); they stop at the end of t.
func startRouteProxies(t *testing.T, targets map[string]string) *routeProxies {
	t.Helper()
	s := &routeProxies{logf: t.Logf, proxies: map[string]*routeProxy{}, faults: map[link]linkFault{},
		ids: map[string]string{}, conns: map[*routeConn]struct{}{}, changed: make(chan struct{})}
	t.Cleanup(s.close)
	for node, target := range targets {
		s.add(t, node, target)
	}
	return s
}

// add starts a proxy for node, whose real route address is target.
func (s *routeProxies) add(t *testing.T, node, target string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &routeProxy{node: node, ln: ln, target: target}
	s.mu.Lock()
	s.proxies[node] = p
	s.mu.Unlock()
	s.wg.Add(1)
	go s.accept(p)
}

// retarget makes node's proxy pass new connections to target, the
// node's new route address (it moved, behind the same name).
func (s *routeProxies) retarget(node, target string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.proxies[node].target = target
}

// addr is the address of node's proxy: what it advertises, and what the
// others dial.
func (s *routeProxies) addr(node string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proxies[node].ln.Addr().String()
}

func (s *routeProxies) accept(p *routeProxy) {
	defer s.wg.Done()
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		target := p.target
		s.mu.Unlock()
		out, err := net.DialTimeout("tcp", target, 5*time.Second)
		if err != nil {
			_ = in.Close()
			continue
		}
		c := &routeConn{in: in, out: out, to: p.node, told: make(chan struct{}), done: make(chan struct{})}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.close()
			continue
		}
		p.accepted++
		s.conns[c] = struct{}{}
		s.wg.Add(2)
		s.mu.Unlock()
		go s.dialerToNode(c)
		go s.nodeToDialer(c)
	}
}

// close closes both sides of the connection once.
func (c *routeConn) close() {
	c.doneOnce.Do(func() {
		close(c.done)
		_ = c.in.Close()
		_ = c.out.Close()
	})
}

// drop closes c and forgets it.
func (s *routeProxies) drop(c *routeConn) {
	c.close()
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// dialerToNode forwards what the dialer sends, tagging the connection
// from its handshake first.
func (s *routeProxies) dialerToNode(c *routeConn) {
	defer s.wg.Done()
	defer s.drop(c)
	var sniffed []byte
	tagging := true
	in := &routeReader{dedicated: &c.dedicated}
	buf := make([]byte, 32<<10)
	for {
		n, err := c.in.Read(buf)
		if n > 0 {
			readAt := time.Now()
			if tagging {
				sniffed = append(sniffed, buf[:n]...)
				tagging = s.tag(c, sniffed)
			}
			if b := in.feed(buf[:n], side{s, c, true}); len(b) > 0 {
				if !s.pass(c, true, readAt) {
					return
				}
				if _, werr := c.out.Write(b); werr != nil {
					return
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// nodeToDialer forwards what the node sends back, once the connection is
// told (or will be from the dialer's INFO).
func (s *routeProxies) nodeToDialer(c *routeConn) {
	defer s.wg.Done()
	defer s.drop(c)
	learning := true
	var sniffed []byte
	back := &routeReader{dedicated: &c.dedicated}
	buf := make([]byte, 32<<10)
	for {
		n, err := c.out.Read(buf)
		if n > 0 {
			readAt := time.Now()
			if learning {
				sniffed = append(sniffed, buf[:n]...)
				learning = s.learn(sniffed)
			}
			select {
			case <-c.told:
			case <-c.done:
				return
			}
			if b := back.feed(buf[:n], side{s, c, false}); len(b) > 0 {
				if !s.pass(c, false, readAt) {
					return
				}
				if _, werr := c.in.Write(b); werr != nil {
					return
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// handshake lines of the NATS route protocol.
var (
	connectLine = []byte("CONNECT ")
	infoLine    = []byte("INFO ")
	crlf        = []byte("\r\n")
)

// serverInfo is what a proxy reads of an INFO line.
type serverInfo struct {
	ID   string `json:"server_id"`
	Name string `json:"server_name"`
}

// learn reads the INFO lines among the complete lines of a handshake and
// remembers each server's name; it reports whether to read on (no INFO
// yet, within sniffLimit).
func (s *routeProxies) learn(sniffed []byte) bool {
	found := false
	for line := range bytes.Lines(sniffed) {
		if !bytes.HasSuffix(line, crlf) {
			break
		}
		if body, ok := bytes.CutPrefix(line, infoLine); ok {
			var info serverInfo
			if json.Unmarshal(bytes.TrimSpace(body), &info) == nil && info.ID != "" && info.Name != "" {
				s.mu.Lock()
				s.ids[info.ID] = info.Name
				s.mu.Unlock()
				found = true
			}
		}
	}
	return !found && len(sniffed) < sniffLimit
}

// tag reads the dialer's handshake so far: CONNECT names its server ID,
// which an INFO seen before may map to its node; else its own INFO, which
// follows once it has read the node's, names it. It reports whether to
// read on. A connection whose dialer cannot be told within sniffLimit is
// closed (and counted).
func (s *routeProxies) tag(c *routeConn, sniffed []byte) bool {
	s.learn(sniffed)
	var from string
	connected := false
	for line := range bytes.Lines(sniffed) {
		if !bytes.HasSuffix(line, crlf) {
			break
		}
		if body, ok := bytes.CutPrefix(line, connectLine); ok {
			connected = true
			var conn struct {
				Name string `json:"name"` // the dialer's server ID
			}
			if json.Unmarshal(bytes.TrimSpace(body), &conn) == nil {
				s.mu.Lock()
				from = s.ids[conn.Name]
				s.mu.Unlock()
			}
		}
		if body, ok := bytes.CutPrefix(line, infoLine); ok && connected && from == "" {
			var info serverInfo
			if json.Unmarshal(bytes.TrimSpace(body), &info) == nil {
				from = info.Name
			}
		}
	}
	switch {
	case from != "":
		s.mu.Lock()
		c.from = from
		s.mu.Unlock()
		c.tell()
		return false
	case connected:
		c.tell() // the node's INFO may go: the dialer answers it with its own
	}
	if len(sniffed) >= sniffLimit {
		s.mu.Lock()
		s.untold++
		s.mu.Unlock()
		c.close()
		return false
	}
	return true
}

// tell releases what the node sends back (called by the dialer's pipe
// only).
func (c *routeConn) tell() {
	select {
	case <-c.told:
	default:
		close(c.told)
	}
}

// pass waits until bytes read at readAt may go on — toNode: from the
// dialer to the proxy's node, else back — (held: until healed; delayed:
// until readAt plus the delay) and reports whether they may: false when
// the pair is cut or the connection closed. The bytes of a connection
// whose dialer is not known yet (its handshake) pass.
func (s *routeProxies) pass(c *routeConn, toNode bool, readAt time.Time) bool {
	for {
		s.mu.Lock()
		if c.from == "" {
			s.mu.Unlock()
			return true
		}
		l := link{c.from, c.to}
		if !toNode {
			l = link{c.to, c.from}
		}
		f := s.faults[l]
		cut := f.cut || s.faults[link{l.to, l.from}].cut
		changed := s.changed
		s.mu.Unlock()
		if cut {
			return false
		}
		if f.hold {
			select {
			case <-changed:
				continue
			case <-c.done:
				return false
			}
		}
		if wait := time.Until(readAt.Add(f.delay)); wait > 0 {
			timer := time.NewTimer(wait)
			select {
			case <-timer.C:
			case <-c.done:
				timer.Stop()
				return false
			}
		}
		return true
	}
}

// setLinks sets the fault of every link for which pick is true, closes
// the connections of pairs now cut, and wakes the held pipes.
func (s *routeProxies) setLinks(what string, f linkFault, pick func(l link) bool) {
	s.mu.Lock()
	var cut []*routeConn
	for a := range s.proxies {
		for b := range s.proxies {
			if a == b || !pick(link{a, b}) {
				continue
			}
			if f == (linkFault{}) {
				delete(s.faults, link{a, b})
			} else {
				s.faults[link{a, b}] = f
			}
		}
	}
	for c := range s.conns {
		if c.from != "" && (s.faults[link{c.from, c.to}].cut || s.faults[link{c.to, c.from}].cut) {
			cut = append(cut, c)
		}
	}
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
	for _, c := range cut {
		c.close()
	}
	s.logf("routes: %s (%s; %d connections closed)", what, f, len(cut))
}

// involving picks the links to and from node x.
func involving(x string) func(link) bool {
	return func(l link) bool { return l.from == x || l.to == x }
}

// cut isolates node x: its routes are closed and new ones refused.
func (s *routeProxies) cut(x string) {
	s.setLinks("isolate "+x, linkFault{cut: true}, involving(x))
}

// blackhole holds every byte to and from x; its TCP connections stay
// open, as with a paused peer or a black-holed network.
func (s *routeProxies) blackhole(x string) {
	s.setLinks("black-hole "+x, linkFault{hold: true}, involving(x))
}

// oneWay holds what reaches node x (inbound) or what x sends (outbound),
// and lets the other direction through.
func (s *routeProxies) oneWay(x string, inbound bool) {
	if inbound {
		s.setLinks("hold what reaches "+x, linkFault{hold: true}, func(l link) bool { return l.to == x })
	} else {
		s.setLinks("hold what "+x+" sends", linkFault{hold: true}, func(l link) bool { return l.from == x })
	}
}

// delay adds latency d to every byte to and from x.
func (s *routeProxies) delay(x string, d time.Duration) {
	s.setLinks("delay "+x, linkFault{delay: d}, involving(x))
}

// heal lifts every fault: held bytes go on, cut pairs may connect again.
func (s *routeProxies) heal() {
	s.setLinks("heal", linkFault{}, func(link) bool { return true })
}

// routeCount is a snapshot of the connections through the proxies.
type routeCount struct {
	accepted map[string]int // node → connections its proxy accepted
	live     map[link]int   // tagged connections open, by dialer and node
	untagged int            // connections open whose dialer is not known yet
	untold   int            // connections closed because their dialer could not be told
	unparsed int            // connection directions whose bytes stopped reading as the route protocol
}

// count returns what the proxies carry now.
func (s *routeProxies) count() routeCount {
	s.mu.Lock()
	defer s.mu.Unlock()
	rc := routeCount{accepted: map[string]int{}, live: map[link]int{}, untold: s.untold, unparsed: s.unparsed}
	for node, p := range s.proxies {
		rc.accepted[node] = p.accepted
	}
	for c := range s.conns {
		if c.from == "" {
			rc.untagged++
		} else {
			rc.live[link{c.from, c.to}]++
		}
	}
	return rc
}

// pairs returns the unordered pairs of nodes with a live connection, as
// "a-b" with a < b.
func (rc routeCount) pairs() []string {
	var out []string
	for l, n := range rc.live {
		if n == 0 {
			continue
		}
		a, b := min(l.from, l.to), max(l.from, l.to)
		if p := a + "-" + b; !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// close stops the proxies and waits for their goroutines.
func (s *routeProxies) close() {
	s.mu.Lock()
	s.closed = true
	conns := make([]*routeConn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	proxies := maps.Clone(s.proxies)
	s.mu.Unlock()
	for _, p := range proxies {
		_ = p.ln.Close()
	}
	for _, c := range conns {
		c.close()
	}
	s.wg.Wait()
}

func (rc routeCount) String() string {
	return fmt.Sprintf("accepted %v, live %v, untagged %d, untold %d, unparsed %d", rc.accepted, rc.live, rc.untagged, rc.untold, rc.unparsed)
}
