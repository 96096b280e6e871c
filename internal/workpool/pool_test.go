package workpool_test

import (
	"bytes"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/mcp-actors/mcp-actors/internal/workpool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestPoolRunsEverythingAndStops(t *testing.T) {
	p := workpool.New(4)
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[int]bool{}
	for i := range 1000 {
		wg.Add(1)
		p.Go(func() {
			defer wg.Done()
			mu.Lock()
			seen[i] = true
			mu.Unlock()
		})
	}
	wg.Wait()
	assert.Len(t, seen, 1000)
	p.Close()
	p.Close() // idempotent

	done := make(chan struct{})
	p.Go(func() { close(done) }) // after Close: a plain goroutine
	<-done
}

// TestPoolDoesNotBlockOnBusyWorkers runs more functions than the pool keeps
// idle workers, each blocked until the test has seen all of them start: Go
// must start every one at once, neither blocking on the busy workers nor
// queueing a function behind them. Once released, the pool keeps maxIdle
// workers waiting and lets the others end.
//
// It runs in a synctest bubble: the deadline fires (at once, on the fake
// clock) only when every goroutine is stuck, so a pool that blocks or
// queues fails with a message instead of hanging.
func TestPoolDoesNotBlockOnBusyWorkers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const maxIdle, n = 2, 8
		p := workpool.New(maxIdle)
		release := make(chan struct{})
		started := make(chan int, n)
		called := make(chan struct{}) // closed once every Go call has returned
		var ran sync.WaitGroup
		go func() {
			defer close(called)
			for i := range n {
				ran.Add(1)
				p.Go(func() {
					defer ran.Done()
					started <- i
					<-release
				})
			}
		}()
		deadline := time.After(time.Minute)
		for k := range n {
			select {
			case <-started:
			case <-deadline:
				close(release) // whatever did start may end
				require.FailNowf(t, "Go blocked on busy workers or queued the function",
					"%d of %d functions started, with every started one still running", k, n)
			}
		}
		<-called
		close(release)
		ran.Wait()
		synctest.Wait() // every worker has either ended or is waiting for work
		assert.Equal(t, maxIdle, workers(), "idle workers kept after the functions returned")

		p.Close()
		synctest.Wait()
		assert.Zero(t, workers(), "workers left after Close")
	})
}

// workers counts the goroutines in a pool's worker loop, idle or busy.
func workers() int {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return bytes.Count(buf[:n], []byte("workpool.(*Pool).worker("))
		}
		buf = make([]byte, 2*len(buf))
	}
}

func BenchmarkPoolGo(b *testing.B) {
	p := workpool.New(8)
	defer p.Close()
	done := make(chan struct{})
	b.ReportAllocs()
	for b.Loop() {
		p.Go(func() { done <- struct{}{} })
		<-done
	}
}

func BenchmarkPlainGo(b *testing.B) {
	done := make(chan struct{})
	b.ReportAllocs()
	for b.Loop() {
		go func() { done <- struct{}{} }()
		<-done
	}
}
