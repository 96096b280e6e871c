package workpool_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
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

func TestPoolDoesNotBlockOnBusyWorkers(t *testing.T) {
	p := workpool.New(1)
	defer p.Close()
	release := make(chan struct{})
	started := make(chan struct{}, 3)
	for range 3 {
		p.Go(func() { started <- struct{}{}; <-release })
	}
	for range 3 {
		<-started // all three run at once although one worker may idle
	}
	close(release)
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
