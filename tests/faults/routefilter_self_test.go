package faults_test

import (
	"bytes"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeJudge drops the next left messages whose subject matches pattern
// (and whose payload it picks), as a dropRule does, for a routeReader
// alone.
type fakeJudge struct {
	pattern string
	left    int
	payload func([]byte) bool
	dropped []string // the dropped messages' subjects and payloads
	errs    []error
}

func (j *fakeJudge) picks(subject string) bool {
	return j.left > 0 && subjectMatches(j.pattern, subject)
}

func (j *fakeJudge) drops(m routeMsg, payload []byte) bool {
	if !j.picks(m.subject) || (j.payload != nil && !j.payload(payload)) {
		return false
	}
	j.left--
	j.dropped = append(j.dropped, m.subject+" "+string(payload))
	return true
}

func (j *fakeJudge) unreadable(err error) { j.errs = append(j.errs, err) }

// TestRouteReader feeds route protocol to the proxies' reader — whole, a
// byte at a time, and split in two at every place — and checks what it
// passes and drops.
func TestRouteReader(t *testing.T) {
	const (
		headers  = "NATS/1.0\r\nMcp-Session: n1.x\r\n\r\n" // 31 bytes, with CRLFs inside
		controls = "INFO {\"server_id\":\"A\"}\r\nCONNECT {\"name\":\"A\"}\r\nPING\r\nPONG\r\nRS+ $G a.b\r\nRS- $G a.b\r\n" +
			"LS+ $G c q 1\r\nLS- $G c\r\n+OK\r\n-ERR 'x'\r\nping\r\n"
	)
	for _, tc := range []struct {
		name     string
		pattern  string
		n        int
		payload  func([]byte) bool
		in       string
		out      string   // what passes
		dropped  []string // subject and payload of each dropped message
		unparsed bool     // the bytes stop reading as the protocol: all passes
	}{
		{name: "control lines pass", pattern: ">", n: 9, in: controls, out: controls},
		{name: "an RMSG dropped", pattern: "a.b", n: 1,
			in:      "RMSG $G a.b 5\r\nhello\r\nPING\r\nRMSG $G a.c 2\r\nhi\r\n",
			out:     "PING\r\nRMSG $G a.c 2\r\nhi\r\n",
			dropped: []string{"a.b hello"}},
		{name: "only the next n", pattern: "a.*", n: 1,
			in:      "RMSG $G a.b 1\r\n1\r\nRMSG $G a.b 1\r\n2\r\n",
			out:     "RMSG $G a.b 1\r\n2\r\n",
			dropped: []string{"a.b 1"}},
		{name: "replies and queues", pattern: "a.>", n: 3,
			in:      "RMSG $G a.b _INBOX.1 2\r\nhi\r\nRMSG $G a.b.c + _INBOX.2 q1 q2 2\r\nho\r\nRMSG $G a.d | q1 0\r\n\r\nRMSG $G z 1\r\nz\r\n",
			out:     "RMSG $G z 1\r\nz\r\n",
			dropped: []string{"a.b hi", "a.b.c ho", "a.d "}},
		{name: "an HMSG whose headers hold CRLFs", pattern: "mcpx.mcp.node.n1.session", n: 1,
			in:      "HMSG $G mcpx.mcp.node.n1.session mcpx.mcp.node.n2.async.7 31 33\r\n" + headers + "{}\r\nPONG\r\n",
			out:     "PONG\r\n",
			dropped: []string{"mcpx.mcp.node.n1.session " + headers + "{}"}},
		{name: "the payload picks", pattern: "s", n: 1, payload: func(p []byte) bool { return bytes.Contains(p, []byte(`"result"`)) },
			in:      "RMSG $G s 12\r\n{\"method\":1}\r\nRMSG $G s 12\r\n{\"result\":1}\r\nRMSG $G s 12\r\n{\"result\":2}\r\n",
			out:     "RMSG $G s 12\r\n{\"method\":1}\r\nRMSG $G s 12\r\n{\"result\":2}\r\n",
			dropped: []string{`s {"result":1}`}},
		{name: "an account's own route names no account", pattern: "a.b", n: 2,
			in:      "INFO {\"server_id\":\"A\",\"route_account\":\"$SYS\"}\r\nRMSG a.b 2\r\nhi\r\nHMSG a.b r 0 2\r\nho\r\n",
			out:     "INFO {\"server_id\":\"A\",\"route_account\":\"$SYS\"}\r\n",
			dropped: []string{"a.b hi", "a.b ho"}},
		{name: "an LMSG", pattern: "a.b", n: 1,
			in:      "LMSG c1 $G a.b + r q 0 2\r\nhi\r\nPING\r\n",
			out:     "PING\r\n",
			dropped: []string{"a.b hi"}},
		{name: "tabs and bare LF", pattern: "a.b", n: 1,
			in:      "RMSG\t$G  a.b\t2\nhi\r\nPING\n",
			out:     "PING\n",
			dropped: []string{"a.b hi"}},
		{name: "an unknown operation", pattern: "a.b", n: 1,
			in: "PING\r\nGARBAGE\r\nRMSG $G a.b 2\r\nhi\r\n", unparsed: true},
		{name: "a payload without its CRLF", pattern: "x", n: 1,
			in: "RMSG $G a.b 1\r\nhi\r\nRMSG $G x 1\r\n1\r\n", unparsed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.out
			if tc.unparsed {
				want = tc.in
			}
			in := []byte(tc.in)
			splits := [][]int{{len(in)}} // chunk ends
			var single []int
			for i := 1; i <= len(in); i++ {
				single = append(single, i)
				splits = append(splits, []int{i, len(in)})
			}
			splits = append(splits, single)
			for _, ends := range splits {
				j := &fakeJudge{pattern: tc.pattern, left: tc.n, payload: tc.payload}
				r := &routeReader{dedicated: new(atomic.Bool)}
				var got []byte
				prev := 0
				for _, end := range ends {
					got = append(got, r.feed(in[prev:end], j)...)
					prev = end
				}
				require.Equal(t, want, string(got), "chunks ending at %v", ends)
				if tc.unparsed {
					require.Len(t, j.errs, 1, "chunks ending at %v", ends)
					continue
				}
				require.Empty(t, j.errs, "chunks ending at %v", ends)
				require.Equal(t, tc.dropped, j.dropped, "chunks ending at %v", ends)
			}
		})
	}
}

// TestRouteProxyDrop: a drop rule drops, whole, the next messages one
// fake node sends another on a matching subject, whichever of their
// connections carries them, and lets the rest through.
func TestRouteProxyDrop(t *testing.T) {
	a, b := startFakeNode(t, "a"), startFakeNode(t, "b")
	s := startRouteProxies(t, map[string]string{"a": a.ln.Addr().String(), "b": b.ln.Addr().String()})
	ab := dialFake(t, s, "a", "b")
	ba := dialFake(t, s, "b", "a")

	// a→b on the connection a dialed: from the dialer to the proxy's node.
	d := s.dropNext("a", "b", "x.*", 1, nil)
	ab.send("RMSG $G x.1 3\r\none")
	ab.send("RMSG $G y.1 3\r\ntwo")
	assert.Equal(t, "RMSG $G y.1 3\r\n", ab.read(5*time.Second), "the next message passes, whole")
	assert.Equal(t, "two\r\n", ab.read(5*time.Second))
	require.Len(t, d.dropped(), 1)
	assert.Equal(t, "x.1", d.dropped()[0].msg.subject)

	// a→b on the connection b dialed: b's message reaches a; a's echo is
	// dropped on its way back.
	d = s.dropNext("a", "b", "x.*", 1, nil)
	ba.send("RMSG $G x.2 5\r\nthree")
	require.True(t, a.receives("three\r\n", 5*time.Second), "b→a is not a→b")
	assert.Equal(t, "timeout", ba.read(quiet), "a's echo is dropped")
	ba.send("RMSG $G x.3 4\r\nfour")
	assert.Equal(t, "RMSG $G x.3 4\r\n", ba.read(5*time.Second), "the rule lapsed after one")
	assert.Equal(t, "four\r\n", ba.read(5*time.Second))
	require.Len(t, d.dropped(), 1)
	assert.Equal(t, "x.2", d.dropped()[0].msg.subject)
	assert.Zero(t, s.count().unparsed, "%s", s.count())
}
