package mcpactors

import (
	"log/slog"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHandlerGoroutinesRelease checks that handlers run before, while and
// after the goroutines are released all run, and that a released pool is
// not made again.
func TestHandlerGoroutinesRelease(t *testing.T) {
	h := newHandlerGoroutines(slog.New(slog.DiscardHandler))
	var wg sync.WaitGroup
	ran := make(chan int, 300)
	for i := range 300 {
		if i == 150 {
			h.release()
		}
		wg.Add(1)
		h.run(func() { defer wg.Done(); ran <- i })
	}
	wg.Wait()
	require.Len(t, ran, 300)
	require.Nil(t, h.get(), "released goroutines are not made again")
	h.release() // again: nothing
}
