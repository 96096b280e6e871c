package session

import (
	"sync"

	"github.com/mcp-actors/mcp-actors/messages"
)

// errShuttingDown answers a request that would start a handler once the
// node has begun to shut down: sent again, it lands on another node (a
// retry runs its handler there from the journal in its requestState).
var errShuttingDown = messages.Errorf(messages.CodeInternalError,
	"internal error: this node is shutting down; send the request again")

// runGate counts the goroutines Modern.Close waits for (handler runs,
// journal spills, answered records, runs again off a mailbox) and admits
// none once Close has begun: a request that still arrives then (a retry
// forwarded by another node, say) must not add to what Close is already
// waiting on.
type runGate struct {
	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

// enter admits one goroutine; false once the gate is closed.
func (g *runGate) enter() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.wg.Add(1)
	return true
}

// leave ends what enter admitted.
func (g *runGate) leave() { g.wg.Done() }

// close admits nothing more and returns a channel closed once everything
// admitted has left.
func (g *runGate) close() <-chan struct{} {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	done := make(chan struct{})
	go func() { g.wg.Wait(); close(done) }()
	return done
}
