package dispatcher_test

import (
	"bytes"
	"context"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"errors"
	"runtime"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/actors/dispatcher"
	"github.com/mcp-actors/mcp-actors/messages"
)

// This file is the tests' stand-in for the session actor: one goroutine owns
// a dispatcher.Table and reads a single mailbox that carries both what a
// Client posts (dispatcher.Message) and the script's own commands (deliver a
// response, a cancellation, a progress update; close; hold; release; read
// the counters). Every Table call therefore happens on that goroutine, as in
// production, and the race detector checks that the Client never reaches
// into the table. The Sender records each frame into a channel that the
// script reads. Nothing sleeps: the script waits on channels, and most tests
// run in a testing/synctest bubble, so a deadlock fails fast with a report.

// watchdog bounds every wait of the script. In a synctest bubble the clock
// is fake, so it only fires when everything is stuck.
const watchdog = time.Minute

// errActorStopped closes the table when the test actor stops, so a caller a
// test forgot about returns instead of leaking.
var errActorStopped = errors.New("test actor stopped")

// Test-only commands, posted to the actor's mailbox next to the
// dispatcher.Messages. Each carries a buffered reply channel, so the actor
// never blocks on the script.
type (
	deliverResponse struct {
		msg     *messages.Message
		handled chan bool
	}
	deliverCancelled struct {
		params  *messages.CancelledParams
		handled chan bool
	}
	deliverProgress struct {
		params *messages.ProgressParams
		routed chan bool
	}
	closeTable struct {
		err  error
		done chan struct{}
	}
	holdFrames    struct{ done chan struct{} }
	releaseFrames struct{ done chan struct{} }
	readState     struct{ reply chan tableState }
	stopActor     struct{}
)

// tableState is what readState reports: the counters and the pending count.
type tableState struct {
	Stats   dispatcher.Stats
	Pending int
}

// sentFrame is one frame the Sender wrote, decoded.
type sentFrame struct {
	Route any
	Raw   []byte
	Msg   *messages.Message
}

// actorConfig tunes a test actor; the zero value is a plain recording actor.
type actorConfig struct {
	// DoneErr is the Client's doneErr.
	DoneErr error
	// Answer, when set, makes the actor answer every Begin at once with it.
	Answer jsontext.Value
	// Discard makes the Sender drop frames instead of recording them.
	Discard bool
}

// testActor owns one Table. Its fields other than the table are channels,
// safe to use from the script.
type testActor struct {
	tb      testing.TB
	cfg     actorConfig
	mailbox chan any
	frames  chan sentFrame
	gone    context.Context // the Client's; cancelled by leave
	leave   context.CancelFunc
	stopped chan struct{}
	client  *dispatcher.Client
}

// newTestActor starts an actor owning a new Table and returns it with a
// Client posting to it. The actor stops (closing the table) at cleanup.
func newTestActor(tb testing.TB, cfg actorConfig) *testActor {
	tb.Helper()
	a := &testActor{
		tb:      tb,
		cfg:     cfg,
		mailbox: make(chan any, 4096),
		frames:  make(chan sentFrame, 1024),
		stopped: make(chan struct{}),
	}
	a.gone, a.leave = context.WithCancel(context.Background())
	a.client = dispatcher.NewClient(a.post, a.gone, cfg.DoneErr)
	table := dispatcher.NewTable(a.send)
	go a.run(table)
	tb.Cleanup(func() {
		a.mailbox <- &stopActor{}
		<-a.stopped
	})
	return a
}

// post is the Client's post function: an actor send, which never blocks
// while the mailbox has room.
func (a *testActor) post(m dispatcher.Message) { a.mailbox <- m }

// run is the actor's mailbox loop; the table lives only here.
func (a *testActor) run(table *dispatcher.Table) {
	defer close(a.stopped)
	for m := range a.mailbox {
		switch m := m.(type) {
		case dispatcher.Message:
			table.Receive(m)
			if b, ok := m.(*dispatcher.Begin); ok && a.cfg.Answer != nil {
				table.HandleResponse(&messages.Message{ID: b.Call.ID(), Result: a.cfg.Answer})
			}
		case *deliverResponse:
			m.handled <- table.HandleResponse(m.msg)
		case *deliverCancelled:
			m.handled <- table.HandleCancelled(m.params)
		case *deliverProgress:
			m.routed <- table.HandleProgress(m.params)
		case *closeTable:
			table.Close(m.err)
			close(m.done)
		case *holdFrames:
			table.Hold()
			close(m.done)
		case *releaseFrames:
			table.Release()
			close(m.done)
		case *readState:
			m.reply <- tableState{Stats: table.Stats(), Pending: table.Pending()}
		case *stopActor:
			table.Close(errActorStopped)
			return
		default:
			a.tb.Errorf("test actor: unexpected message %T dropped", m)
		}
	}
}

// send is the table's Sender: it records the frame for the script.
func (a *testActor) send(c *dispatcher.Call, frame []byte) {
	if a.cfg.Discard {
		return
	}
	msg, werr := messages.Decode(frame)
	if werr != nil {
		a.tb.Errorf("sender: invalid frame %s: %v", frame, werr)
	}
	select {
	case a.frames <- sentFrame{Route: c.Route, Raw: bytes.Clone(frame), Msg: msg}:
	default:
		a.tb.Errorf("sender: frame buffer full; dropped %s", frame)
	}
}

// await receives from ch, failing the test with a goroutine dump when
// nothing arrives before the watchdog.
func await[T any](tb testing.TB, ch <-chan T, what string) T {
	tb.Helper()
	timer := time.NewTimer(watchdog)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		tb.Fatalf("watchdog: still waiting for %s\n%s", what, buf)
		panic("unreachable")
	}
}

// Script steps. Each waits until the actor has applied it.

func (a *testActor) respond(msg *messages.Message) bool {
	handled := make(chan bool, 1)
	a.mailbox <- &deliverResponse{msg: msg, handled: handled}
	return await(a.tb, handled, "the actor to apply a response")
}

func (a *testActor) respondResult(id messages.ID, result string) bool {
	return a.respond(&messages.Message{ID: id, Result: jsontext.Value(result)})
}

func (a *testActor) respondError(id messages.ID, e *messages.Error) bool {
	return a.respond(&messages.Message{ID: id, Error: e})
}

func (a *testActor) cancelled(p *messages.CancelledParams) bool {
	handled := make(chan bool, 1)
	a.mailbox <- &deliverCancelled{params: p, handled: handled}
	return await(a.tb, handled, "the actor to apply notifications/cancelled")
}

func (a *testActor) progress(p *messages.ProgressParams) bool {
	routed := make(chan bool, 1)
	a.mailbox <- &deliverProgress{params: p, routed: routed}
	return await(a.tb, routed, "the actor to apply notifications/progress")
}

func (a *testActor) close(err error) {
	done := make(chan struct{})
	a.mailbox <- &closeTable{err: err, done: done}
	await(a.tb, done, "the actor to close the table")
}

func (a *testActor) hold() {
	done := make(chan struct{})
	a.mailbox <- &holdFrames{done: done}
	await(a.tb, done, "the actor to hold frames")
}

func (a *testActor) release() {
	done := make(chan struct{})
	a.mailbox <- &releaseFrames{done: done}
	await(a.tb, done, "the actor to release frames")
}

// state reads the table's counters. It is also a barrier: everything posted
// before it has been applied when it returns.
func (a *testActor) state() tableState {
	reply := make(chan tableState, 1)
	a.mailbox <- &readState{reply: reply}
	return await(a.tb, reply, "the actor to report its state")
}

// nextFrame returns the next frame the table sent.
func (a *testActor) nextFrame() sentFrame {
	a.tb.Helper()
	return await(a.tb, a.frames, "a frame from the table")
}

// nextRequest returns the next frame, which must be a request for method.
func (a *testActor) nextRequest(method string) sentFrame {
	a.tb.Helper()
	f := a.nextFrame()
	require.NotNil(a.tb, f.Msg, "frame %s", f.Raw)
	require.Equal(a.tb, messages.KindRequest, f.Msg.Kind(), "frame %s", f.Raw)
	require.Equal(a.tb, method, f.Msg.Method, "frame %s", f.Raw)
	return f
}

// nextCancelled returns the params of the next frame, which must be
// notifications/cancelled.
func (a *testActor) nextCancelled() *messages.CancelledParams {
	a.tb.Helper()
	f := a.nextFrame()
	require.NotNil(a.tb, f.Msg, "frame %s", f.Raw)
	require.Equal(a.tb, messages.KindNotification, f.Msg.Kind(), "frame %s", f.Raw)
	require.Equal(a.tb, messages.MethodCancelled, f.Msg.Method, "frame %s", f.Raw)
	var p messages.CancelledParams
	require.NoError(a.tb, json.Unmarshal(f.Msg.Params, &p))
	return &p
}

// assertNoFrames checks, once everything posted so far has been applied,
// that the table sent nothing more.
func (a *testActor) assertNoFrames() {
	a.tb.Helper()
	a.state()
	select {
	case f := <-a.frames:
		assert.Fail(a.tb, "unexpected frame", "%s", f.Raw)
	default:
	}
}

// callResult is what one Call returned, and on which goroutine it ran.
type callResult struct {
	Raw jsontext.Value
	Err error
	GID uint64
}

// goCall runs Call on a new goroutine, as a tool handler would.
func (a *testActor) goCall(ctx context.Context, method string, params any, opts ...dispatcher.CallOption) <-chan callResult {
	out := make(chan callResult, 1)
	go func() {
		gid := goroutineID()
		raw, err := a.client.Call(ctx, method, params, opts...)
		out <- callResult{Raw: raw, Err: err, GID: gid}
	}()
	return out
}

// call starts a Call and returns its result channel and its request frame.
func (a *testActor) call(ctx context.Context, method string, params any, opts ...dispatcher.CallOption) (<-chan callResult, sentFrame) {
	a.tb.Helper()
	out := a.goCall(ctx, method, params, opts...)
	return out, a.nextRequest(method)
}

// bubble runs f as subtest name inside a synctest bubble.
func bubble(t *testing.T, name string, f func(t *testing.T)) {
	t.Helper()
	t.Run(name, func(t *testing.T) { synctest.Test(t, f) })
}

// goroutineID returns the running goroutine's ID, parsed from its stack
// header ("goroutine 18 [running]:").
func goroutineID() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	b = b[:bytes.IndexByte(b, ' ')]
	id, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		panic("cannot parse goroutine ID from " + string(buf[:]))
	}
	return id
}

// intID reads a frame's ID as an integer.
func intID(tb testing.TB, f sentFrame) int64 {
	tb.Helper()
	n, ok := f.Msg.ID.Int()
	require.True(tb, ok, "frame ID %s is not an integer", f.Msg.ID.Raw())
	return n
}
