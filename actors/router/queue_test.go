package router_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/actors/router"
	"github.com/mcp-actors/mcp-actors/messages"
)

var qid = messages.StreamID{N: 1}

// frames returns n frames of qid, numbered from first.
func frames(first, n int) []messages.StreamEvent {
	evs := make([]messages.StreamEvent, n)
	for i := range evs {
		evs[i] = frame(qid, fmt.Sprint(first+i))
	}
	return evs
}

// receiveAll hands q every event and requires it to take each.
func receiveAll(t *testing.T, q router.Receiver, evs []messages.StreamEvent) {
	t.Helper()
	for _, ev := range evs {
		require.True(t, q.Receive(ev), "event %v", ev)
	}
}

// take returns a copy of q's batch (a batch is valid until the next Take).
func take(q *router.Queue) []messages.StreamEvent {
	return append([]messages.StreamEvent(nil), q.Take()...)
}

func TestQueueTakesInOrderInBatches(t *testing.T) {
	q := router.NewQueue(t.Context(), 8, nil)
	assert.Empty(t, q.Take())

	receiveAll(t, q, frames(1, 3))
	assert.Equal(t, frames(1, 3), take(q))
	assert.Empty(t, q.Take(), "a batch is taken once")

	receiveAll(t, q, frames(4, 2))
	receiveAll(t, q, []messages.StreamEvent{signal(qid, messages.SignalAttached)})
	receiveAll(t, q, frames(6, 1))
	assert.Equal(t, append(append(frames(4, 2), signal(qid, messages.SignalAttached)), frames(6, 1)...), take(q))

	// The bound is on the frames not taken yet: taking makes room.
	for i := range 3 {
		receiveAll(t, q, frames(10*i, 8))
		assert.Equal(t, frames(10*i, 8), take(q))
	}
}

func TestQueueRefusesPastMaxFrames(t *testing.T) {
	q := router.NewQueue(t.Context(), 2, nil)
	receiveAll(t, q, frames(1, 2))
	assert.False(t, q.Receive(frame(qid, `3`)), "the third frame is one too many")

	// Everything after is refused, ending signals too.
	assert.False(t, q.Receive(frame(qid, `4`)))
	assert.False(t, q.Receive(signal(qid, messages.SignalAttached)))
	assert.False(t, q.Receive(signal(qid, messages.SignalClosed)))

	want := append(frames(1, 2), signal(qid, messages.SignalClosed))
	assert.Equal(t, want, take(q), "the frames taken, then the end")
	assert.False(t, q.Receive(frame(qid, `5`)), "taking does not reopen an ended queue")
	assert.Empty(t, q.Take())
}

func TestQueueAlwaysTakesAnEndingSignal(t *testing.T) {
	for _, sig := range []messages.StreamSignal{messages.SignalConflict, messages.SignalClosed, messages.SignalNotFound} {
		t.Run(sig.String(), func(t *testing.T) {
			q := router.NewQueue(t.Context(), 1, nil)
			receiveAll(t, q, frames(1, 1)) // full
			assert.True(t, q.Receive(signal(qid, sig)), "an ending signal is taken on a full queue")
			assert.False(t, q.Receive(signal(qid, messages.SignalClosed)), "nothing follows the end")
			assert.False(t, q.Receive(frame(qid, `2`)))
			assert.Equal(t, append(frames(1, 1), signal(qid, sig)), take(q))
		})
	}
	t.Run("on an empty queue of no frames", func(t *testing.T) {
		q := router.NewQueue(t.Context(), 0, nil)
		assert.True(t, q.Receive(signal(qid, messages.SignalNotFound)))
		assert.Equal(t, []messages.StreamEvent{signal(qid, messages.SignalNotFound)}, take(q))
	})
}

func TestQueueSignalsThatDoNotEndAreNoFrames(t *testing.T) {
	q := router.NewQueue(t.Context(), 1, nil)
	evs := []messages.StreamEvent{
		signal(qid, messages.SignalAttached),
		signal(qid, messages.SignalResumed),
		frame(qid, `1`),
	}
	receiveAll(t, q, evs)
	assert.Equal(t, evs, take(q))
}

func TestQueueGoneFollowsItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	q := router.NewQueue(ctx, 1, nil)
	assert.False(t, q.Gone())
	cancel()
	assert.True(t, q.Gone())
}

func TestQueueWake(t *testing.T) {
	t.Run("its own", func(t *testing.T) {
		q := router.NewQueue(t.Context(), 4, nil)
		assertNotSignalled(t, q.Wake())
		receiveAll(t, q, frames(1, 2))
		assertSignalled(t, q.Wake())
		assertNotSignalled(t, q.Wake()) // two events, one wake-up: it says "look"
	})
	t.Run("shared", func(t *testing.T) {
		wake := make(chan struct{}, 1)
		a := router.NewQueue(t.Context(), 4, wake)
		b := router.NewQueue(t.Context(), 4, wake)
		assert.Equal(t, (<-chan struct{})(wake), a.Wake())
		assert.Equal(t, (<-chan struct{})(wake), b.Wake())

		receiveAll(t, b, frames(1, 1))
		assertSignalled(t, wake)
		assert.Empty(t, a.Take())
		assert.Equal(t, frames(1, 1), take(b))

		receiveAll(t, a, []messages.StreamEvent{signal(qid, messages.SignalClosed)})
		assertSignalled(t, wake)
		assertNotSignalled(t, wake)
	})
}

func assertSignalled(t *testing.T, c <-chan struct{}) {
	t.Helper()
	select {
	case <-c:
	default:
		t.Error("the wake channel was not signalled")
	}
}

func assertNotSignalled(t *testing.T, c <-chan struct{}) {
	t.Helper()
	select {
	case <-c:
		t.Error("the wake channel was signalled")
	default:
	}
}

func TestQueueWait(t *testing.T) {
	t.Run("returns what is queued", func(t *testing.T) {
		q := router.NewQueue(t.Context(), 4, nil)
		receiveAll(t, q, frames(1, 2))
		batch, ok := q.Wait(t.Context())
		require.True(t, ok)
		assert.Equal(t, frames(1, 2), batch)
	})
	t.Run("waits for an event", func(t *testing.T) {
		q := router.NewQueue(t.Context(), 4, nil)
		ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
		defer cancel()
		done := make(chan struct{})
		go func() {
			defer close(done)
			q.Receive(frame(qid, `1`))
		}()
		batch, ok := q.Wait(ctx)
		require.True(t, ok, "no event before the deadline")
		assert.Equal(t, frames(1, 1), batch)
		<-done
	})
	t.Run("returns false when its context ends", func(t *testing.T) {
		q := router.NewQueue(t.Context(), 4, nil)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		batch, ok := q.Wait(ctx)
		assert.False(t, ok)
		assert.Nil(t, batch)
	})
	t.Run("returns false when its context ends while it waits", func(t *testing.T) {
		q := router.NewQueue(t.Context(), 4, nil)
		ctx, cancel := context.WithCancel(t.Context())
		type result struct {
			batch []messages.StreamEvent
			ok    bool
		}
		res := make(chan result)
		go func() {
			batch, ok := q.Wait(ctx)
			res <- result{batch, ok}
		}()
		cancel()
		r := <-res
		assert.False(t, r.ok)
		assert.Nil(t, r.batch)
	})
	t.Run("a stale wake-up does not end the wait", func(t *testing.T) {
		wake := make(chan struct{}, 1)
		q := router.NewQueue(t.Context(), 4, wake)
		wake <- struct{}{} // another queue's event, already taken
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, ok := q.Wait(ctx)
		assert.False(t, ok, "an empty batch is never returned")
	})
}
