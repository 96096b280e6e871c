package mcpactors

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/panjf2000/ants/v2"
)

// handlerGoroutines runs the sessions' handlers on goroutines that are
// reused (panjf2000/ants: a pool with no size limit, which never makes a
// caller wait). A fresh goroutine per request starts with a small stack,
// and encoding the result with encoding/json/v2 grows it once, deep in the
// call, where copying the stack means adjusting every frame: about a tenth
// of a tools/call's CPU in the echo benchmark (runtime.newstack under
// messages.EncodeResult). A reused goroutine keeps the stack it grew.
//
// The price is Options.FreshHandlerGoroutines' reason: a handler that
// locks its OS thread and returns without unlocking it leaves the thread
// to the handlers that run on that goroutine next.
type handlerGoroutines struct {
	pool *ants.Pool // nil: a new goroutine per handler
}

// idleHandlerGoroutine is how long a goroutine with nothing to run waits
// for the next handler before it ends.
const idleHandlerGoroutine = 10 * time.Second

func newHandlerGoroutines(fresh bool, log *slog.Logger) *handlerGoroutines {
	if fresh {
		return &handlerGoroutines{}
	}
	pool, err := ants.NewPool(-1, ants.WithNonblocking(true), ants.WithExpiryDuration(idleHandlerGoroutine),
		ants.WithLogger(antsLogger{log}))
	if err != nil { // only for options that are not valid
		panic(fmt.Sprintf("mcpactors: the handler goroutines: %v", err))
	}
	return &handlerGoroutines{pool: pool}
}

// run runs f on an idle goroutine, or a new one when none is idle or the
// pool was released.
func (h *handlerGoroutines) run(f func()) {
	if h.pool == nil || h.pool.Submit(f) != nil {
		go f()
	}
}

// release ends the idle goroutines, and each busy one once its handler
// returns.
func (h *handlerGoroutines) release() {
	if h.pool != nil {
		h.pool.Release()
	}
}

// antsLogger passes the pool's own messages (about a task that panicked:
// the sessions' handlers recover) to the server's log.
type antsLogger struct{ log *slog.Logger }

func (l antsLogger) Printf(format string, args ...any) {
	l.log.Warn("handler goroutines: " + fmt.Sprintf(format, args...))
}
