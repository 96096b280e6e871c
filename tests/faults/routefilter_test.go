package faults_test

import (
	"bytes"
	json "encoding/json/v2"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// The route proxies read the NATS route protocol that crosses them, so
// that a test can drop chosen messages — the next n that one node sends
// another whose subject matches a pattern (and, optionally, whose payload
// the test picks) — and count what was dropped. Every other byte passes
// untouched and in order.
//
// The grammar, as nats-server v2.15.2 reads it from a route
// (server/parser.go; the arguments in server/route.go,
// processRoutedMsgArgs, processRoutedHeaderMsgArgs and
// processRoutedOriginClusterMsgArgs; written by client.go,
// msgHeaderForRouteOrLeaf):
//
//	RMSG <account> <subject> [<reply>] <size>\r\n<payload>\r\n
//	RMSG <account> <subject> + <reply> <queue>… <size>\r\n…       queue subscribers, a reply
//	RMSG <account> <subject> | <queue>… <size>\r\n…               queue subscribers, no reply
//	HMSG <account> <subject> [<reply> | + <reply> <queue>… | | <queue>…] <hdr size> <total size>\r\n<headers+payload>\r\n
//	LMSG <origin> <account> <subject> … <hdr size> <total size>\r\n…  from a leaf node's cluster: headers always
//
// On a route of its own for one account (pinned, as $SYS is: the
// dialer's INFO names it in route_account) messages leave the account
// out. Every other operation is a control line and nothing more: INFO,
// CONNECT, PING, PONG, RS+, RS-, LS+, LS-, A+, A-, +OK, -ERR. Operations
// are case-insensitive, arguments are separated by spaces or tabs, a line
// ends at \n (a \r before it is dropped), and a payload is followed by
// exactly \r\n. Bytes that do not read so — a compressed route, say —
// stop the reading: from then on the connection's bytes in that direction
// pass as they come, and the proxies count it (routeCount.unparsed).

// maxControlLine bounds a control line the filter keeps whole (an INFO
// line lists the cluster's route URLs: a few KB).
const maxControlLine = 1 << 20

// routeMsg is the head of a routed message.
type routeMsg struct {
	op      string // RMSG, HMSG or LMSG
	account string // "" on an account's own route
	subject string
	reply   string
	hdr     int // header bytes (HMSG, LMSG)
	size    int // payload bytes, headers included
}

func (m routeMsg) String() string {
	s := fmt.Sprintf("%s %s", m.op, m.subject)
	if m.reply != "" {
		s += " reply " + m.reply
	}
	return fmt.Sprintf("%s (%d bytes)", s, m.size)
}

// judge decides, for one direction of one connection, which messages the
// filter drops.
type judge interface {
	// picks reports whether a rule may drop a message with this subject:
	// the filter then keeps the message whole until drops decides.
	picks(subject string) bool
	// drops decides on a whole message and counts it when dropped.
	drops(m routeMsg, payload []byte) bool
	// unreadable notes that the bytes stopped making sense.
	unreadable(err error)
}

// routeReader follows the bytes one side of a route connection sends
// (one goroutine: the pipe's).
type routeReader struct {
	dedicated *atomic.Bool // the connection is an account's own (shared by both directions)

	line []byte   // the control line so far
	msg  routeMsg // the message whose payload is passing
	body int      // its payload and trailing CRLF, in bytes
	rest int      // bytes of it still to come
	held []byte   // it, kept whole while a rule decides (nil when it passes as it comes)
	out  []byte   // what feed returns, reused
	err  error    // why the bytes stopped making sense: all passes from then on
}

// feed reads the next bytes of the connection and returns those to
// forward; the result is valid until the next call.
func (r *routeReader) feed(in []byte, j judge) []byte {
	if r.err != nil {
		return in
	}
	r.out = r.out[:0]
	for len(in) > 0 && r.err == nil {
		if r.rest > 0 {
			k := min(r.rest, len(in))
			r.payload(in[:k], j)
			in = in[k:]
			continue
		}
		i := bytes.IndexByte(in, '\n')
		if i < 0 {
			r.line = append(r.line, in...)
			in = nil
			if len(r.line) > maxControlLine {
				r.fail(fmt.Errorf("a control line over %d bytes", maxControlLine), j)
			}
			continue
		}
		r.line = append(r.line, in[:i+1]...)
		in = in[i+1:]
		r.control(j)
	}
	if r.err != nil {
		r.out = append(r.out, in...) // the rest of this read passes as it came
	}
	return r.out
}

// payload takes the next bytes of the current message's payload and CRLF.
func (r *routeReader) payload(chunk []byte, j judge) {
	start := r.body - r.rest // chunk[0]'s offset in the body
	for k, want := range []byte("\r\n") {
		if p := r.body - 2 + k - start; p >= 0 && p < len(chunk) && chunk[p] != want {
			r.fail(fmt.Errorf("%s: the payload is not followed by CRLF", r.msg), j)
			r.out = append(r.out, chunk...)
			return
		}
	}
	r.rest -= len(chunk)
	if r.held != nil {
		r.held = append(r.held, chunk...)
	} else {
		r.out = append(r.out, chunk...)
	}
	if r.rest > 0 {
		return
	}
	if r.held != nil {
		payload := r.held[len(r.held)-r.body : len(r.held)-2]
		if !j.drops(r.msg, payload) {
			r.out = append(r.out, r.held...)
		}
	}
	r.held = nil
}

// control reads one complete control line.
func (r *routeReader) control(j judge) {
	line := r.line
	r.line = nil
	text := strings.TrimSuffix(strings.TrimSuffix(string(line), "\n"), "\r")
	fields := strings.FieldsFunc(text, func(c rune) bool { return c == ' ' || c == '\t' })
	if len(fields) == 0 {
		r.fail(errors.New("an empty control line"), j)
		r.out = append(r.out, line...)
		return
	}
	op := strings.ToUpper(fields[0])
	switch op {
	case "RMSG", "HMSG", "LMSG":
		m, err := parseRouteMsg(op, fields[1:], r.dedicated.Load())
		if err != nil {
			r.fail(fmt.Errorf("%q: %w", text, err), j)
			r.out = append(r.out, line...)
			return
		}
		r.msg, r.body, r.rest = m, m.size+2, m.size+2
		if j.picks(m.subject) {
			r.held = append(make([]byte, 0, len(line)+r.body), line...)
		} else {
			r.out = append(r.out, line...)
		}
	case "INFO":
		var info struct {
			RouteAccount string `json:"route_account"`
		}
		if json.Unmarshal([]byte(strings.TrimSpace(text[len(fields[0]):])), &info) == nil && info.RouteAccount != "" {
			r.dedicated.Store(true)
		}
		r.out = append(r.out, line...)
	case "CONNECT", "PING", "PONG", "RS+", "RS-", "LS+", "LS-", "A+", "A-", "+OK", "-ERR":
		r.out = append(r.out, line...)
	default:
		r.fail(fmt.Errorf("an unknown operation %q", op), j)
		r.out = append(r.out, line...)
	}
}

// fail stops the reading: what was kept passes, and so will the rest.
func (r *routeReader) fail(err error, j judge) {
	r.err = err
	r.out = append(r.out, r.line...)
	r.out = append(r.out, r.held...)
	r.line, r.held = nil, nil
	j.unreadable(err)
}

// parseRouteMsg reads the arguments of a routed message (op: RMSG, HMSG
// or LMSG); dedicated: the route is an account's own, and the account is
// left out.
func parseRouteMsg(op string, args []string, dedicated bool) (routeMsg, error) {
	m := routeMsg{op: op}
	take := func() (string, bool) {
		if len(args) == 0 {
			return "", false
		}
		a := args[0]
		args = args[1:]
		return a, true
	}
	if op == "LMSG" {
		if _, ok := take(); !ok { // the origin cluster
			return m, errors.New("no origin")
		}
	}
	if !dedicated {
		var ok bool
		if m.account, ok = take(); !ok {
			return m, errors.New("no account")
		}
	}
	var ok bool
	if m.subject, ok = take(); !ok {
		return m, errors.New("no subject")
	}
	sizes := 1
	if op != "RMSG" {
		sizes = 2
	}
	if len(args) < sizes {
		return m, errors.New("no size")
	}
	middle, sz := args[:len(args)-sizes], args[len(args)-sizes:]
	switch {
	case len(middle) == 1:
		m.reply = middle[0]
	case len(middle) > 1 && middle[0] == "+":
		m.reply = middle[1] // then the queues
	case len(middle) > 1 && middle[0] != "|":
		return m, fmt.Errorf("a reply indicator %q", middle[0])
	}
	var err error
	if m.size, err = strconv.Atoi(sz[len(sz)-1]); err != nil || m.size < 0 {
		return m, fmt.Errorf("a size %q", sz[len(sz)-1])
	}
	if sizes == 2 {
		if m.hdr, err = strconv.Atoi(sz[0]); err != nil || m.hdr < 0 || m.hdr > m.size {
			return m, fmt.Errorf("a header size %q of %d", sz[0], m.size)
		}
	}
	return m, nil
}

// subjectMatches reports whether subject matches pattern, a NATS subject
// whose tokens may be * (any one token) or, last, > (one or more).
func subjectMatches(pattern, subject string) bool {
	ps, ss := strings.Split(pattern, "."), strings.Split(subject, ".")
	for i, p := range ps {
		switch {
		case p == ">" && i == len(ps)-1:
			return len(ss) > i
		case i >= len(ss):
			return false
		case p != "*" && p != ss[i]:
			return false
		}
	}
	return len(ps) == len(ss)
}

// dropRule drops the next messages of one link whose subject matches its
// pattern (and whose payload it picks), and keeps what it dropped. Its
// fields are guarded by its proxies' mutex.
type dropRule struct {
	s       *routeProxies
	link    link
	pattern string
	payload func([]byte) bool // nil: any payload
	left    int               // messages still to drop
	gone    []droppedMsg
}

// droppedMsg is a message a rule dropped.
type droppedMsg struct {
	at  time.Time
	msg routeMsg
}

// dropped returns what the rule dropped so far.
func (d *dropRule) dropped() []droppedMsg {
	d.s.mu.Lock()
	defer d.s.mu.Unlock()
	return append([]droppedMsg(nil), d.gone...)
}

// dropNext drops the next n messages that node from sends node to whose
// subject matches pattern (NATS wildcards) and, unless payload is nil,
// whose payload it picks (it is called with the proxies' mutex held). The
// rule counts what it dropped; it lapses once it dropped n.
func (s *routeProxies) dropNext(from, to, pattern string, n int, payload func([]byte) bool) *dropRule {
	d := &dropRule{s: s, link: link{from, to}, pattern: pattern, payload: payload, left: n}
	s.mu.Lock()
	s.rules = append(s.rules, d)
	s.mu.Unlock()
	s.logf("routes: drop the next %d messages %s→%s on %s", n, from, to, pattern)
	return d
}

// side is one direction of a route connection as its filter sees it:
// toNode, from the dialer to the proxy's node, else back.
type side struct {
	s      *routeProxies
	c      *routeConn
	toNode bool
}

// linkLocked is the link whose bytes the side carries, once the
// connection is tagged (under s.mu).
func (d side) linkLocked() (link, bool) {
	if d.c.from == "" {
		return link{}, false
	}
	if d.toNode {
		return link{d.c.from, d.c.to}, true
	}
	return link{d.c.to, d.c.from}, true
}

func (d side) picks(subject string) bool {
	d.s.mu.Lock()
	defer d.s.mu.Unlock()
	l, ok := d.linkLocked()
	if !ok {
		return false
	}
	for _, r := range d.s.rules {
		if r.left > 0 && r.link == l && subjectMatches(r.pattern, subject) {
			return true
		}
	}
	return false
}

func (d side) drops(m routeMsg, payload []byte) bool {
	d.s.mu.Lock()
	l, ok := d.linkLocked()
	var hit *dropRule
	for _, r := range d.s.rules {
		if ok && r.left > 0 && r.link == l && subjectMatches(r.pattern, m.subject) && (r.payload == nil || r.payload(payload)) {
			hit = r
			break
		}
	}
	if hit != nil {
		hit.left--
		hit.gone = append(hit.gone, droppedMsg{at: time.Now(), msg: m})
	}
	d.s.mu.Unlock()
	if hit != nil {
		d.s.logf("routes: dropped %s→%s %s", l.from, l.to, m)
	}
	return hit != nil
}

func (d side) unreadable(err error) {
	d.s.mu.Lock()
	d.s.unparsed++
	l, _ := d.linkLocked()
	d.s.mu.Unlock()
	d.s.logf("routes: %s→%s no longer read as the route protocol, passed as they come: %v", l.from, l.to, err)
}
