package router_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/actors/router"
	"github.com/mcp-actors/mcp-actors/internal/access"
	"github.com/mcp-actors/mcp-actors/messages"
)

// waitClosed waits until session id of srv has ended.
func waitClosed(t *testing.T, srv *mcpactors.Server, id string) {
	t.Helper()
	ref, ok := access.Session(srv, id)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	select {
	case <-ref.Done():
	case <-ctx.Done():
		require.FailNow(t, "the session did not close")
	}
}

func TestLocalOpenLookupDeliver(t *testing.T) {
	srv := newServer(t, nil)
	rt := access.Router(srv)
	ctx := t.Context()

	id, err := rt.Open(ctx, router.OpenOptions{Principal: "alice"})
	require.NoError(t, err)
	other, err := rt.Open(ctx, router.OpenOptions{Principal: "alice"})
	require.NoError(t, err)
	assert.NotEqual(t, id, other)
	assert.Equal(t, 2, local(t, srv).Len())

	require.NoError(t, rt.Check(ctx, id))
	require.ErrorIs(t, rt.Deliver(ctx, id, &messages.DeleteSession{Principal: "mallory"}), router.ErrSessionNotFound,
		"another principal's session reads as unknown")
	require.NoError(t, rt.Check(ctx, id), "and stays")
	meta, err := local(t, srv).Lookup(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, router.Registered{Principal: "alice"}, meta, "no protocol version before initialize")

	initialize(t, rt, id, "alice")
	meta, err = local(t, srv).Lookup(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, router.Registered{Principal: "alice", ProtocolVersion: "2025-06-18"}, meta)

	res := response(t, roundTrip(t, rt, id, "alice", call(2, messages.MethodPing, "")))
	assert.Nil(t, res.Error)
	assert.Equal(t, messages.IntID(2), res.ID)
	assert.JSONEq(t, `{}`, string(res.Result))

	res = response(t, roundTrip(t, rt, other, "alice", call(3, messages.MethodListTools, "")))
	require.NotNil(t, res.Error, "the other session is not initialized: it is another session")
	assert.Equal(t, int64(messages.CodeInvalidRequest), res.Error.Code)
}

func TestLocalUnknownSession(t *testing.T) {
	srv := newServer(t, nil)
	rt := access.Router(srv)
	ctx := t.Context()
	for _, id := range []string{"", "nope", router.NewSessionID()} {
		t.Run(fmt.Sprintf("%q", id), func(t *testing.T) {
			require.ErrorIs(t, rt.Check(ctx, id), router.ErrSessionNotFound)

			q := router.NewQueue(ctx, 4, nil)
			sid := rt.Streams().Register(id, q)
			defer rt.Streams().Unregister(sid)
			err := rt.Deliver(ctx, id, &messages.HandleRequest{Msg: call(1, messages.MethodPing, ""), Stream: sid})
			require.ErrorIs(t, err, router.ErrSessionNotFound)
			assert.Empty(t, q.Take(), "the error is the answer: the stream gets nothing")
		})
	}
}

func TestLocalMaxSessions(t *testing.T) {
	srv := newServer(t, &mcpactors.Options{MaxSessions: 2})
	rt := access.Router(srv)
	ctx := t.Context()

	a, err := rt.Open(ctx, router.OpenOptions{})
	require.NoError(t, err)
	_, err = rt.Open(ctx, router.OpenOptions{})
	require.NoError(t, err)
	_, err = rt.Open(ctx, router.OpenOptions{})
	require.ErrorIs(t, err, router.ErrTooManySessions)
	assert.Equal(t, 2, local(t, srv).Len(), "a refused session is not counted")

	require.NoError(t, rt.Deliver(ctx, a, &messages.CloseSession{Reason: "test"}))
	waitClosed(t, srv, a)
	err = rt.Check(ctx, a)
	require.ErrorIs(t, err, router.ErrSessionNotFound)

	_, err = rt.Open(ctx, router.OpenOptions{})
	require.NoError(t, err, "a closed session frees its slot")
	_, err = rt.Open(ctx, router.OpenOptions{})
	require.ErrorIs(t, err, router.ErrTooManySessions)
}

func TestLocalDrain(t *testing.T) {
	srv := newServer(t, nil)
	rt := access.Router(srv)
	l := local(t, srv)
	ctx := t.Context()

	id, err := rt.Open(ctx, router.OpenOptions{})
	require.NoError(t, err)
	assert.False(t, l.Draining())

	l.Drain()
	assert.True(t, l.Draining())
	_, err = rt.Open(ctx, router.OpenOptions{})
	require.ErrorIs(t, err, router.ErrDraining)
	assert.Equal(t, 1, l.Len(), "a refused session is not counted")

	// The sessions already open go on.
	require.NoError(t, rt.Check(ctx, id))
	res := response(t, roundTrip(t, rt, id, "", call(1, messages.MethodPing, "")))
	assert.Nil(t, res.Error)
}

func TestLocalDeleteSession(t *testing.T) {
	tests := []struct {
		name      string
		principal string
		deleted   bool
	}{
		{"by its principal", "alice", true},
		{"by another principal", "mallory", false},
		{"unauthenticated", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, nil)
			rt := access.Router(srv)
			ctx := t.Context()
			id, err := rt.Open(ctx, router.OpenOptions{Principal: "alice"})
			require.NoError(t, err)
			initialize(t, rt, id, "alice")

			err = rt.Deliver(ctx, id, &messages.DeleteSession{Principal: tc.principal})
			if !tc.deleted {
				require.ErrorIs(t, err, router.ErrSessionNotFound, "another principal's delete reads as an unknown session")
			} else {
				require.NoError(t, err)
			}
			err = rt.Check(ctx, id)
			if !tc.deleted {
				require.NoError(t, err, "someone else's delete does nothing")
				res := response(t, roundTrip(t, rt, id, "alice", call(2, messages.MethodPing, "")))
				assert.Nil(t, res.Error)
				return
			}
			require.ErrorIs(t, err, router.ErrSessionNotFound, "refused from the moment it is deleted")
			waitClosed(t, srv, id)
			err = rt.Deliver(ctx, id, &messages.HandleNotification{Principal: "alice", Msg: &messages.Message{Method: messages.MethodInitialized}})
			require.ErrorIs(t, err, router.ErrSessionNotFound)
		})
	}
}

// TestLocalRequestToAClosedSession delivers a request that reaches a
// session after it has closed: its stream is told the session is not
// found. To have the request arrive right after the close, both are
// delivered from the session's own goroutine while it answers a ping: they
// wait in its mailbox, in order, until it is done.
func TestLocalRequestToAClosedSession(t *testing.T) {
	srv := newServer(t, nil)
	rt := access.Router(srv)
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	id, err := rt.Open(ctx, router.OpenOptions{Principal: "alice"})
	require.NoError(t, err)

	late := router.NewQueue(ctx, 4, nil)
	lateID := rt.Streams().Register(id, late)
	defer rt.Streams().Unregister(lateID)

	var closeErr, lateErr error
	var once sync.Once
	ping := router.NewQueue(ctx, 4, nil)
	pingID := rt.Streams().Register(id, hook{next: ping, fn: func(messages.StreamEvent) {
		once.Do(func() {
			closeErr = rt.Deliver(ctx, id, &messages.CloseSession{Reason: "test"})
			lateErr = rt.Deliver(ctx, id, &messages.HandleRequest{Principal: "alice", Msg: call(2, messages.MethodPing, ""), Stream: lateID})
		})
	}})
	defer rt.Streams().Unregister(pingID)

	require.NoError(t, rt.Deliver(ctx, id, &messages.HandleRequest{Principal: "alice", Msg: call(1, messages.MethodPing, ""), Stream: pingID}))
	ev, err := awaitEnd(ctx, ping)
	require.NoError(t, err)
	assert.Nil(t, response(t, ev).Error, "the ping before the close is answered")
	waitClosed(t, srv, id)
	require.NoError(t, closeErr)
	require.NoError(t, lateErr, "the session was open when the request was delivered")

	ev, err = awaitEnd(ctx, late)
	require.NoError(t, err)
	assert.Equal(t, messages.StreamEvent{Stream: lateID, Session: id, Signal: messages.SignalNotFound}, ev)

	// Once it is gone, the router says so itself.
	err = rt.Check(ctx, id)
	require.ErrorIs(t, err, router.ErrSessionNotFound)
	q := router.NewQueue(ctx, 4, nil)
	sid := rt.Streams().Register(id, q)
	defer rt.Streams().Unregister(sid)
	err = rt.Deliver(ctx, id, &messages.HandleRequest{Principal: "alice", Msg: call(3, messages.MethodPing, ""), Stream: sid})
	require.ErrorIs(t, err, router.ErrSessionNotFound)
}

// TestLocalAnswersEveryRequestWhileClosing delivers requests from many
// goroutines while the session closes: every request is answered, with its
// response, a signal that ends its stream, or ErrSessionNotFound from
// Deliver; none is left waiting. Run it with -race -count=20.
func TestLocalAnswersEveryRequestWhileClosing(t *testing.T) {
	const (
		rounds    = 4
		workers   = 8
		perWorker = 16
	)
	srv := newServer(t, nil)
	require.NoError(t, srv.AddTool(&messages.Tool{Name: "block"},
		func(ctx context.Context, _ *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			<-ctx.Done() // until the close cancels it
			return nil, ctx.Err()
		}))
	rt := access.Router(srv)
	methods := []struct{ method, params string }{
		{messages.MethodPing, ""},
		{messages.MethodCallTool, `{"name":"block"}`},
		{messages.MethodListTools, ""},
	}

	for round := range rounds {
		id, err := rt.Open(t.Context(), router.OpenOptions{Principal: "alice"})
		require.NoError(t, err)
		initialize(t, rt, id, "alice")

		ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
		var delivered atomic.Int32
		halfway := make(chan struct{})
		var (
			mu       sync.Mutex
			outcomes = map[string]int{}
		)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				type pending struct {
					n   int64
					q   *router.Queue
					sid messages.StreamID
				}
				var waiting []pending
				for i := range perWorker {
					n := int64(100 + w*perWorker + i) // unique in the session
					m := methods[int(n)%len(methods)]
					q := router.NewQueue(ctx, 16, nil)
					sid := rt.Streams().Register(id, q)
					err := rt.Deliver(ctx, id, &messages.HandleRequest{Principal: "alice", Msg: call(n, m.method, m.params), Stream: sid})
					if delivered.Add(1) == workers*perWorker/2 {
						close(halfway)
					}
					if err != nil {
						assert.ErrorIs(t, err, router.ErrSessionNotFound)
						rt.Streams().Unregister(sid)
						mu.Lock()
						outcomes["ErrSessionNotFound"]++
						mu.Unlock()
						continue
					}
					waiting = append(waiting, pending{n, q, sid})
				}
				for _, p := range waiting {
					ev, err := awaitEnd(ctx, p.q)
					rt.Streams().Unregister(p.sid)
					if !assert.NoError(t, err, "round %d: request %d was never answered", round, p.n) {
						continue
					}
					outcome := ev.Signal.String()
					if ev.Signal == messages.SignalFrame {
						outcome = "response"
					}
					mu.Lock()
					outcomes[outcome]++
					mu.Unlock()
				}
			})
		}
		select {
		case <-halfway:
		case <-ctx.Done():
			require.FailNow(t, "the requests were not delivered")
		}
		require.NoError(t, rt.Deliver(ctx, id, &messages.CloseSession{Reason: "test"}))
		wg.Wait()
		cancel()
		waitClosed(t, srv, id)
		total := 0
		for _, n := range outcomes {
			total += n
		}
		assert.Equal(t, workers*perWorker, total, "round %d: %v", round, outcomes)
		t.Logf("round %d: %v", round, outcomes)
	}
}

// TestLocalEventsNameTheirSession: what a session sends its streams names
// it, and a stream registered for another session takes none of it.
func TestLocalEventsNameTheirSession(t *testing.T) {
	srv := newServer(t, nil)
	rt := access.Router(srv)
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	id, err := rt.Open(ctx, router.OpenOptions{Principal: "alice"})
	require.NoError(t, err)
	other, err := rt.Open(ctx, router.OpenOptions{Principal: "alice"})
	require.NoError(t, err)

	ev := roundTrip(t, rt, id, "alice", call(1, messages.MethodPing, ""))
	assert.Equal(t, id, ev.Session)

	// A stream of the other session handed to this one: the answer is
	// dropped, not written to the other session's client.
	foreign := rt.Streams().ForeignEvents()
	q := router.NewQueue(ctx, 4, nil)
	sid := rt.Streams().Register(other, q)
	defer rt.Streams().Unregister(sid)
	require.NoError(t, rt.Deliver(ctx, id, &messages.HandleRequest{Principal: "alice", Msg: call(2, messages.MethodPing, ""), Stream: sid}))
	// The session's mailbox is FIFO: once a later request is answered,
	// the earlier one was.
	roundTrip(t, rt, id, "alice", call(3, messages.MethodPing, ""))
	assert.Empty(t, q.Take())
	assert.Equal(t, foreign+1, rt.Streams().ForeignEvents())
}
