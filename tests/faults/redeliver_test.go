package faults_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLateAnswerIsNotDeliveredAgain pauses n2 (SIGSTOP) for less than
// its lease (8 s of 20), while a client increments, through n1, the counter of a
// session n2 owns; resumes it once n1 has given up waiting for n2's
// acknowledgement and its probe; then stops n2 (SIGTERM: it gives its
// lease up), and reads the counter through n1, which takes the session
// over.
//
// n1 cannot tell whether n2 got the request: it waits for n2's lease to
// lapse, to deliver the request again after a takeover. But n2 gets it
// when it resumes, runs it and answers, before its lease lapses. The
// client increments again, through n2, so that the session's State no
// longer lists the first increment as running (what a takeover refuses to
// run again). What the client sees: the increments answered "1" and "2",
// and every read after them "2". Delivered again after the takeover — the
// nemesis found it (seed 1795937830520653730: a partition that held a
// request, then a restart of its owner) — the first increment runs twice
// and the read says "3".
func TestLateAnswerIsNotDeliveredAgain(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster and pauses a node")
	}
	// A lease that outlasts the pause (about 8 s) by far: n2 keeps it.
	const lease = 4 * faultLease
	c := startCluster(t, lease)
	n2 := c.nodes[1]
	h := &history{}
	cl := newClient(t, c, h)
	s := openSessions(t, cl, "s", 1, 1, callBound)[0] // n2's

	n2.pause()
	var calls sync.WaitGroup
	calls.Go(func() { s.call(t.Context(), 0, "test_counter", callBound) })
	t.Cleanup(calls.Wait)
	// n1 gives up waiting for an acknowledgement after 2 s (it logs it),
	// reads n2's lease (through its storage's leader, n2 perhaps: 4 s at
	// most) and probes n2 (1 s): from then on it waits for n2's lease to
	// lapse.
	_, ok := waitUntil(t.Context(), callBound, func() bool {
		return strings.Contains(c.nodes[0].stderrText(), "a routed request was not acknowledged in time")
	})
	require.True(t, ok, "n1 gives up waiting for n2's acknowledgement")
	hold(t, 5500*time.Millisecond)
	n2.resume()
	calls.Wait()
	ops := h.snapshot()
	require.Len(t, ops, 1)
	require.True(t, ops[0].ok(), "the increment n2 got late is answered: %s", ops[0])
	require.Equal(t, "1", ops[0].value)
	// Another increment, through n2 itself: the session's State no longer
	// lists the first one as running.
	s.call(t.Context(), 1, "test_counter", callBound)
	ops = h.snapshot()
	require.True(t, ops[1].ok(), "%s", ops[1])
	require.Equal(t, "2", ops[1].value)

	require.True(t, n2.signalStop())
	n2.awaitExit(time.Now().Add(stopTimeout))
	t.Log("n2 stopped: its lease is given up, and n1 may take its sessions over")
	readAt := time.Now()
	_, ok = waitUntil(t.Context(), lease+failoverSlack, func() bool {
		s.call(t.Context(), 0, "test_counter_get", callBound)
		return answeredSince(h, readAt)[s.id] >= 3
	})
	require.True(t, ok, "the session is read through n1 after n2 stopped: %s", summary(h.snapshot()))
	// n1's wait for n2's lease, to deliver the first increment again, ends
	// with n2's lease given up; it finds the increment heard of meanwhile
	// and does not deliver it (it says so).
	_, ok = waitUntil(t.Context(), callBound, func() bool {
		return strings.Contains(c.nodes[0].stderrText(), "not delivered again")
	})
	require.True(t, ok, "n1 decides not to deliver the first increment again")
	s.call(t.Context(), 0, "test_counter_get", callBound)
	for _, o := range h.snapshot()[2:] {
		if o.ok() {
			assert.Equal(t, "2", o.value, "a read after the two increments: %s", o)
		}
	}
	requireClean(t, h)
}
