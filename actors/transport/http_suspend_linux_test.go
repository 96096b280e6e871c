package transport_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/actors/transport"
	"github.com/mcp-actors/mcp-actors/messages"
)

// TestLoopHandlerWaitsSuspended checks that on LoopServer a handler that
// waits for its client's answer gives its thread back (its task is
// suspended) while the loop serves other sessions, gets the answer, ends
// when the client cancels the request instead, and that a handler asking
// from a goroutine of its own, which cannot be suspended, is answered too.
func TestLoopHandlerWaitsSuspended(t *testing.T) {
	if testEngine != "loop" {
		t.Skip("LoopServer only")
	}
	f := newHTTPFixture(t, nil)
	ls := f.h.(*transport.LoopServer)
	a, b := f.client(t), f.client(t)
	a.initialize(messages.LatestVersion, elicitCaps)
	b.initialize(messages.LatestVersion, elicitCaps)

	ask := func(tool string) (*sseReader, messages.ID, *messages.Message) {
		t.Helper()
		body, id := a.request(messages.MethodCallTool, toolParams(tool, nil, nil))
		s := a.stream(http.MethodPost, body, nil)
		checkPriming(t, s.nextEvent())
		el, _ := s.nextMessage()
		require.Equal(t, messages.MethodElicit, el.Method)
		return s, id, el
	}
	answer := func(el *messages.Message, name string) {
		t.Helper()
		r := a.post([]byte(`{"jsonrpc":"2.0","id":`+el.ID.Raw()+`,"result":{"action":"accept","content":{"name":"`+name+`"}}}`), nil)
		require.Equal(t, http.StatusAccepted, r.status, "body: %s", r.body)
	}
	response := func(s *sseReader, id messages.ID) string {
		t.Helper()
		m, _ := s.nextMessage()
		require.Equal(t, id, m.ID)
		return resultText(t, m)
	}

	t.Run("answered", func(t *testing.T) {
		before := transport.Suspensions(ls)
		s, id, el := ask("ask")
		for range 3 {
			assert.Nil(t, b.call(messages.MethodPing, nil).Error, "another session is served meanwhile")
		}
		answer(el, "ada")
		assert.Equal(t, "name=ada", response(s, id))
		assert.NoError(t, recv(t, f.askErr, "the elicitation's outcome"))
		assert.Greater(t, transport.Suspensions(ls), before, "the handler waited suspended")
	})

	t.Run("cancelled", func(t *testing.T) {
		_, id, _ := ask("ask")
		r := a.post(notification(t, messages.MethodCancelled, &messages.CancelledParams{RequestID: id}), nil)
		require.Equal(t, http.StatusAccepted, r.status)
		assert.ErrorIs(t, recv(t, f.askErr, "the elicitation to end"), context.Canceled)
		assert.Nil(t, a.call(messages.MethodPing, nil).Error, "the session goes on")
	})

	t.Run("asked from another goroutine", func(t *testing.T) {
		s, id, el := ask("ask-aside")
		assert.Nil(t, b.call(messages.MethodPing, nil).Error, "another session is served meanwhile")
		answer(el, "bob")
		assert.Equal(t, "name=bob", response(s, id))
	})
}

// TestLoopStallingHandlerRunsOffTheLoop checks that a handler that holds
// the loop (it blocks in a way its task cannot suspend) has the loop
// handed over, so that other sessions are served, and that from then on
// it runs off the loop: its request waits suspended for the answer. (Any
// hold counts here: how long one must last is TestTaskHoldLearnt's.)
func TestLoopStallingHandlerRunsOffTheLoop(t *testing.T) {
	if testEngine != "loop" {
		t.Skip("LoopServer only")
	}
	t.Cleanup(transport.SetLearnAfter(0))
	f := newHTTPFixture(t, nil)
	ls := f.h.(*transport.LoopServer)
	holding, release := make(chan struct{}, 1), make(chan struct{})
	require.NoError(t, f.srv.AddTool(&messages.Tool{Name: "hold"},
		func(ctx context.Context, _ *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			holding <- struct{}{}
			select {
			case <-release:
				return text("held"), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}))
	a, b := f.client(t), f.client(t)
	a.initialize(messages.LatestVersion, messages.ClientCapabilities{})
	b.initialize(messages.LatestVersion, messages.ClientCapabilities{})
	hold := func() {
		t.Helper()
		body, id := a.request(messages.MethodCallTool, toolParams("hold", nil, nil))
		p := a.openAsync(http.MethodPost, body, nil)
		recv(t, holding, "hold to run")
		assert.Nil(t, b.call(messages.MethodPing, nil).Error, "another session is served meanwhile")
		release <- struct{}{}
		r := p.read()
		require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
		assert.Equal(t, "held", resultText(t, r.response(t, id)))
	}

	hold()
	assert.Positive(t, transport.Handoffs(ls), "the watchdog took the loop from the held handler")

	before := transport.Suspensions(ls)
	hold()
	assert.Greater(t, transport.Suspensions(ls), before, "the handler ran off the loop: its request waited suspended")
}
