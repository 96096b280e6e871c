package transport_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/actors/transport"
	"github.com/mcp-actors/mcp-actors/messages"
)

// TestHTTPSessionIDs checks the IDs initialize mints (transports.mdx,
// "Session Management" 1): globally unique and cryptographically secure
// (here 128 random bits: at least 22 base64url characters), visible ASCII
// only (0x21–0x7E); and that initialize cannot name a session.
func TestHTTPSessionIDs(t *testing.T) {
	f := newHTTPFixture(t, nil)
	c := f.client(t)
	seen := map[string]bool{}
	var sid string
	for range 16 {
		sid = c.initializeOnly(messages.LatestVersion, messages.ClientCapabilities{})
		require.False(t, seen[sid], "session ID %q minted twice", sid)
		seen[sid] = true
		assert.GreaterOrEqual(t, len(sid), 22, "session ID %q is too short for 128 bits", sid)
		for _, r := range sid {
			assert.True(t, r >= 0x21 && r <= 0x7e, "session ID %q has %q, not visible ASCII", sid, r)
		}
		raw, err := base64.RawURLEncoding.DecodeString(sid)
		if assert.NoError(t, err, "session ID %q is not base64url", sid) {
			assert.GreaterOrEqual(t, len(raw), 16, "session ID %q carries fewer than 128 bits", sid)
		}
	}

	t.Run("initialize with an Mcp-Session-Id: 400", func(t *testing.T) {
		body, _ := c.request(messages.MethodInitialize, initParams(messages.LatestVersion, messages.ClientCapabilities{}))
		r := c.post(body, http.Header{transport.HeaderSessionID: {sid}})
		assert.Equal(t, http.StatusBadRequest, r.status, "body: %s", r.body)
	})
}

// TestHTTPSessionHeaders checks the Mcp-Session-Id and MCP-Protocol-Version
// rules on every method: a request without the session ID gets 400
// ("Session Management" 2); an ID the server does not know gets 404 (3); an
// unsupported protocol version gets 400, a missing one is taken as
// 2025-03-26, and any supported one is accepted ("Protocol Version Header").
func TestHTTPSessionHeaders(t *testing.T) {
	f := newHTTPFixture(t, nil)
	c := f.client(t)
	c.initialize(messages.LatestVersion, messages.ClientCapabilities{})
	ping, _ := c.request(messages.MethodPing, nil)

	tests := []struct {
		name   string
		hdr    http.Header
		status int // for POST and GET; DELETE answers 204 where these answer 200
	}{
		{"no Mcp-Session-Id", http.Header{transport.HeaderSessionID: {""}}, http.StatusBadRequest},
		{"unknown Mcp-Session-Id", http.Header{transport.HeaderSessionID: {"bm90LWEtc2Vzc2lvbi1pZA"}}, http.StatusNotFound},
		{"unsupported MCP-Protocol-Version", http.Header{transport.HeaderProtocolVersion: {"2099-01-01"}}, http.StatusBadRequest},
		{"garbage MCP-Protocol-Version", http.Header{transport.HeaderProtocolVersion: {"latest"}}, http.StatusBadRequest},
		{"modern MCP-Protocol-Version on a legacy endpoint", http.Header{transport.HeaderProtocolVersion: {"2026-07-28"}}, http.StatusBadRequest},
		{"no MCP-Protocol-Version (2025-03-26)", http.Header{transport.HeaderProtocolVersion: {""}}, http.StatusOK},
		{"2025-03-26 inside a 2025-11-25 session", http.Header{transport.HeaderProtocolVersion: {messages.Version20250326}}, http.StatusOK},
		{"2025-06-18 inside a 2025-11-25 session", http.Header{transport.HeaderProtocolVersion: {messages.Version20250618}}, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Run("POST", func(t *testing.T) {
				r := c.post(ping, tt.hdr)
				assert.Equal(t, tt.status, r.status, "body: %s", r.body)
				if r.status != http.StatusOK {
					assert.Equal(t, mtJSON, r.contentType())
					assert.NotNil(t, r.msg, "an error body is a JSON-RPC error without an ID")
				}
			})
			t.Run("GET", func(t *testing.T) {
				done := f.obs.count(http.MethodGet)
				resp := c.open(http.MethodGet, nil, tt.hdr)
				assert.Equal(t, tt.status, resp.StatusCode)
				if resp.StatusCode == http.StatusOK {
					assert.Equal(t, mtSSE, resp.Header.Get("Content-Type"))
				}
				resp.Body.Close()
				f.obs.waitCount(t, http.MethodGet, done+1) // the stream is free again
			})
			if tt.status != http.StatusOK {
				t.Run("DELETE", func(t *testing.T) {
					r := c.do(http.MethodDelete, nil, tt.hdr)
					assert.Equal(t, tt.status, r.status, "body: %s", r.body)
				})
			}
		})
	}
	assert.Nil(t, c.call(messages.MethodPing, nil).Error, "the session is still there")
}

// TestHTTPDelete checks DELETE (transports.mdx, "Session Management" 5):
// 204, and afterwards the ID is unknown (404) to every method; the
// session's pending server-to-client calls fail, its running handlers are
// cancelled and its open streams close.
func TestHTTPDelete(t *testing.T) {
	f := newHTTPFixture(t, nil)
	c := f.client(t)
	sid := c.initialize(messages.LatestVersion, elicitCaps)
	ref := f.ref(t, sid)

	get := c.get("")
	askBody, askID := c.request(messages.MethodCallTool, toolParams("ask", nil, nil))
	ask := c.stream(http.MethodPost, askBody, nil)
	checkPriming(t, ask.nextEvent())
	el, _ := ask.nextMessage()
	require.Equal(t, messages.MethodElicit, el.Method, "the elicitation is pending")
	gateBody, gateID := c.request(messages.MethodCallTool, toolParams("gate", nil, nil))
	gate := c.openAsync(http.MethodPost, gateBody, nil)
	recv(t, f.gateStarted, "gate to run")

	r := c.do(http.MethodDelete, nil, nil)
	require.Equal(t, http.StatusNoContent, r.status, "body: %s", r.body)
	assert.Empty(t, r.body)
	recv(t, ref.Done(), "the session to end")

	assert.Error(t, recv(t, f.askErr, "the pending elicitation to fail"))
	assert.ErrorIs(t, recv(t, f.gateEnded, "gate to be cancelled"), context.Canceled)
	assert.NoError(t, get.endedWithSession(), "the GET stream closes")
	for _, m := range messagesOf(t, ask.rest()) {
		assert.NotEqual(t, askID, m.ID, "no response after the session ended")
	}
	gr := gate.read()
	assert.Contains(t, []int{http.StatusOK, http.StatusNotFound}, gr.status)
	for _, m := range append(gr.messages(t), gr.msg) {
		if m != nil {
			assert.NotEqual(t, gateID, m.ID, "no response after the session ended")
		}
	}

	t.Run("afterwards the ID is unknown", func(t *testing.T) {
		ping, _ := c.request(messages.MethodPing, nil)
		unknown := c.post(ping, http.Header{transport.HeaderSessionID: {"bm90LWEtc2Vzc2lvbi1pZA"}})
		require.Equal(t, http.StatusNotFound, unknown.status)
		for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
			var body []byte
			if method == http.MethodPost {
				body = ping
			}
			r := c.do(method, body, nil)
			assert.Equal(t, http.StatusNotFound, r.status, method)
			assert.Equal(t, unknown.body, r.body, "%s: a deleted session looks like an unknown one", method)
		}
	})

	t.Run("a new initialize starts a new session", func(t *testing.T) {
		c2 := f.client(t)
		assert.NotEqual(t, sid, c2.initialize(messages.LatestVersion, messages.ClientCapabilities{}))
		assert.Nil(t, c2.call(messages.MethodPing, nil).Error)
	})
}

// messagesOf decodes the JSON-RPC messages among events.
func messagesOf(t *testing.T, events []sseEvent) []*messages.Message {
	t.Helper()
	var out []*messages.Message
	for _, ev := range events {
		if ev.isMessage() {
			out = append(out, ev.message(t))
		}
	}
	return out
}

// TestHTTPCancelledRequest checks that a request the client cancels
// (notifications/cancelled on another POST) ends without a response
// (basic/utilities/cancellation.mdx: the receiver SHOULD NOT send a
// response for a cancelled request) and without an HTTP answer that says
// the session is gone: 404 tells a client to start a new session
// (transports.mdx, "Session Management" 4).
func TestHTTPCancelledRequest(t *testing.T) {
	f := newHTTPFixture(t, nil)
	c := f.client(t)
	c.initialize(messages.LatestVersion, messages.ClientCapabilities{})
	cancel := func(id messages.ID) {
		t.Helper()
		r := c.post(notification(t, messages.MethodCancelled, &messages.CancelledParams{RequestID: id, Reason: "user pressed stop"}), nil)
		require.Equal(t, http.StatusAccepted, r.status)
	}

	t.Run("before anything was sent", func(t *testing.T) {
		body, id := c.request(messages.MethodCallTool, toolParams("gate", nil, nil))
		p := c.openAsync(http.MethodPost, body, nil)
		recv(t, f.gateStarted, "gate to run")
		cancel(id)
		assert.ErrorIs(t, recv(t, f.gateEnded, "gate to be cancelled"), context.Canceled)

		a := p.read()
		assert.NotEqual(t, http.StatusNotFound, a.status, "the session is alive: body %s", a.body)
		assert.Less(t, a.status, 300, "body: %s", a.body)
		for _, m := range append(a.messages(t), a.msg) {
			if m != nil {
				assert.NotEqual(t, id, m.ID, "no response for a cancelled request")
			}
		}
		assert.Nil(t, c.call(messages.MethodPing, nil).Error, "the session goes on")
	})

	t.Run("on an SSE stream", func(t *testing.T) {
		body, id := c.request(messages.MethodCallTool, toolParams("steps", nil, "tok"))
		s := c.stream(http.MethodPost, body, nil)
		checkPriming(t, s.nextEvent())
		m, _ := s.nextMessage()
		require.Equal(t, messages.MethodProgress, m.Method)
		cancel(id)
		assert.Nil(t, c.call(messages.MethodPing, nil).Error, "the session goes on")
		// The cancelled call's connection stays open and silent (a client
		// that saw an event ID would otherwise reconnect to resume a stream
		// that has nothing more to say), until the session ends.
		assert.Equal(t, http.StatusNoContent, c.do(http.MethodDelete, nil, nil).status)
		for _, m := range messagesOf(t, s.rest()) {
			assert.NotEqual(t, id, m.ID, "no response for a cancelled request")
		}
	})
}
