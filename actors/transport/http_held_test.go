package transport_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/actors/transport"
	"github.com/mcp-actors/mcp-actors/messages"
)

// TestHeldGETStream checks a GET stream the server has taken over from
// net/http (held: no goroutine waits on it): events still arrive, quiet
// stretches carry keep-alive comments, a client that hangs up is noticed
// without a write, and the session's end cuts the stream off.
func TestHeldGETStream(t *testing.T) {
	t.Cleanup(transport.SetHoldAfter(0))
	const interval = 40 * time.Millisecond
	f := newHTTPFixture(t, &httpSetup{HTTP: transport.HTTPOptions{KeepAlive: interval}})
	c := f.client(t)
	c.initialize(messages.LatestVersion, messages.ClientCapabilities{})
	get := c.get("")
	require.Eventually(t, func() bool { return transport.Held(f.h) == 1 }, watchdog, time.Millisecond, "the stream is held")

	c.callTool("test_toggle_tool", nil)
	m, _ := get.nextMessage()
	assert.Equal(t, messages.MethodToolsListChanged, m.Method, "events reach a held stream")
	for {
		ev, ok := get.next(watchdog)
		require.True(t, ok, "the stream ended")
		if ev.comment {
			break // the hub pinged the quiet stream
		}
	}

	t.Run("a client that hangs up is noticed", func(t *testing.T) {
		done := f.obs.count(http.MethodGet)
		get.close()
		f.obs.waitCount(t, http.MethodGet, done+1)
		assert.Zero(t, transport.Held(f.h))
	})

	t.Run("the session's end cuts it off", func(t *testing.T) {
		again := c.get("")
		require.Eventually(t, func() bool { return transport.Held(f.h) == 1 }, watchdog, time.Millisecond)
		require.Equal(t, http.StatusNoContent, c.do(http.MethodDelete, nil, nil).status)
		assert.NoError(t, again.endedWithSession())
		// The stream is forgotten just after its last write.
		assert.Eventually(t, func() bool { return transport.Held(f.h) == 0 }, watchdog, time.Millisecond)
	})
}
