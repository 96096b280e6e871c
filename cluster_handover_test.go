package mcpactors_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/internal/access"
	"github.com/mcp-actors/mcp-actors/messages"
)

// TestHandoverHoldsARequestForAClosingSession: n1 shuts down while a
// call of its session runs. A request for the session that reaches n1
// meanwhile (through n2) is held, not refused, until the session has
// closed; n1 then releases it, and n2 takes the session over at once and
// runs the request. Both calls are answered with their results. Without
// the hold, the closing session refuses the request ("the session is
// closing"). A request n1's own client sends meanwhile gets 503: it did
// not run, and the client's retry finds a node that serves.
func TestHandoverHoldsARequestForAClosingSession(t *testing.T) {
	steps := &stepper{}
	c := startHTTPCluster(t, 3, "handover-hold", func(srv *mcpactors.Server) { steps.add(srv) }, nil)
	sid := openSession(t, c.urls[0], "{}")
	first := startCall(t, c.urls[0], sid, toolCall(1, "steps", `{"tag":"first"}`, ""))
	steps.started(t, "first")

	stopped := c.shutdown(0)
	c.awaitDraining(0)
	second := startCall(t, c.urls[1], sid, toolCall(2, "steps", `{"tag":"second"}`, ""))
	waitFor(t, "n1 holds the request", func() bool { return c.stats(0).HandoverHeld == 1 })
	ctx, cancel := context.WithTimeout(t.Context(), httpWait)
	defer cancel()
	own := send(t, ctx, c.urls[0], sid, toolCall(3, "steps", `{"tag":"own"}`, ""))
	assert.Equal(t, http.StatusServiceUnavailable, own.StatusCode, "n1's own client is refused, unrun, while n1 hands the session over")

	close(steps.of("first").finish)
	assert.Equal(t, "first done", resultText(t, first), "the running call ends on n1")
	steps.started(t, "second")
	close(steps.of("second").finish)
	assert.Equal(t, "second done", resultText(t, second), "the held call runs after the handover")
	require.NoError(t, <-stopped)
}

// TestHandoverReleasedSessionMovesAtOnce: n1 shuts down; one of its
// sessions has closed, another still runs a call, so n1 still holds its
// lease. A request for the closed session, sent through n2, is answered
// "released" by n1, and n2 takes the session over at once — while n1's
// lease still holds — and runs it. Without the release, n2 could only
// wait for n1's lease (n1 refuses: it drains), and the call fails.
func TestHandoverReleasedSessionMovesAtOnce(t *testing.T) {
	steps := &stepper{}
	c := startHTTPCluster(t, 3, "handover-release", func(srv *mcpactors.Server) { steps.add(srv) }, nil)
	closed := openSession(t, c.urls[0], "{}")
	busy := openSession(t, c.urls[0], "{}")
	running := startCall(t, c.urls[0], busy, toolCall(1, "steps", `{"tag":"running"}`, ""))
	steps.started(t, "running")

	stopped := c.shutdown(0)
	c.awaitDraining(0)
	waitFor(t, "the idle session closed on n1", func() bool { return c.servers[0].LiveSessions() == 1 })
	moved := startCall(t, c.urls[1], closed, toolCall(2, "steps", `{"tag":"moved"}`, ""))
	steps.started(t, "moved")
	require.True(t, c.nodes[0].Acting(), "n1 still holds its lease: a session is running a call")
	assert.Positive(t, c.stats(0).HandoverReleased, "n1 said the session was released")
	close(steps.of("moved").finish)
	assert.Equal(t, "moved done", resultText(t, moved), "the released session answers on another node")

	close(steps.of("running").finish)
	assert.Equal(t, "running done", resultText(t, running))
	require.NoError(t, <-stopped)
}

// shutdown shuts node i's server down (a 20 s grace) on a goroutine of
// its own, then closes the node, as `serve` does on SIGTERM; the channel
// gets Shutdown's error.
func (c *httpCluster) shutdown(i int) <-chan error {
	done := make(chan error, 1)
	go func() { // owned by the test: it reads done
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		err := c.servers[i].Shutdown(ctx)
		c.nodes[i].Close()
		done <- err
	}()
	return done
}

// awaitDraining waits until node i's relay holds the routed requests for
// its sessions (the cluster relay's Draining).
func (c *httpCluster) awaitDraining(i int) {
	c.t.Helper()
	rt, ok := access.Router(c.servers[i]).(interface{ Draining() bool })
	require.True(c.t, ok)
	waitFor(c.t, "the relay drains", rt.Draining)
}

// waitFor waits until cond (state another goroutine changes) holds, for
// httpWait at most.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	require.Eventually(t, cond, httpWait, 10*time.Millisecond, "waiting until %s", what)
}

// resultText is the text of the tools/call result that ends call c.
func resultText(t *testing.T, c *call) string {
	t.Helper()
	res := callResult(t, decoded(t, c.next()))
	require.Len(t, res.Content, 1)
	text, ok := res.Content[0].(*messages.TextContent)
	require.True(t, ok, "a text result")
	return text.Text
}
