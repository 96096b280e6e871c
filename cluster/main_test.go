package cluster

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when a goroutine outlives them: every
// node, relay and NATS server a test starts must be stopped by it.
//
// Two goroutines of nats-server v2.15.2 are let go: the file store of a
// stream that the server remapped from one replica to three
// (TestChangeReplicas) can keep its flush loop, and with it the shared
// access-time ticker, running after the server has shut down. A server
// itself left running still fails the check: its other goroutines (accept
// loops, raft groups, routes) are not ignored.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreCurrent(),
		goleak.IgnoreTopFunction("github.com/nats-io/nats-server/v2/server.(*fileStore).flushStreamStateLoop"),
		goleak.IgnoreTopFunction("github.com/nats-io/nats-server/v2/server/ats.Register.func1"))
}
