package transport_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/actors/router"
	"github.com/mcp-actors/mcp-actors/actors/transport"
	"github.com/mcp-actors/mcp-actors/messages"
)

// refusedInitialize posts an initialize through c and asserts the refusal:
// 503 with a positive Retry-After, a body saying why, no session ID.
func refusedInitialize(t *testing.T, c *httpClient, why string) {
	t.Helper()
	body, _ := c.request(messages.MethodInitialize, initParams(messages.LatestVersion, messages.ClientCapabilities{}))
	r := c.post(body, nil)
	require.Equal(t, http.StatusServiceUnavailable, r.status, "body: %s", r.body)
	assert.Contains(t, string(r.body), why)
	secs, err := strconv.Atoi(r.header.Get(headerRetry))
	require.NoError(t, err, "Retry-After %q", r.header.Get(headerRetry))
	assert.Positive(t, secs)
	assert.Empty(t, r.header.Get(transport.HeaderSessionID))
}

// TestHTTPMemoryFull: with Options.MaxHeldMemory below the live heap,
// initialize gets 503 with Retry-After and a message saying the node's
// memory is full (not "too many sessions"), and leaves no session behind;
// with a bound above it, initialize opens sessions.
func TestHTTPMemoryFull(t *testing.T) {
	full := newHTTPFixture(t, &httpSetup{Server: mcpactors.Options{MaxHeldMemory: 1}})
	runtime.GC() // the live heap is the last GC's
	refusedInitialize(t, full.client(t), "memory is near its limit")
	assert.Zero(t, full.srv.LiveSessions())

	roomy := newHTTPFixture(t, &httpSetup{Server: mcpactors.Options{MaxHeldMemory: 1 << 40}})
	roomy.client(t).initialize(messages.LatestVersion, messages.ClientCapabilities{})
	assert.Equal(t, 1, roomy.srv.LiveSessions())
}

// TestHTTPMaxSessions checks that initialize past MaxSessions gets 503 with
// Retry-After (RFC 9110 §15.6.4), and that a session ending makes room.
func TestHTTPMaxSessions(t *testing.T) {
	f := newHTTPFixture(t, &httpSetup{Server: mcpactors.Options{MaxSessions: 2}})
	a := f.client(t)
	a.initialize(messages.LatestVersion, messages.ClientCapabilities{})
	f.client(t).initialize(messages.LatestVersion, messages.ClientCapabilities{})

	c := f.client(t)
	refusedInitialize(t, c, "too many sessions")
	assert.Equal(t, 2, f.srv.LiveSessions(), "the refused initialize left no session behind")

	require.Equal(t, http.StatusNoContent, a.do(http.MethodDelete, nil, nil).status)
	c.initialize(messages.LatestVersion, messages.ClientCapabilities{})
}

// TestHTTPIdleTimeout checks Limits.IdleTimeout over HTTP: a
// session that hears nothing for that long is closed, and its ID is then
// unknown (404, transports.mdx "Session Management" 3); a session with a
// request running is not closed.
func TestHTTPIdleTimeout(t *testing.T) {
	const idle = 200 * time.Millisecond
	f := newHTTPFixture(t, &httpSetup{Server: mcpactors.Options{Limits: mcpactors.Limits{IdleTimeout: idle}}})

	busy := f.client(t)
	busyRef := f.ref(t, busy.initialize(messages.LatestVersion, messages.ClientCapabilities{}))
	gateBody, gateID := busy.request(messages.MethodCallTool, toolParams("gate", nil, nil))
	gate := busy.openAsync(http.MethodPost, gateBody, nil)
	recv(t, f.gateStarted, "gate to run") // the busy session's last message

	idler := f.client(t)
	idleRef := f.ref(t, idler.initialize(messages.LatestVersion, messages.ClientCapabilities{}))
	recv(t, idleRef.Done(), "the idle session to time out")
	r := idler.post(mustRequest(t, idler, messages.MethodPing, nil), nil)
	assert.Equal(t, http.StatusNotFound, r.status, "body: %s", r.body)
	assert.Equal(t, http.StatusNotFound, idler.do(http.MethodGet, nil, nil).status)

	// The busy session has been silent longer than the idle one, but its
	// request is running.
	assert.False(t, busyRef.Closed(), "a session with a running request is not idle")
	f.gate <- struct{}{}
	assert.Equal(t, "opened", resultText(t, gate.read().response(t, gateID)))
	assert.Nil(t, busy.call(messages.MethodPing, nil).Error)

	t.Run("once its request is over, the busy session idles out too", func(t *testing.T) {
		recv(t, busyRef.Done(), "the busy session to time out once idle")
		assert.Equal(t, http.StatusNotFound, busy.post(mustRequest(t, busy, messages.MethodPing, nil), nil).status)
	})
}

// TestHTTPMaxLifetime checks Limits.MaxLifetime over HTTP: the
// session is closed when its time is up, busy or not; its open streams end
// and its ID is then unknown (404).
func TestHTTPMaxLifetime(t *testing.T) {
	f := newHTTPFixture(t, &httpSetup{Server: mcpactors.Options{Limits: mcpactors.Limits{MaxLifetime: 300 * time.Millisecond}}})
	c := f.client(t)
	ref := f.ref(t, c.initialize(messages.LatestVersion, messages.ClientCapabilities{}))
	get := c.get("")
	body, id := c.request(messages.MethodCallTool, toolParams("steps", nil, "life"))
	s := c.stream(http.MethodPost, body, nil)
	checkPriming(t, s.nextEvent())
	s.nextMessage() // progress 1; steps now waits

	recv(t, ref.Done(), "the session to reach its lifetime")
	for _, m := range messagesOf(t, s.rest()) {
		assert.NotEqual(t, id, m.ID, "no response from a closed session")
	}
	assert.NoError(t, get.endedWithSession(), "the GET stream ends")
	r := c.post(mustRequest(t, c, messages.MethodPing, nil), nil)
	assert.Equal(t, http.StatusNotFound, r.status, "body: %s", r.body)
}

// TestHTTPLongRequestOutlivesWriteTimeout checks that WriteTimeout bounds
// each write, not the life of a response: a request that runs longer than
// it is answered, on a JSON answer and on an event stream.
func TestHTTPLongRequestOutlivesWriteTimeout(t *testing.T) {
	const writeTimeout = 200 * time.Millisecond
	f := newHTTPFixture(t, &httpSetup{HTTP: transport.HTTPOptions{WriteTimeout: writeTimeout}})
	c := f.client(t)
	c.initialize(messages.LatestVersion, messages.ClientCapabilities{})
	seconds := (3 * writeTimeout).Seconds()

	for _, tc := range []struct {
		name  string
		token any
		ctype string
	}{
		{"JSON", nil, mtJSON},
		{"SSE", "long", mtSSE},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body, id := c.request(messages.MethodCallTool, toolParams("test_slow", map[string]any{"seconds": seconds}, tc.token))
			r := c.post(body, nil)
			require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
			assert.Equal(t, tc.ctype, r.contentType())
			assert.Equal(t, "done", resultText(t, r.response(t, id)))
		})
	}
}

// TestHTTPSlowReaderLosesItsStream checks StreamQueue: a GET client that
// stops reading while the server pushes events does not make the server
// buffer them without bound. Once the socket's buffers and StreamQueue
// frames are full, the server drops that connection (the client's stream
// ends, far short of what was pushed), and the session goes on serving;
// what was not delivered waits in the event log for the next GET.
func TestHTTPSlowReaderLosesItsStream(t *testing.T) {
	const (
		queue  = 8
		pushed = 400      // events pushed; the connection must be dropped long before
		size   = 32 << 10 // bytes of each event
	)
	f := newHTTPFixture(t, &httpSetup{HTTP: transport.HTTPOptions{StreamQueue: queue, WriteTimeout: 300 * time.Millisecond}})
	c := f.client(t)
	c.initialize(messages.LatestVersion, messages.ClientCapabilities{})
	bigURI := "test://big/" + strings.Repeat("x", size)
	require.Nil(t, c.call(messages.MethodSubscribe, map[string]string{"uri": bigURI}).Error)

	gets := f.obs.count(http.MethodGet)
	stalled := c.open(http.MethodGet, nil, nil) // never read until the server gave up
	require.Equal(t, http.StatusOK, stalled.StatusCode)
	for i := range pushed {
		f.srv.NotifyResourceUpdated(bigURI)
		if i%16 == 15 {
			// Pace the pushes to the session: the ping is answered after
			// the notifications before it were handled.
			require.Nil(t, c.call(messages.MethodPing, nil).Error, "the session serves while its GET stalls")
		}
	}
	f.obs.waitCount(t, http.MethodGet, gets+1) // the server dropped the stalled stream

	// Now read what the connection still held: the stream ends, short of
	// what was pushed.
	got := make(chan int, 1)
	go func() {
		b, _ := io.ReadAll(stalled.Body) // ends with EOF or a reset: either way, the end
		got <- strings.Count(string(b), "notifications/resources/updated")
	}()
	n := recv(t, got, "the stalled stream to end")
	assert.Less(t, n, pushed, "the server buffered every event for a client that did not read")
	t.Logf("the stalled client got %d of %d events of %d KiB", n, pushed, size>>10)

	assert.Nil(t, c.call(messages.MethodPing, nil).Error, "the session goes on")
	again := c.get("")
	m, _ := again.nextMessage()
	assert.Equal(t, messages.MethodResourceUpdated, m.Method, "undelivered events wait for the next GET")
}

// The "flood" tool's reports: far more than a stalled client's socket
// buffers and the server's bound on what it holds for a POST stream
// (StreamQueue frames).
const (
	floodCount = 600
	floodSize  = 32 << 10
)

// TestHTTPSlowReaderOnAPostStream checks a POST event stream whose client
// stops reading: the handler is never held up by it (its reports do not
// wait for the network), the server holds a bounded amount for that
// client and then ends or drops the stream, and the session goes on
// serving.
func TestHTTPSlowReaderOnAPostStream(t *testing.T) {
	f := newHTTPFixture(t, &httpSetup{HTTP: transport.HTTPOptions{WriteTimeout: 300 * time.Millisecond}})
	c := f.client(t)
	c.initialize(messages.LatestVersion, messages.ClientCapabilities{})

	body, _ := c.request(messages.MethodCallTool, toolParams("flood", nil, "flood"))
	stalled := c.open(http.MethodPost, body, nil) // not read until the handler is done
	require.Equal(t, http.StatusOK, stalled.StatusCode)
	require.Equal(t, mtSSE, strings.TrimSpace(strings.Split(stalled.Header.Get("Content-Type"), ";")[0]))
	recv(t, f.floodDone, "the handler to send every report without waiting for the client")
	assert.Nil(t, c.call(messages.MethodPing, nil).Error, "the session serves while a stream stalls")

	got := make(chan int, 1)
	go func() {
		b, _ := io.ReadAll(stalled.Body) // ends with EOF or a reset: either way, the end
		got <- strings.Count(string(b), messages.MethodProgress)
	}()
	n := recv(t, got, "the stalled stream to end")
	assert.Less(t, n, floodCount, "the server held every report for a client that did not read")
	t.Logf("the stalled client got %d of %d reports of %d KiB", n, floodCount, floodSize>>10)
	assert.Nil(t, c.call(messages.MethodPing, nil).Error, "the session goes on")
}

// TestHTTPGracefulShutdown checks Server.Shutdown with the handler
// draining: a running call gets to finish within the deadline and its
// client receives the response, while a new initialize gets 503.
func TestHTTPGracefulShutdown(t *testing.T) {
	f := newHTTPFixture(t, nil)
	c := f.client(t)
	ref := f.ref(t, c.initialize(messages.LatestVersion, messages.ClientCapabilities{}))
	body, id := c.request(messages.MethodCallTool, toolParams("test_slow", map[string]any{"seconds": 0.5}, "slow"))
	s := c.stream(http.MethodPost, body, nil)
	checkPriming(t, s.nextEvent())
	m, _ := s.nextMessage()
	require.Equal(t, messages.MethodProgress, m.Method, "test_slow is running")

	f.srv.Drain()
	shutdown := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), watchdog)
		defer cancel()
		shutdown <- f.srv.Shutdown(ctx)
	}()

	late := f.client(t)
	r := late.post(mustRequest(t, late, messages.MethodInitialize, initParams(messages.LatestVersion, messages.ClientCapabilities{})), nil)
	assert.Equal(t, http.StatusServiceUnavailable, r.status, "body: %s", r.body)
	assert.Contains(t, string(r.body), "draining", "a draining node says so, not \"too many sessions\"")
	assert.NotEmpty(t, r.header.Get(headerRetry))

	var answer *messages.Message
	for _, m := range messagesOf(t, s.rest()) {
		if m.Kind() == messages.KindResponse || m.Kind() == messages.KindError {
			answer = m
		}
	}
	require.NotNil(t, answer, "the running call was answered")
	assert.Equal(t, id, answer.ID)
	assert.Equal(t, "done", resultText(t, answer))
	assert.NoError(t, recv(t, shutdown, "Shutdown to return"))
	recv(t, ref.Done(), "the session to end")
	assert.Equal(t, http.StatusNotFound, c.post(mustRequest(t, c, messages.MethodPing, nil), nil).status)
}

// tooLargeRouter refuses every message that carries a tools/call or a
// client's answer as too large to reach its session, as a cluster does
// for one larger than the largest message its nodes send each other.
type tooLargeRouter struct{ router.Router }

func (r tooLargeRouter) Deliver(ctx context.Context, id string, m messages.ActorMessage) error {
	switch m := m.(type) {
	case *messages.HandleRequest:
		if m.Msg.Method == messages.MethodCallTool {
			return fmt.Errorf("cluster: %w: 70000000 bytes, at most 67108864 cross nodes", router.ErrMessageTooLarge)
		}
	case *messages.DeliverResponse:
		return fmt.Errorf("cluster: %w: 70000000 bytes, at most 67108864 cross nodes", router.ErrMessageTooLarge)
	}
	return r.Router.Deliver(ctx, id, m)
}

// TestHTTPMessageTooLargeToRoute: a message the router cannot carry to its
// session for its size gets 413, not 503 "retry" (a retry would fail the
// same way), and the session goes on.
func TestHTTPMessageTooLargeToRoute(t *testing.T) {
	f := newHTTPFixture(t, &httpSetup{Router: func(rt router.Router) router.Router { return tooLargeRouter{rt} }})
	c := f.client(t)
	c.initialize(messages.LatestVersion, messages.ClientCapabilities{})

	r := c.post(mustRequest(t, c, messages.MethodCallTool, toolParams("echo", map[string]any{"text": "x"}, nil)), nil)
	assert.Equal(t, http.StatusRequestEntityTooLarge, r.status, "body: %s", r.body)
	assert.Empty(t, r.header.Get(headerRetry))
	r = c.post([]byte(`{"jsonrpc":"2.0","id":"s-1","result":{}}`), nil)
	assert.Equal(t, http.StatusRequestEntityTooLarge, r.status, "body: %s", r.body)
	assert.Nil(t, c.call(messages.MethodPing, nil).Error, "the session goes on")
}
