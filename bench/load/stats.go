package main

import (
	"slices"
	"time"
)

// workerStats is what one session (or connect worker) measured. Each
// worker owns its own, so no lock is needed.
type workerStats struct {
	lat    []time.Duration // latency of every successful measured call
	okIdx  []int           // slow: indices of the successful measured calls
	errors int
}

// merge returns every worker's latencies, sorted, and the summed errors.
func merge(per []workerStats) (sorted []time.Duration, errs int) {
	for _, st := range per {
		sorted = append(sorted, st.lat...)
		errs += st.errors
	}
	slices.Sort(sorted)
	return sorted, errs
}

// pct is the p-quantile (0..1) of sorted by the nearest-rank method.
func pct(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p*float64(len(sorted))+0.5) - 1
	i = min(max(i, 0), len(sorted)-1)
	return sorted[i]
}

func us(d time.Duration) int64 { return d.Microseconds() }
