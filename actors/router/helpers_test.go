package router_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/actors/router"
	"github.com/mcp-actors/mcp-actors/internal/access"
	"github.com/mcp-actors/mcp-actors/messages"
)

// waitTimeout bounds every wait for an answer: a wait that runs out is a
// hang, and fails the test.
const waitTimeout = 10 * time.Second

// recorder is a Receiver that keeps what it takes.
type recorder struct {
	refuse atomic.Bool // Receive answers false (and keeps nothing)
	gone   atomic.Bool

	mu  sync.Mutex
	got []messages.StreamEvent
}

func (r *recorder) Receive(ev messages.StreamEvent) bool {
	if r.refuse.Load() {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, ev)
	return true
}

func (r *recorder) Gone() bool { return r.gone.Load() }

// events returns a copy of what r has taken.
func (r *recorder) events() []messages.StreamEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]messages.StreamEvent(nil), r.got...)
}

// hook is a Receiver that calls fn with every event, on the goroutine that
// delivers it (a session actor's), before passing it on to next.
type hook struct {
	next router.Receiver
	fn   func(messages.StreamEvent)
}

func (h hook) Receive(ev messages.StreamEvent) bool { h.fn(ev); return h.next.Receive(ev) }
func (h hook) Gone() bool                           { return h.next.Gone() }

// sess is the session the events of frame and signal come from.
const sess = "n1.s"

// frame is a frame event of session sess for stream id carrying the text s.
func frame(id messages.StreamID, s string) messages.StreamEvent {
	return messages.StreamEvent{Stream: id, Session: sess, Frame: messages.Frame{Data: []byte(s)}}
}

// signal is a signal event of session sess for stream id.
func signal(id messages.StreamID, sig messages.StreamSignal) messages.StreamEvent {
	return messages.StreamEvent{Stream: id, Session: sess, Signal: sig}
}

// newServer returns a server (opts may be nil) that is closed when the
// test ends.
func newServer(t *testing.T, opts *mcpactors.Options) *mcpactors.Server {
	t.Helper()
	srv := mcpactors.NewServer(messages.Implementation{Name: "router-test", Version: "1.0.0"}, opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
		defer cancel()
		require.NoError(t, srv.Close(ctx))
	})
	return srv
}

// local returns the server's router as what it is.
func local(t *testing.T, srv *mcpactors.Server) *router.Local {
	t.Helper()
	l, ok := access.Router(srv).(*router.Local)
	require.True(t, ok, "the router is a %T", access.Router(srv))
	return l
}

// call is a client request.
func call(id int64, method, params string) *messages.Message {
	m := &messages.Message{ID: messages.IntID(id), Method: method}
	if params != "" {
		m.Params = []byte(params)
	}
	return m
}

// errNoAnswer is awaitEnd's failure.
var errNoAnswer = errors.New("no answer before the deadline")

// awaitEnd takes q's events until the one that ends a request's stream:
// its response (a frame with End) or a signal that ends the stream. It
// fails with errNoAnswer when ctx ends first, or when the queue ends
// without such an event.
func awaitEnd(ctx context.Context, q *router.Queue) (messages.StreamEvent, error) {
	for {
		batch, ok := q.Wait(ctx)
		if !ok {
			return messages.StreamEvent{}, errNoAnswer
		}
		for _, ev := range batch {
			if ev.Signal.Ends() || (ev.Signal == messages.SignalFrame && ev.Frame.End) {
				return ev, nil
			}
		}
	}
}

// roundTrip delivers req to session id on a stream of its own and returns
// the event that ended the stream.
func roundTrip(t *testing.T, rt router.Router, id, principal string, req *messages.Message) messages.StreamEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	q := router.NewQueue(ctx, 16, nil)
	sid := rt.Streams().Register(id, q)
	defer rt.Streams().Unregister(sid)
	require.NoError(t, rt.Deliver(ctx, id, &messages.HandleRequest{Principal: principal, Msg: req, Stream: sid}))
	ev, err := awaitEnd(ctx, q)
	require.NoError(t, err, "%s: no answer", req.Method)
	return ev
}

// response decodes the response an answer carries.
func response(t *testing.T, ev messages.StreamEvent) *messages.Message {
	t.Helper()
	require.Equal(t, messages.SignalFrame, ev.Signal, "the stream ended without a response")
	require.True(t, ev.Frame.End, "the frame is no response")
	m, werr := messages.Decode(ev.Frame.Data)
	require.Nil(t, werr)
	return m
}

// initialize opens session id for principal: initialize, then
// notifications/initialized.
func initialize(t *testing.T, rt router.Router, id, principal string) {
	t.Helper()
	res := response(t, roundTrip(t, rt, id, principal, call(1, messages.MethodInitialize,
		`{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"router-test","version":"1"}}`)))
	require.Nil(t, res.Error)
	require.NoError(t, rt.Deliver(t.Context(), id, &messages.HandleNotification{
		Principal: principal,
		Msg:       &messages.Message{Method: messages.MethodInitialized},
	}))
}
