package mcpactors

import (
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/ants/v2"
)

// handlerGoroutines runs the sessions' handlers on goroutines that are
// reused (panjf2000/ants: a pool with no size limit, which never makes a
// caller wait). A fresh goroutine per request starts with a small stack,
// and encoding the result with encoding/json/v2 grows it once, deep in the
// call, where copying the stack means adjusting every frame
// (runtime.newstack under messages.EncodeResult in the echo profile). A
// reused goroutine keeps the stack it grew. Measured on 2026-11-29 (go
// test -bench 'EchoRoundTrip$' -benchtime 5000x -count=3 ./tests/httpbench,
// two alternating rounds, one core's worth of loopback HTTP): a tools/call
// of test_echo took 57–65 µs with the pool and 71–82 µs with a goroutine
// per handler; a 2026-07-28 one 71–78 µs against 87–101 µs.
//
// Its one rule for handlers: return with the goroutine not locked to its
// OS thread. Work that changes a thread (its namespace, its credentials)
// goes on a goroutine of its own that locks the thread and ends locked,
// which takes the thread with it (TestLockedThreadIsNotReused).
type handlerGoroutines struct {
	log *slog.Logger

	pool     atomic.Pointer[ants.Pool] // made for the first handler (a server that runs none starts no goroutine); nil once released
	mu       sync.Mutex                // orders making the pool with releasing it
	released bool                      // guarded by mu
}

// idleHandlerGoroutine is how long a goroutine with nothing to run waits
// for the next handler before it ends.
const idleHandlerGoroutine = 10 * time.Second

func newHandlerGoroutines(log *slog.Logger) *handlerGoroutines {
	return &handlerGoroutines{log: log}
}

// run runs f on an idle goroutine, or a new one when none is idle or the
// goroutines were released.
func (h *handlerGoroutines) run(f func()) {
	if p := h.get(); p == nil || p.Submit(f) != nil {
		go f()
	}
}

// get returns the pool, made on first use; nil once released.
func (h *handlerGoroutines) get() *ants.Pool {
	if p := h.pool.Load(); p != nil {
		return p
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if p := h.pool.Load(); p != nil || h.released {
		return p
	}
	p, err := ants.NewPool(-1, ants.WithNonblocking(true), ants.WithExpiryDuration(idleHandlerGoroutine),
		ants.WithLogger(antsLogger{h.log}))
	if err != nil { // only for options that are not valid
		h.log.Error("handler goroutines cannot be reused: each handler gets its own", "err", err)
		h.released = true
		return nil
	}
	h.pool.Store(p)
	return p
}

// release ends the idle goroutines, and each busy one once its handler
// returns; handlers run afterwards get goroutines of their own. Calling
// it again does nothing.
func (h *handlerGoroutines) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if p := h.pool.Swap(nil); p != nil {
		p.Release()
	}
	h.released = true
}

// antsLogger passes the pool's own messages (about a task that panicked:
// the sessions' handlers recover) to the server's log.
type antsLogger struct{ log *slog.Logger }

func (l antsLogger) Printf(format string, args ...any) {
	l.log.Warn("handler goroutines: " + fmt.Sprintf(format, args...))
}
