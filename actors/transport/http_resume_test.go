package transport_test

import (
	json "encoding/json/v2"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/messages"
)

// TestHTTPReconnection runs test_reconnection (SEP-1699), whose handler
// closes its POST stream before answering. On 2025-11-25 the POST stream
// holds only the priming event, then closes without the result; a GET with
// that event's ID as Last-Event-ID gets the result and ends
// (transports.mdx, "Sending Messages to the Server" 6 and "Resumability
// and Redelivery" 2). A client of an earlier revision gets no priming event,
// so has nothing to resume from: its POST must carry the result.
func TestHTTPReconnection(t *testing.T) {
	f := newHTTPFixture(t, nil)

	t.Run("2025-11-25: priming, close, resume with GET", func(t *testing.T) {
		c := f.client(t)
		c.initialize(messages.Version20251125, messages.ClientCapabilities{})
		body, id := c.request(messages.MethodCallTool, toolParams("test_reconnection", nil, nil))
		r := c.post(body, nil)
		require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
		require.Equal(t, mtSSE, r.contentType())
		require.Len(t, r.events, 1, "only the priming event before the close: %+v", r.events)
		prime := r.events[0]
		checkPriming(t, prime)

		get := c.get(prime.ID)
		m, ev := get.nextMessage()
		assert.True(t, ev.HasID)
		assert.Equal(t, id, m.ID)
		assert.Contains(t, resultText(t, m), "Reconnection test completed successfully")
		assert.NoError(t, get.ended(), "the resumed stream ends after the response")

		t.Run("a Last-Event-ID the session does not hold opens the standalone stream", func(t *testing.T) {
			// Not prime.ID again: whether the answered stream is still held
			// depends on whether its response was replayed from the log
			// (then forgotten) or arrived live on the GET (then kept among
			// the last answered streams, as any stream answered live is).
			again := c.get("never-issued-0")
			c.callTool("test_toggle_tool", nil)
			m, _ := again.nextMessage()
			assert.Equal(t, messages.MethodToolsListChanged, m.Method)
		})
	})

	for _, version := range []string{messages.Version20250618, messages.Version20250326} {
		t.Run(version+": answered on the POST", func(t *testing.T) {
			c := f.client(t)
			c.initialize(version, messages.ClientCapabilities{})
			m := c.call(messages.MethodCallTool, toolParams("test_reconnection", nil, nil))
			assert.Contains(t, resultText(t, m), "Reconnection test completed successfully")
			assert.Nil(t, c.call(messages.MethodPing, nil).Error, "the session goes on")
		})
	}
}

// TestHTTPResumeAfterDisconnect checks that a request whose client dropped
// its POST stream mid-way keeps running (transports.mdx, "Sending Messages
// to the Server" 6: disconnection SHOULD NOT be interpreted as
// cancellation), and that a GET with the last event ID seen replays the
// rest of that stream and then its response — and nothing that belongs to
// another stream ("Resumability and Redelivery" 2: the server MUST NOT
// replay messages that would have been delivered on a different stream).
func TestHTTPResumeAfterDisconnect(t *testing.T) {
	for _, tc := range []struct {
		name string
		// early resumes before the handler goes on, so the rest arrives
		// live; otherwise it resumes after the handler finished, and
		// everything is replayed from the event log.
		early bool
	}{
		{"resume after the handler finished", false},
		{"resume while the handler runs", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newHTTPFixture(t, nil)
			c := f.client(t)
			c.initialize(messages.LatestVersion, messages.ClientCapabilities{})

			body, id := c.request(messages.MethodCallTool, toolParams("steps", nil, "s1"))
			s := c.stream(http.MethodPost, body, nil)
			checkPriming(t, s.nextEvent())
			p1, ev1 := s.nextMessage()
			require.Equal(t, messages.MethodProgress, p1.Method)
			require.True(t, ev1.HasID)
			// The server need not notice the hang-up: a write to the dead
			// connection fails later, or the resuming GET takes over.
			s.close()

			// Traffic on other streams while the client is away: the
			// standalone stream (no GET open) and another request's.
			c.callTool("test_toggle_tool", nil)
			logs := c.post(mustRequest(t, c, messages.MethodCallTool, toolParams("test_tool_with_logging", nil, nil)), nil)
			require.Equal(t, mtSSE, logs.contentType())

			var get *sseReader
			if tc.early {
				get = c.get(ev1.ID)
				f.stepsGate <- struct{}{}
			} else {
				f.stepsGate <- struct{}{}
				recv(t, f.stepsDone, "steps to finish")
				get = c.get(ev1.ID)
			}
			rest := get.rest()
			require.NoError(t, get.err, "the resumed stream ends cleanly")
			var progress []float64
			var answer *messages.Message
			for _, ev := range rest {
				if !ev.isMessage() {
					continue
				}
				require.True(t, ev.HasID, "a resumed event without an ID")
				m := ev.message(t)
				switch {
				case m.Method == messages.MethodProgress:
					var p messages.ProgressParams
					require.NoError(t, json.Unmarshal(m.Params, &p))
					assert.Equal(t, messages.StringID("s1"), p.ProgressToken, "progress of another request")
					progress = append(progress, p.Progress)
				case m.Kind() == messages.KindResponse:
					require.Nil(t, answer, "two responses")
					answer = m
				default:
					assert.Failf(t, "a message from another stream was replayed", "%s", ev.Data)
				}
			}
			assert.Equal(t, []float64{2, 3}, progress, "what followed the last event seen, in order")
			require.NotNil(t, answer, "the response comes last")
			assert.Equal(t, id, answer.ID)
			assert.Equal(t, "stepped", resultText(t, answer))

			// The standalone stream's backlog goes to the next plain GET.
			standalone := c.get("")
			m, _ := standalone.nextMessage()
			assert.Equal(t, messages.MethodToolsListChanged, m.Method)
		})
	}
}

// mustRequest encodes a request with c's next ID.
func mustRequest(t *testing.T, c *httpClient, method string, params any) []byte {
	t.Helper()
	b, _ := c.request(method, params)
	return b
}

// TestHTTPResumeStandalone checks that the GET stream is resumable too: a
// GET with the ID of the last event seen replays what followed it on that
// stream, including what was sent while no GET was open.
func TestHTTPResumeStandalone(t *testing.T) {
	f := newHTTPFixture(t, nil)
	c := f.client(t)
	c.initialize(messages.LatestVersion, messages.ClientCapabilities{})
	require.Nil(t, c.call(messages.MethodSubscribe, map[string]string{"uri": watchedURI}).Error)

	get := c.get("")
	c.callTool("test_toggle_tool", nil)
	_, first := get.nextMessage()
	c.callTool("test_touch_watched", nil)
	m, _ := get.nextMessage()
	require.Equal(t, messages.MethodResourceUpdated, m.Method)
	done := f.obs.count(http.MethodGet)
	get.close()
	f.obs.waitCount(t, http.MethodGet, done+1)
	c.callTool("test_toggle_tool", nil) // sent while no GET is open

	resumed := c.get(first.ID)
	want := []string{messages.MethodResourceUpdated, messages.MethodToolsListChanged}
	for _, method := range want {
		m, ev := resumed.nextMessage()
		assert.Equal(t, method, m.Method)
		assert.NotEqual(t, first.ID, ev.ID)
	}
	c.callTool("test_toggle_tool", nil)
	m, _ = resumed.nextMessage()
	assert.Equal(t, messages.MethodToolsListChanged, m.Method, "then live")
}

// TestHTTPUnknownLastEventID documents what a GET with a Last-Event-ID the
// session does not know (never issued, evicted, or from a stream already
// answered) gets: the standalone stream, as a plain GET would, instead of
// an error the reconnecting client could not act on. So it is 409 while
// another GET holds that stream.
func TestHTTPUnknownLastEventID(t *testing.T) {
	f := newHTTPFixture(t, nil)
	c := f.client(t)
	c.initialize(messages.LatestVersion, messages.ClientCapabilities{})
	for _, id := range []string{"nonsense", "999-1", "0-99999", "-", "1-x"} {
		t.Run(id, func(t *testing.T) {
			get := c.get(id)
			c.callTool("test_toggle_tool", nil)
			m, _ := get.nextMessage()
			assert.Equal(t, messages.MethodToolsListChanged, m.Method)

			r := c.do(http.MethodGet, nil, nil)
			assert.Equal(t, http.StatusConflict, r.status, "it holds the standalone stream")
			r = c.do(http.MethodGet, nil, http.Header{headerLast: {id}})
			assert.Equal(t, http.StatusConflict, r.status, "so does a second one")

			done := f.obs.count(http.MethodGet)
			get.close()
			f.obs.waitCount(t, http.MethodGet, done+1)
		})
	}
}
