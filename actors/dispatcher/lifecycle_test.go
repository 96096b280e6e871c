package dispatcher_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/actors/dispatcher"
	"github.com/mcp-actors/mcp-actors/messages"
)

var (
	errSessionEnded = errors.New("session ended")
	errOther        = errors.New("another reason")
)

func TestClose(t *testing.T) {
	tests := []struct {
		name    string
		closes  []error // Close is called with each, in order
		pending int     // calls waiting when the table closes
		want    error
	}{
		{"with a reason", []error{errSessionEnded}, 3, errSessionEnded},
		{"nil means ErrClosed", []error{nil}, 2, dispatcher.ErrClosed},
		{"idempotent: the first reason stays", []error{errSessionEnded, errOther, nil}, 1, errSessionEnded},
		{"no call waiting", []error{errSessionEnded}, 0, errSessionEnded},
	}
	for _, tt := range tests {
		bubble(t, tt.name, func(t *testing.T) {
			a := newTestActor(t, actorConfig{})
			outs := make([]<-chan callResult, tt.pending)
			for i := range outs {
				outs[i], _ = a.call(t.Context(), messages.MethodListRoots, nil)
			}

			for _, err := range tt.closes {
				a.close(err)
			}
			for i, out := range outs {
				r := await(t, out, "a pending call to fail")
				require.ErrorIs(t, r.Err, tt.want, "pending call %d", i)
				assert.EqualError(t, r.Err, `calling "roots/list": `+tt.want.Error())
				assert.Nil(t, r.Raw)
			}
			n := uint64(tt.pending)
			assert.Equal(t, tableState{Stats: dispatcher.Stats{Sent: n, FailedOnClose: n}}, a.state())

			// Later calls fail at once, without a frame or a new ID.
			r := await(t, a.goCall(t.Context(), messages.MethodElicit, nil), "a call on a closed table")
			require.ErrorIs(t, r.Err, tt.want)
			assert.EqualError(t, r.Err, `calling "elicitation/create": `+tt.want.Error())
			a.assertNoFrames()
			assert.Equal(t, tableState{Stats: dispatcher.Stats{Sent: n, FailedOnClose: n}}, a.state())

			// Answers to the failed calls are duplicates now.
			if tt.pending > 0 {
				assert.False(t, a.respondResult(messages.IntID(1), `{}`))
				assert.Equal(t, uint64(1), a.state().Stats.Duplicate)
			}
		})
	}
}

func TestHoldRelease(t *testing.T) {
	// holdThree holds the table and begins three calls, 1, 2 and 3 in that
	// order, each waiting for the one before to reach the table.
	holdThree := func(t *testing.T, a *testActor, ctxs [3]context.Context) [3]<-chan callResult {
		a.hold()
		var outs [3]<-chan callResult
		for i := range outs {
			outs[i] = a.goCall(ctxs[i], messages.MethodCreateMessage, map[string]int{"call": i + 1})
			synctest.Wait() // the caller is blocked: its Begin has been applied
		}
		a.assertNoFrames()
		assert.Equal(t, tableState{Pending: 3}, a.state(), "begun and waiting, nothing sent")
		for i, out := range outs {
			select {
			case r := <-out:
				t.Fatalf("call %d returned while held: %+v", i+1, r)
			default:
			}
		}
		return outs
	}
	background := func(t *testing.T) [3]context.Context {
		return [3]context.Context{t.Context(), t.Context(), t.Context()}
	}

	bubble(t, "held frames go out on release, in order", func(t *testing.T) {
		a := newTestActor(t, actorConfig{})
		outs := holdThree(t, a, background(t))

		a.release()
		for want := int64(1); want <= 3; want++ {
			f := a.nextRequest(messages.MethodCreateMessage)
			assert.Equal(t, want, intID(t, f))
			assert.JSONEq(t, `{"call":`+f.Msg.ID.Raw()+`}`, string(f.Msg.Params))
			require.True(t, a.respondResult(f.Msg.ID, `{"n":`+f.Msg.ID.Raw()+`}`))
		}
		for i, out := range outs {
			r := await(t, out, "a released call")
			require.NoError(t, r.Err)
			assert.JSONEq(t, `{"n":`+strconv.Itoa(i+1)+`}`, string(r.Raw))
		}
		assert.Equal(t, tableState{Stats: dispatcher.Stats{Sent: 3, Completed: 3}}, a.state())

		// After release, calls go straight out.
		out, f := a.call(t.Context(), messages.MethodPing, nil)
		assert.Equal(t, int64(4), intID(t, f))
		require.True(t, a.respondResult(f.Msg.ID, `{}`))
		require.NoError(t, await(t, out, "call 4").Err)
	})

	bubble(t, "a call cancelled while held is dropped silently", func(t *testing.T) {
		a := newTestActor(t, actorConfig{})
		ctxs := background(t)
		ctx, cancel := context.WithCancel(t.Context())
		ctxs[1] = ctx
		outs := holdThree(t, a, ctxs)

		cancel()
		require.Equal(t, context.Canceled, await(t, outs[1], "the cancelled call").Err)
		a.assertNoFrames() // no notifications/cancelled for a request never sent
		assert.Equal(t, tableState{Stats: dispatcher.Stats{Cancelled: 1}, Pending: 2}, a.state())

		a.release()
		f1 := a.nextRequest(messages.MethodCreateMessage)
		f3 := a.nextRequest(messages.MethodCreateMessage)
		assert.Equal(t, []int64{1, 3}, []int64{intID(t, f1), intID(t, f3)})
		a.assertNoFrames()
		require.True(t, a.respondResult(f1.Msg.ID, `{}`))
		require.True(t, a.respondResult(f3.Msg.ID, `{}`))
		require.NoError(t, await(t, outs[0], "call 1").Err)
		require.NoError(t, await(t, outs[2], "call 3").Err)
		assert.Equal(t, tableState{Stats: dispatcher.Stats{Sent: 2, Completed: 2, Cancelled: 1}}, a.state())
	})

	bubble(t, "the client cannot cancel or answer a call it was never sent", func(t *testing.T) {
		a := newTestActor(t, actorConfig{})
		outs := holdThree(t, a, background(t))

		require.False(t, a.cancelled(&messages.CancelledParams{RequestID: messages.IntID(2)}))
		require.False(t, a.respondResult(messages.IntID(1), `{}`), "an answer to a held request is stray")

		a.release()
		f1 := a.nextRequest(messages.MethodCreateMessage)
		f2 := a.nextRequest(messages.MethodCreateMessage)
		f3 := a.nextRequest(messages.MethodCreateMessage)
		assert.Equal(t, []int64{1, 2, 3}, []int64{intID(t, f1), intID(t, f2), intID(t, f3)})
		a.assertNoFrames()
		a.close(nil) // ends all three
		for i, out := range outs {
			require.ErrorIs(t, await(t, out, fmt.Sprintf("call %d", i+1)).Err, dispatcher.ErrClosed)
		}
	})

	bubble(t, "close while held fails the calls and release sends nothing", func(t *testing.T) {
		a := newTestActor(t, actorConfig{})
		outs := holdThree(t, a, background(t))

		a.close(errSessionEnded)
		for _, out := range outs {
			require.ErrorIs(t, await(t, out, "a held call").Err, errSessionEnded)
		}
		a.release()
		a.assertNoFrames()
		assert.Equal(t, tableState{Stats: dispatcher.Stats{FailedOnClose: 3}}, a.state())
	})
}

func TestClientDone(t *testing.T) {
	tests := []struct {
		name    string
		doneErr error
		want    error
	}{
		{"configured error", errSessionEnded, errSessionEnded},
		{"nil means ErrClosed", nil, dispatcher.ErrClosed},
	}
	for _, tt := range tests {
		bubble(t, "waiting call fails: "+tt.name, func(t *testing.T) {
			a := newTestActor(t, actorConfig{DoneErr: tt.doneErr})
			out, _ := a.call(t.Context(), messages.MethodListRoots, nil)
			a.leave()

			r := await(t, out, "the call to return")
			require.ErrorIs(t, r.Err, tt.want)
			assert.EqualError(t, r.Err, `calling "roots/list": `+tt.want.Error())
			assert.Nil(t, r.Raw)
		})
	}

	bubble(t, "calls after done fail with doneErr", func(t *testing.T) {
		a := newTestActor(t, actorConfig{DoneErr: errSessionEnded})
		a.leave()
		r := await(t, a.goCall(t.Context(), messages.MethodListRoots, nil), "the call to return")
		require.ErrorIs(t, r.Err, errSessionEnded)
	})

	// When the table has finished the call and the done channel has closed
	// by the time the caller looks, the table's outcome wins. A progress
	// callback that blocks on a gate holds the caller back until both are
	// ready; repeated, because Call's select picks at random among them.
	finished := []struct {
		name   string
		finish func(t *testing.T, a *testActor, id messages.ID)
		check  func(t *testing.T, r callResult)
	}{
		{
			name: "result",
			finish: func(t *testing.T, a *testActor, id messages.ID) {
				require.True(t, a.respondResult(id, `{"roots":[]}`))
			},
			check: func(t *testing.T, r callResult) {
				require.NoError(t, r.Err)
				assert.JSONEq(t, `{"roots":[]}`, string(r.Raw))
			},
		},
		{
			name: "JSON-RPC error",
			finish: func(t *testing.T, a *testActor, id messages.ID) {
				require.True(t, a.respondError(id, messages.Errorf(messages.CodeInvalidParams, "bad")))
			},
			check: func(t *testing.T, r callResult) {
				require.ErrorIs(t, r.Err, messages.ErrInvalidParams)
				assert.NotErrorIs(t, r.Err, errSessionEnded)
			},
		},
		{
			name: "remote cancellation",
			finish: func(t *testing.T, a *testActor, id messages.ID) {
				require.True(t, a.cancelled(&messages.CancelledParams{RequestID: id, Reason: "no"}))
			},
			check: func(t *testing.T, r callResult) {
				require.ErrorIs(t, r.Err, dispatcher.ErrRemoteCancelled)
				assert.NotErrorIs(t, r.Err, errSessionEnded)
			},
		},
		{
			name:   "close reason",
			finish: func(_ *testing.T, a *testActor, _ messages.ID) { a.close(errOther) },
			check: func(t *testing.T, r callResult) {
				require.ErrorIs(t, r.Err, errOther)
				assert.NotErrorIs(t, r.Err, errSessionEnded)
			},
		},
	}
	for _, tt := range finished {
		bubble(t, "finished before done: "+tt.name+" wins", func(t *testing.T) {
			for range 20 {
				a := newTestActor(t, actorConfig{DoneErr: errSessionEnded})
				entered, gate := make(chan struct{}), make(chan struct{})
				out, f := a.call(t.Context(), messages.MethodListRoots, nil, dispatcher.WithProgress(func(*messages.ProgressParams) {
					close(entered)
					<-gate
				}))
				require.True(t, a.progress(progressAt(f.Msg.ID, 1)))
				await(t, entered, "the callback to start")
				tt.finish(t, a, f.Msg.ID)
				a.leave()
				close(gate) // now both the outcome and done are ready

				tt.check(t, await(t, out, "the call to return"))
			}
		})
	}
}
