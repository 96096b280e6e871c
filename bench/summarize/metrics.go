package main

import (
	"math"
	"slices"
	"strconv"
)

// metric is one row of the table: a figure derived from each run.
type metric struct {
	name   string
	sum    bool // report the sum over rounds instead of the median
	derive func(r run) (float64, bool)
}

// metricsByMode lists the rows of each load mode, in table order.
var metricsByMode = map[string][]metric{
	"calls": {
		{name: "calls_per_s", derive: field("calls_per_s")},
		{name: "p50_us", derive: field("p50_us")},
		{name: "p90_us", derive: field("p90_us")},
		{name: "p99_us", derive: field("p99_us")},
		{name: "server_cpu_us_per_call", derive: field("server_cpu_us_per_call")},
		{name: "client_cpu_us_per_call", derive: field("client_cpu_us_per_call")},
		{name: "errors (sum)", sum: true, derive: sum2("errors", "warmup_errors")},
	},
	"connect": {
		{name: "connects_per_s", derive: field("connects_per_s")},
		{name: "connect p50_us", derive: field("p50_us")},
		{name: "connect p99_us", derive: field("p99_us")},
		{name: "server_cpu_us_per_connect", derive: field("server_cpu_us_per_call")},
		{name: "client_cpu_us_per_connect", derive: field("client_cpu_us_per_call")},
		{name: "errors (sum)", sum: true, derive: field("errors")},
	},
	"idle": {
		{name: "RSS bytes/session (VmRSS)", derive: rssPerSession("rss_kb")},
		{name: "RSS bytes/session after forced GC", derive: rssPerSession("rss_gc_kb")},
		{name: "heap+stack bytes/session after GC", derive: heapPerSession},
		{name: "goroutines/session", derive: perSession("gor_n", "gor_base", 1)},
		{name: "setup sessions/s (conc 50)", derive: field("connects_per_s")},
		{name: "heap retained after close, bytes/session", derive: perSession("heap_closed", "heap_base", 1)},
		{name: "errors (sum)", sum: true, derive: field("errors")},
	},
}

// field is the run's field k.
func field(k string) func(run) (float64, bool) { return func(r run) (float64, bool) { return r.f(k) } }

// sum2 is the sum of fields a and b.
func sum2(a, b string) func(run) (float64, bool) {
	return func(r run) (float64, bool) {
		x, ok1 := r.f(a)
		y, ok2 := r.f(b)
		return x + y, ok1 && ok2
	}
}

// perSession is (num - base) * scale per opened session.
func perSession(num, base string, scale float64) func(run) (float64, bool) {
	return func(r run) (float64, bool) {
		a, ok1 := r.f(num)
		b, ok2 := r.f(base)
		n, ok3 := r.f("opened")
		if !ok1 || !ok2 || !ok3 || n == 0 {
			return 0, false
		}
		return (a - b) * scale / n, true
	}
}

// rssPerSession is VmRSS bytes per opened session above the baseline, from
// the kB field k.
func rssPerSession(k string) func(run) (float64, bool) { return perSession(k, "rss_base_kb", 1024) }

// heapPerSession is post-GC heap plus stacks per opened session above the
// baseline.
func heapPerSession(r run) (float64, bool) {
	h1, ok1 := sum2("heap_gc", "stack_n")(r)
	h0, ok2 := sum2("heap_base", "stack_base")(r)
	n, ok3 := r.f("opened")
	if !ok1 || !ok2 || !ok3 || n == 0 {
		return 0, false
	}
	return (h1 - h0) / n, true
}

// median of xs; NaN when empty.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// fmtNum prints x with 3 significant digits or so: integers from 100, one
// decimal from 10, two below; NaN is "n/a".
func fmtNum(x float64) string {
	switch {
	case math.IsNaN(x):
		return "n/a"
	case math.Abs(x) >= 100:
		return strconv.FormatFloat(math.Round(x), 'f', 0, 64)
	case math.Abs(x) >= 10:
		return strconv.FormatFloat(x, 'f', 1, 64)
	default:
		return strconv.FormatFloat(x, 'f', 2, 64)
	}
}

// fmtRatio prints a ratio with two decimals.
func fmtRatio(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }
