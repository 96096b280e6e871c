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

const watchedURI = "test://watched-resource"

// TestHTTPGetStandaloneStream checks the GET stream (transports.mdx,
// "Listening for Messages from the Server"): it is an event stream;
// server-wide notifications (tools list_changed, resources/updated) arrive
// there and not on the POST that caused them (which is answered with plain
// JSON); a second GET while one is open gets 409; once the first has
// closed, a new GET gets the stream.
func TestHTTPGetStandaloneStream(t *testing.T) {
	f := newHTTPFixture(t, nil)
	c := f.client(t)
	c.initialize(messages.LatestVersion, messages.ClientCapabilities{})
	require.Nil(t, c.call(messages.MethodSubscribe, map[string]string{"uri": watchedURI}).Error)

	get := c.get("")
	for _, tc := range []struct {
		tool, method string
	}{
		{"test_toggle_tool", messages.MethodToolsListChanged},
		{"test_touch_watched", messages.MethodResourceUpdated},
		{"test_toggle_tool", messages.MethodToolsListChanged},
	} {
		body, id := c.request(messages.MethodCallTool, toolParams(tc.tool, nil, nil))
		r := c.post(body, nil)
		require.Equal(t, mtJSON, r.contentType(), "%s: the POST carries only its response", tc.tool)
		resultText(t, r.response(t, id))

		m, ev := get.nextMessage()
		assert.Equal(t, tc.method, m.Method)
		assert.True(t, ev.HasID, "a GET event has an ID (for Last-Event-ID)")
		if tc.method == messages.MethodResourceUpdated {
			assert.JSONEq(t, `{"uri":"`+watchedURI+`"}`, string(m.Params))
		}
	}

	t.Run("a second GET while one is open: 409", func(t *testing.T) {
		r := c.do(http.MethodGet, nil, nil)
		assert.Equal(t, http.StatusConflict, r.status, "body: %s", r.body)
		assert.Equal(t, mtJSON, r.contentType())
	})

	t.Run("after the first closes, a new GET gets the stream", func(t *testing.T) {
		done := f.obs.count(http.MethodGet)
		get.close()
		f.obs.waitCount(t, http.MethodGet, done+1) // the server saw it go
		again := c.get("")
		c.callTool("test_toggle_tool", nil)
		m, _ := again.nextMessage()
		assert.Equal(t, messages.MethodToolsListChanged, m.Method)
	})

	t.Run("Accept without text/event-stream: 406", func(t *testing.T) {
		r := c.do(http.MethodGet, nil, http.Header{"Accept": {mtJSON}})
		assert.Equal(t, http.StatusNotAcceptable, r.status)
	})

	t.Run("other methods: 405", func(t *testing.T) {
		r := c.do(http.MethodPut, []byte(`{}`), nil)
		assert.Equal(t, http.StatusMethodNotAllowed, r.status)
		assert.NotEmpty(t, r.header.Get("Allow"))
	})
}

// TestHTTPGetKeepAlive checks that an idle GET stream carries SSE comments
// at the configured interval, so proxies do not drop it.
func TestHTTPGetKeepAlive(t *testing.T) {
	const interval = 50 * time.Millisecond
	f := newHTTPFixture(t, &httpSetup{HTTP: transport.HTTPOptions{KeepAlive: interval}})
	c := f.client(t)
	c.initialize(messages.LatestVersion, messages.ClientCapabilities{})
	get := c.get("")
	start := time.Now()
	// On 2025-11-25 the stream opens with a priming event: an ID to resume
	// from (transports.mdx, "Listening for Messages from the Server" 4).
	ev, ok := get.next(watchdog)
	require.True(t, ok, "the stream ended")
	assert.True(t, ev.HasID && ev.Data == "" && !ev.comment, "a priming event first, got %+v", ev)
	for i := range 3 {
		ev, ok := get.next(watchdog)
		require.True(t, ok, "the stream ended")
		require.True(t, ev.comment, "comment %d: got %+v", i, ev)
		assert.Equal(t, "keepalive", ev.Comment)
	}
	elapsed := time.Since(start)
	// The ticker starts as the stream does, just before our clock.
	assert.GreaterOrEqual(t, elapsed, interval, "pings come at the interval, not back to back")
	assert.Less(t, elapsed, 5*time.Second, "pings come at the configured interval, not the 25 s default")
	// Pings do not get in the way of messages.
	c.callTool("test_toggle_tool", nil)
	m, _ := get.nextMessage()
	assert.Equal(t, messages.MethodToolsListChanged, m.Method)
}

// TestHTTPNoMessageOnTwoStreams checks that every message goes on exactly
// one stream (transports.mdx, "Multiple Connections" 2): a request's logs
// and response on its POST stream, list_changed on the GET stream, and
// nothing on both.
func TestHTTPNoMessageOnTwoStreams(t *testing.T) {
	f := newHTTPFixture(t, nil)
	c := f.client(t)
	c.initialize(messages.LatestVersion, messages.ClientCapabilities{})
	get := c.get("")

	seen := map[string]string{} // event data → stream
	ids := map[string]string{}  // event ID → stream
	see := func(stream string, events []sseEvent) {
		t.Helper()
		for _, ev := range events {
			if ev.HasID {
				// "Resumability and Redelivery" 1: IDs are unique across
				// all the session's streams.
				if other, dup := ids[ev.ID]; dup {
					assert.Failf(t, "an event ID on two events", "%s on %s and %s", ev.ID, other, stream)
				}
				ids[ev.ID] = stream
			}
			if !ev.isMessage() {
				continue
			}
			if other, dup := seen[ev.Data]; dup {
				assert.Failf(t, "a message on two streams", "%s on %s and %s", ev.Data, other, stream)
			}
			seen[ev.Data] = stream
		}
	}

	// Logs from a request while a GET is open go on the request's stream.
	body, id := c.request(messages.MethodCallTool, toolParams("test_tool_with_logging", nil, nil))
	r := c.post(body, nil)
	require.Equal(t, mtSSE, r.contentType())
	resultText(t, r.response(t, id))
	see("POST", r.events)
	for _, m := range r.messages(t)[:3] {
		assert.Equal(t, messages.MethodLogMessage, m.Method)
	}
	// A toggle's list_changed goes on the GET stream; had any log gone
	// there too, it would come first.
	toggle, toggleID := c.request(messages.MethodCallTool, toolParams("test_toggle_tool", nil, nil))
	tr := c.post(toggle, nil)
	resultText(t, tr.response(t, toggleID))
	require.Equal(t, mtJSON, tr.contentType(), "the toggle's POST carries only its response")
	m, ev := get.nextMessage()
	require.Equal(t, messages.MethodToolsListChanged, m.Method, "the GET stream got %s first", ev.Data)
	see("GET", []sseEvent{ev})
	assert.NotContains(t, string(tr.body), messages.MethodToolsListChanged)
}
