package dispatcher_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/actors/dispatcher"
	"github.com/mcp-actors/mcp-actors/messages"
)

// chanSuspender is a messages.Suspender that parks the caller on a
// channel: a Resume before a Suspend makes it return at once. With refuse
// it cannot suspend anyone.
type chanSuspender struct {
	wake     chan struct{}
	refuse   bool
	suspends atomic.Int32
	resumes  atomic.Int32
}

func newChanSuspender() *chanSuspender { return &chanSuspender{wake: make(chan struct{}, 1)} }

func (s *chanSuspender) Suspend() bool {
	if s.refuse {
		return false
	}
	s.suspends.Add(1)
	<-s.wake
	return true
}

func (s *chanSuspender) Resume() {
	s.resumes.Add(1)
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// TestCallSuspended checks a call made WithSuspender: it waits suspended,
// and each thing that ends or interrupts the wait resumes it: the answer,
// a progress update, the caller's context, the actor's end. A Suspender
// that cannot suspend leaves the call waiting as usual.
func TestCallSuspended(t *testing.T) {
	bubble(t, "answered", func(t *testing.T) {
		a := newTestActor(t, actorConfig{})
		s := newChanSuspender()
		out, f := a.call(t.Context(), messages.MethodListRoots, nil, dispatcher.WithSuspender(s))
		require.True(t, a.respondResult(f.Msg.ID, `{"roots":[]}`))
		r := await(t, out, "the call to return")
		require.NoError(t, r.Err)
		assert.JSONEq(t, `{"roots":[]}`, string(r.Raw))
		assert.Positive(t, s.suspends.Load(), "the caller waited suspended")
		assert.Positive(t, s.resumes.Load())
	})

	bubble(t, "progress, then the answer", func(t *testing.T) {
		a := newTestActor(t, actorConfig{})
		s := newChanSuspender()
		var log progressLog
		out, f := a.call(t.Context(), messages.MethodElicit, nil,
			dispatcher.WithSuspender(s), dispatcher.WithProgress(log.record))
		require.True(t, a.progress(progressAt(f.Msg.ID, 1)))
		synctest.Wait()
		assert.Equal(t, []float64{1}, log.progress, "the update woke the caller")
		require.True(t, a.progress(progressAt(f.Msg.ID, 2)))
		require.True(t, a.respondResult(f.Msg.ID, `{}`))
		require.NoError(t, await(t, out, "the call to return").Err)
		assert.Equal(t, []float64{1, 2}, log.progress)
	})

	bubble(t, "the caller's context ends", func(t *testing.T) {
		a := newTestActor(t, actorConfig{})
		s := newChanSuspender()
		ctx, cancel := context.WithCancel(t.Context())
		out, f := a.call(ctx, messages.MethodListRoots, nil, dispatcher.WithSuspender(s))
		cancel()
		r := await(t, out, "the call to return")
		require.ErrorIs(t, r.Err, context.Canceled)
		assert.Equal(t, f.Msg.ID, a.nextCancelled().RequestID, "the client is told")
	})

	bubble(t, "the actor is gone", func(t *testing.T) {
		a := newTestActor(t, actorConfig{DoneErr: errSessionEnded})
		s := newChanSuspender()
		out, _ := a.call(t.Context(), messages.MethodListRoots, nil, dispatcher.WithSuspender(s))
		a.leave()
		require.ErrorIs(t, await(t, out, "the call to return").Err, errSessionEnded)
	})

	bubble(t, "a Suspender that cannot suspend", func(t *testing.T) {
		a := newTestActor(t, actorConfig{})
		s := newChanSuspender()
		s.refuse = true
		out, f := a.call(t.Context(), messages.MethodListRoots, nil, dispatcher.WithSuspender(s))
		require.True(t, a.respondResult(f.Msg.ID, `{"roots":[]}`))
		require.NoError(t, await(t, out, "the call to return").Err)
		assert.Zero(t, s.suspends.Load())
	})
}
