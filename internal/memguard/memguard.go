// Package memguard tells whether a process's memory has room for more: it
// reads what the Go runtime holds, less what the next garbage collection
// would free (runtime/metrics), against a bound, so that a node refuses
// new sessions before its memory limit rather than be killed at it.
package memguard

import (
	"fmt"
	"runtime/metrics"
	"sync"
)

// The runtime metrics read (runtime/metrics' documentation says what each
// holds).
var names = []string{
	"/memory/classes/total:bytes",         // all the runtime mapped
	"/memory/classes/heap/released:bytes", // returned to the OS
	"/memory/classes/heap/free:bytes",     // free, not returned
	"/memory/classes/heap/objects:bytes",  // live and dead objects not yet swept
	"/gc/heap/live:bytes",                 // what the last GC found live
}

// Guard checks the memory held against a bound. A nil *Guard admits
// everything.
type Guard struct {
	max uint64

	mu      sync.Mutex // guards samples, which metrics.Read fills
	samples []metrics.Sample
}

// New returns a guard that refuses while the memory held is above max
// bytes; nil (admit everything) when max is not positive.
func New(max int64) *Guard {
	if max <= 0 {
		return nil
	}
	g := &Guard{max: uint64(max), samples: make([]metrics.Sample, len(names))}
	for i, n := range names {
		g.samples[i].Name = n
	}
	return g
}

// Held returns what the runtime holds that a collection would not free, in
// bytes: all it mapped, less what it returned or holds free, less the
// objects the last collection did not find live. Goroutine stacks, the
// heap's fragmentation and the runtime's own structures count; dead
// objects do not (GOMEMLIMIT makes the collector free them as the limit
// nears).
func (g *Guard) Held() uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	metrics.Read(g.samples)
	var v [5]uint64
	for i, s := range g.samples {
		if s.Value.Kind() != metrics.KindUint64 {
			return 0 // a runtime without the metric: never refuse for it
		}
		v[i] = s.Value.Uint64()
	}
	total, released, free, objects, live := v[0], v[1], v[2], v[3], v[4]
	dead := objects - min(live, objects)
	return total - min(total, released+free+dead)
}

// Check returns nil while the memory held is at most the bound, and an
// error naming both otherwise.
func (g *Guard) Check() error {
	if g == nil {
		return nil
	}
	if held := g.Held(); held > g.max {
		return fmt.Errorf("the process holds %d MiB, past its bound of %d MiB", held>>20, g.max>>20)
	}
	return nil
}
