package main

import (
	"fmt"
	"os"
	"sync"
)

// errLog keeps the first few distinct error messages, with how often each
// occurred, for the report on stderr.
type errLog struct {
	mu   sync.Mutex
	max  int            // most distinct messages kept
	seen map[string]int // message -> occurrences
	keys []string       // kept messages, in order of first occurrence
}

func newErrLog(max int) *errLog { return &errLog{max: max, seen: map[string]int{}} }

// add records err; messages are cut at 300 bytes.
func (e *errLog) add(err error) {
	msg := err.Error()
	if len(msg) > 300 {
		msg = msg[:300] + "..."
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.seen[msg]; !ok && len(e.keys) < e.max {
		e.keys = append(e.keys, msg)
	}
	e.seen[msg]++
}

// print writes the kept messages to stderr as "error (xN): message".
func (e *errLog) print() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, k := range e.keys {
		fmt.Fprintf(os.Stderr, "error (x%d): %s\n", e.seen[k], k)
	}
}
