// Package debugmem serves the memory probe that run-peers.sh reads in the
// idle scenario: post-GC heap and stack figures and the goroutine count, in
// addition to VmRSS from /proc. Our server serves the same JSON shape at
// /debug/mem when started with --debug.
package debugmem

import (
	json "encoding/json/v2"
	"net/http"
	"runtime"
	"runtime/debug"
)

// Handler answers GET /debug/mem with a JSON object of heap_inuse,
// heap_alloc, stack_inuse, sys, goroutines and num_gc. With ?gc=1 it first
// forces a GC and returns freed memory to the OS.
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("gc") == "1" {
			runtime.GC()
			debug.FreeOSMemory()
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		w.Header().Set("Content-Type", "application/json")
		_ = json.MarshalWrite(w, map[string]any{
			"heap_inuse":  ms.HeapInuse,
			"heap_alloc":  ms.HeapAlloc,
			"stack_inuse": ms.StackInuse,
			"sys":         ms.Sys,
			"goroutines":  runtime.NumGoroutine(),
			"num_gc":      ms.NumGC,
		})
	})
}
