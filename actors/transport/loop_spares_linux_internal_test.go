package transport

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPollerTrimsUnusedSpares checks that spares a sweep interval did not
// need are let go a quarter at a time down to keepSpares, that a spare
// taken meanwhile protects the rest, and that the ones let go end.
func TestPollerTrimsUnusedSpares(t *testing.T) {
	p := newTestPoller(t, nil)

	const n = 40
	ended := make(chan bool, n)
	for range n {
		r := p.newRunner()
		require.True(t, p.park(r))
		go func() { ended <- r.waitAsSpare() }()
	}

	p.trimSpares() // the first interval had no count yet: none go
	assert.Len(t, p.spares, n)

	p.trimSpares() // all 40 sat unused: a quarter of the 32 above 8 go
	assert.Len(t, p.spares, n-8)
	for range 8 {
		assert.False(t, recv(t, ended, "a spare let go to end"))
	}

	taken := <-p.spares // a handoff needs one: 31 is the low mark
	p.noteSpares()
	require.True(t, p.park(taken))
	p.trimSpares()
	assert.Len(t, p.spares, n-8-6, "a quarter of the 23 above 8, rounded up")

	for range 20 {
		p.trimSpares()
	}
	assert.Len(t, p.spares, keepSpares, "trimming stops at keepSpares")

	close(p.done)
	for range n - 8 {
		recv(t, ended, "every other spare to end")
	}
}

func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}
