package faults_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// quickAnswer bounds each call to a node left without a JetStream quorum:
// it must answer at once, if only with an error.
const quickAnswer = time.Second

// TestQuorumLoss kills -9 two of the three nodes, n2 and n3, while a
// client calls test_counter on a session of the survivor, n1, through n1;
// then starts them again (same node IDs, data dirs, route addresses).
//
// What the client sees: while n1 is without quorum, each call to its
// session is answered within a second — answered while n1 can still
// prove it owns the session, with an error once it cannot — and a new
// session is refused within the lease plus a few seconds of the loss
// (initialize: HTTP 503 with Retry-After), each attempt answered within a
// second. Once n2 and n3 are back and ready, service resumes with no
// restart of n1: the session counts on through every node, and a new
// session opens on n1. Its values never repeat or step back.
//
// On today's cluster it fails: calls to n1's session hang about 35 s
// before a 503, and initialize keeps succeeding (issue 19, point 7).
func TestQuorumLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster and kills two nodes")
	}
	c := startCluster(t, faultLease)
	n1, n2, n3 := c.nodes[0], c.nodes[1], c.nodes[2]
	h := &history{}
	cl := newClient(t, c, h)
	s := openSessions(t, cl, "s", 0, 1, callBound)[0]
	outage := startWorkload(t, loop{s: s, nodes: []int{0}, bound: quickAnswer})

	start := time.Now()
	_, ok := waitUntil(t.Context(), 30*time.Second, func() bool { return everyAnswered(h, []*session{s}, start, 3) })
	require.True(t, ok, "the session counts before the loss: %s", summary(h.snapshot()))

	n2.kill()
	n3.kill()
	lostAt := time.Now()
	t.Log("n2 and n3 killed (SIGKILL)")

	// New sessions are refused, each attempt answered within a second.
	bound := faultLease + failoverSlack
	var refused bool
	var last string
	attempt := 0
	took, _ := waitUntil(t.Context(), bound, func() bool {
		attempt++
		_, status, retryAfter, err := cl.initialize(t.Context(), "late", 0, quickAnswer)
		last = statusText(status, retryAfter, err)
		refused = status == http.StatusServiceUnavailable && retryAfter != ""
		return refused
	})
	if refused {
		t.Logf("n1 refused a new session %s after the loss: %s", took.Round(time.Millisecond), last)
	} else {
		t.Errorf("n1 did not refuse new sessions within %s of the loss (%d attempts; the last: %s)", bound, attempt, last)
	}
	code, why := n1.readyz(t.Context())
	t.Logf("n1 /readyz without quorum: %d %s", code, why)
	assert.Equal(t, http.StatusServiceUnavailable, code, "n1's /readyz without quorum")
	hold(t, time.Until(lostAt.Add(bound)))
	outage.stop()

	n2.restart()
	n3.restart()
	c.waitReady()
	backAt := time.Now()
	t.Logf("n2 and n3 restarted; every node ready %s after the loss", backAt.Sub(lostAt).Round(time.Millisecond))
	after := startWorkload(t, loop{s: s, nodes: rotation(c, 0), bound: callBound})
	_, ok = waitUntil(t.Context(), bound, func() bool { return everyAnswered(h, []*session{s}, backAt, 3) })
	assert.True(t, ok, "the session counts again within %s of the nodes' return", bound)
	fresh, err := cl.open(t.Context(), "fresh", 0, callBound)
	if assert.NoError(t, err, "a new session on n1 once quorum is back") {
		for i := range c.nodes {
			fresh.call(t.Context(), i, counterTool, callBound)
		}
	}
	after.stop()
	requireClean(t, h)
}

// statusText says what an initialize attempt got.
func statusText(status int, retryAfter string, err error) string {
	switch {
	case err != nil:
		return err.Error()
	case retryAfter != "":
		return http.StatusText(status) + ", Retry-After: " + retryAfter
	}
	return http.StatusText(status)
}
