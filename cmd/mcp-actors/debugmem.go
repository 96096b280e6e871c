package main

import (
	json "encoding/json/v2"
	"net/http"
	"runtime"
	"runtime/debug"
)

// debugMem answers GET /debug/mem with heap and goroutine figures, in the
// shape the peer benchmark (bench/) reads. ?gc=1 forces a GC and
// returns freed memory to the OS first.
func debugMem() http.Handler {
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
