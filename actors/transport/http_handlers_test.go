package transport_test

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/messages"
)

// Handlers that misbehave towards the runtime — a locked OS thread, a busy
// loop — must cost only their own call: the session answers them, and
// every other session goes on being served.

// TestHTTPHandlerLockedThreadElicits runs more handlers than there are
// processors, each locked to its OS thread (never unlocked) and waiting in
// an elicitation: other sessions are served meanwhile, each client's answer
// reaches its handler, every call returns, and the sessions serve further
// calls afterwards.
func TestHTTPHandlerLockedThreadElicits(t *testing.T) {
	f := newHTTPFixture(t, nil)
	require.NoError(t, f.srv.AddTool(&messages.Tool{Name: "locked-ask"},
		func(ctx context.Context, s *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			runtime.LockOSThread() // and never unlocked
			var answer struct {
				Name string `json:"name"`
			}
			if _, err := s.Elicit(ctx, "name?", &answer); err != nil {
				return nil, err
			}
			return text("name=" + answer.Name), nil
		}))

	type locked struct {
		c      *httpClient
		id     messages.ID
		s      *sseReader
		askID  messages.ID
		answer string
	}
	calls := make([]*locked, runtime.GOMAXPROCS(0)+2)
	for i := range calls {
		c := f.client(t)
		c.initialize(messages.LatestVersion, elicitCaps)
		body, id := c.request(messages.MethodCallTool, toolParams("locked-ask", nil, nil))
		s := c.stream(http.MethodPost, body, nil)
		checkPriming(t, s.nextEvent())
		ask, _ := s.nextMessage()
		require.Equal(t, messages.MethodElicit, ask.Method, "call %d", i)
		calls[i] = &locked{c: c, id: id, s: s, askID: ask.ID, answer: fmt.Sprintf("user-%d", i)}
	}

	// Every locked handler waits for its client; others are served.
	echoSession(t, f, "while the locked handlers wait")

	for _, l := range calls {
		answer := `{"jsonrpc":"2.0","id":` + l.askID.Raw() + `,"result":{"action":"accept","content":{"name":"` + l.answer + `"}}}`
		r := l.c.post([]byte(answer), nil)
		require.Equal(t, http.StatusAccepted, r.status, "body: %s", r.body)
	}
	for i, l := range calls {
		m, _ := l.s.nextMessage()
		assert.Equal(t, l.id, m.ID, "call %d", i)
		assert.Equal(t, "name="+l.answer, resultText(t, m), "call %d", i)
		assert.NoError(t, l.s.ended(), "call %d: the stream ends after the response", i)
	}

	for i, l := range calls {
		assert.Equal(t, fmt.Sprintf("again %d", i), textOf(t, l.c.callTool("test_echo", map[string]any{"text": fmt.Sprintf("again %d", i)})),
			"the session of call %d serves on", i)
	}
	echoSession(t, f, "after the locked handlers returned")
}

// TestHTTPHandlerSpinsWhileOthersAreServed keeps every processor busy with
// a handler in a busy loop (no blocking, no yielding) while 50 other
// sessions are opened and served: all of them must be answered, correctly,
// and then the spinning calls must return too. The spinners stop only once
// the 50 sessions are done, so the sessions are served while they spin
// whatever the speed of the machine; nothing about timing is asserted.
func TestHTTPHandlerSpinsWhileOthersAreServed(t *testing.T) {
	const (
		sessions = 50
		// spinLimit bounds a spin: a spinner that reaches it reports it,
		// failing the test.
		spinLimit = 30 * time.Second
	)
	f := newHTTPFixture(t, nil)
	spinning := make(chan struct{}, 16)
	var stop atomic.Bool
	defer stop.Store(true) // whatever happens, the spinners stop
	require.NoError(t, f.srv.AddTool(&messages.Tool{Name: "spin"},
		func(ctx context.Context, _ *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			spinning <- struct{}{}
			limit := time.Now().Add(spinLimit)
			for n := 0; !stop.Load(); n++ {
				if n%(1<<16) == 0 && (ctx.Err() != nil || time.Now().After(limit)) {
					return text("gave up"), nil
				}
			}
			return text("spun"), nil
		}))

	spinners := make([]*pending, runtime.GOMAXPROCS(0))
	ids := make([]messages.ID, len(spinners))
	for i := range spinners {
		c := f.client(t)
		// The answer's headers come with it, after the spin: more than
		// the rig's watchdog may pass.
		tr := &http.Transport{ResponseHeaderTimeout: spinLimit + watchdog, DisableCompression: true}
		t.Cleanup(tr.CloseIdleConnections)
		c.hc = &http.Client{Transport: tr}
		c.initialize(messages.LatestVersion, messages.ClientCapabilities{})
		var body []byte
		body, ids[i] = c.request(messages.MethodCallTool, toolParams("spin", nil, nil))
		spinners[i] = c.openAsync(http.MethodPost, body, nil)
	}
	for range spinners {
		recv(t, spinning, "a spinner to start")
	}

	t.Run("sessions", func(t *testing.T) {
		for i := range sessions {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				t.Parallel()
				t.Cleanup(func() {
					if t.Failed() {
						stop.Store(true) // the others need not wait for the watchdog too
					}
				})
				echoSession(t, f, fmt.Sprintf("session %d", i))
			})
		}
	})
	stop.Store(true)

	for i, p := range spinners {
		r := p.read()
		assert.Equal(t, "spun", resultText(t, r.response(t, ids[i])), "spinner %d stopped when told, not at its limit", i)
	}
}

// echoSession opens a session of f and calls test_echo on it a few times,
// checking each answer.
func echoSession(t *testing.T, f *httpFixture, name string) {
	t.Helper()
	c := f.client(t)
	c.initialize(messages.LatestVersion, messages.ClientCapabilities{})
	for k := range 4 {
		want := fmt.Sprintf("%s, call %d", name, k)
		res := c.callTool("test_echo", map[string]any{"text": want})
		assert.False(t, res.IsError, "%s: test_echo failed", want)
		assert.Equal(t, want, textOf(t, res))
	}
}
