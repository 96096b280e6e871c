package session_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/harness"
	"github.com/mcp-actors/mcp-actors/messages"
)

// The session's timers (Limits.IdleTimeout, Limits.MaxLifetime) on a fake
// clock: each test runs in a synctest bubble, so a minute passes at once
// and synctest.Wait lets every goroutine of the server act on it before
// the test looks. (actors/transport's TestHTTPIdleTimeout and
// TestHTTPMaxLifetime check what a client sees over HTTP then: 404, the
// streams ended.)

// timerServer is a server with limits l and a tool "wait" that runs until
// release is closed.
func timerServer(t *testing.T, l mcpactors.Limits, release <-chan struct{}) *mcpactors.Server {
	srv := mcpactors.NewServer(messages.Implementation{Name: "timers", Version: "1"}, &mcpactors.Options{Limits: l})
	require.NoError(t, srv.AddTool(&messages.Tool{Name: "wait", Description: "waits for the test"},
		func(ctx context.Context, _ *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return text("done"), nil
		}))
	return srv
}

// advance moves the bubble's fake clock on by d, then lets every
// goroutine of the server act on it (synctest.Wait) before the test looks.
// Inside the bubble no real time passes.
func advance(d time.Duration) {
	<-time.After(d)
	synctest.Wait()
}

// closed reports whether c's session has ended.
func closed(c *harness.Client) bool {
	select {
	case <-c.Done():
		return true
	default:
		return false
	}
}

// TestIdleTimeout: a session that hears nothing for IdleTimeout is
// closed; a message restarts the count; a session with a request running
// is not idle, however long the request runs, and idles out once it ends.
func TestIdleTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const idle = time.Minute
		release := make(chan struct{})
		srv := timerServer(t, mcpactors.Limits{IdleTimeout: idle}, release)
		h := harness.New(t, srv)
		quiet, busy := h.Connect(), h.Connect()
		ctx := context.Background()

		advance(idle - time.Second)
		require.False(t, closed(quiet), "a second before the idle timeout")
		_, err := quiet.Call(ctx, messages.MethodPing, nil)
		require.NoError(t, err)
		require.NoError(t, busy.SendRequest(messages.IntID(1), messages.MethodCallTool, map[string]any{"name": "wait"}))

		advance(idle - time.Second)
		assert.False(t, closed(quiet), "the ping restarted the count")
		advance(2 * time.Second)
		assert.True(t, closed(quiet), "idle for the timeout: closed")

		advance(10 * idle)
		assert.False(t, closed(busy), "a session with a request running is not idle")
		close(release)
		_, err = busy.WaitResponse(ctx, messages.IntID(1), 0)
		require.NoError(t, err)
		advance(idle + time.Second)
		assert.True(t, closed(busy), "idle once its request ended")
	})
}

// TestMaxLifetime: a session is closed MaxLifetime after it started,
// busy or not, and its running handler's context ends.
func TestMaxLifetime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const life = time.Hour
		release := make(chan struct{})
		defer close(release)
		srv := timerServer(t, mcpactors.Limits{MaxLifetime: life}, release)
		c := harness.New(t, srv).Connect()
		ctx := context.Background()
		require.NoError(t, c.SendRequest(messages.IntID(1), messages.MethodCallTool, map[string]any{"name": "wait"}))

		for range 59 { // busy all along
			advance(time.Minute)
			_, err := c.Call(ctx, messages.MethodPing, nil)
			require.NoError(t, err)
		}
		assert.False(t, closed(c), "a minute before its lifetime")
		advance(time.Minute + time.Second)
		assert.True(t, closed(c), "closed at its lifetime, busy or not")
	})
}
