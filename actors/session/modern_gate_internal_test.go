package session

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunGate: once closed, the gate admits nothing, and its channel
// closes when what it admitted has left — also with goroutines still
// trying to enter (a sync.WaitGroup alone panics when Add races Wait).
func TestRunGate(t *testing.T) {
	var g runGate
	require.True(t, g.enter())
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for range 1000 {
				if g.enter() {
					g.leave()
				}
			}
		}()
	}
	close(start)
	done := g.close()
	assert.False(t, g.enter(), "closed: nothing more")
	select {
	case <-done:
		t.Fatal("done while one admitted is still in")
	default:
	}
	g.leave()
	<-done
	wg.Wait()
}
