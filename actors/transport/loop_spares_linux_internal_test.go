package transport

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPollerTrimsUnusedSpares checks that spares a sweep interval did not
// need are let go a quarter at a time down to keepIdle, that a spare
// taken meanwhile protects the rest, and that the ones let go end.
func TestPollerTrimsUnusedSpares(t *testing.T) {
	p := newTestPoller(t, nil)

	const n = 40
	ended := make(chan bool, n)
	for range n {
		r := p.newRunner()
		require.True(t, p.spares.put(r))
		go func() { ended <- r.waitAsSpare() }()
	}

	p.trimSpares() // the first interval had no count yet: none go
	assert.Equal(t, n, p.spares.len())

	p.trimSpares() // all 40 sat unused: a quarter of the 32 above 8 go
	assert.Equal(t, n-8, p.spares.len())
	for range 8 {
		assert.False(t, recv(t, ended, "a spare let go to end"))
	}

	taken, _ := p.spares.get() // a handoff needs one: 31 is the low mark
	require.True(t, p.spares.put(taken))
	p.trimSpares()
	assert.Equal(t, n-8-6, p.spares.len(), "a quarter of the 23 above 8, rounded up")

	for range 20 {
		p.trimSpares()
	}
	assert.Equal(t, keepIdle, p.spares.len(), "trimming stops at keepIdle")

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
