package router_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/actors/router"
	"github.com/mcp-actors/mcp-actors/messages"
)

func TestStreamsRegisterGivesDistinctIDsOfTheNode(t *testing.T) {
	for _, node := range []string{"", "n1"} {
		t.Run("node "+node, func(t *testing.T) {
			s := router.NewStreams(node)
			assert.Equal(t, node, s.Node())
			assert.NotZero(t, s.Boot())
			a, b := s.Register(sess, &recorder{}), s.Register(sess, &recorder{})
			assert.Equal(t, node, a.Node)
			assert.Equal(t, node, b.Node)
			assert.Equal(t, s.Boot(), a.Boot, "an ID names the registry's boot")
			assert.False(t, a.IsZero(), "a registered stream is never the zero stream")
			assert.False(t, b.IsZero())
			assert.NotEqual(t, a, b)
			assert.True(t, s.Holds(a))
			assert.True(t, s.Holds(b))
			assert.Equal(t, 2, s.Len())
		})
	}
}

func TestStreamsRegisterConcurrently(t *testing.T) {
	s := router.NewStreams("n1")
	const goroutines, each = 8, 100
	ids := make(chan messages.StreamID, goroutines*each)
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range each {
				ids <- s.Register(sess, &recorder{})
			}
		})
	}
	wg.Wait()
	close(ids)
	seen := map[messages.StreamID]bool{}
	for id := range ids {
		assert.False(t, seen[id], "%v given twice", id)
		seen[id] = true
	}
	assert.Len(t, seen, goroutines*each)
	assert.Equal(t, goroutines*each, s.Len())
}

func TestStreamsDeliver(t *testing.T) {
	s := router.NewStreams("n1")
	r := &recorder{}
	id := s.Register(sess, r)
	other := &recorder{}
	s.Register(sess, other)

	assert.True(t, s.Deliver(frame(id, `{"a":1}`)))
	assert.True(t, s.Deliver(signal(id, messages.SignalClosed)))
	assert.Equal(t, []messages.StreamEvent{frame(id, `{"a":1}`), signal(id, messages.SignalClosed)}, r.events())
	assert.Empty(t, other.events(), "an event reaches its own stream only")

	r.refuse.Store(true)
	assert.False(t, s.Deliver(frame(id, `{"a":2}`)), "what the receiver refuses is not taken")
	assert.Equal(t, router.Refused, s.Offer(frame(id, `{"a":3}`)))
}

func TestStreamsUnregister(t *testing.T) {
	s := router.NewStreams("n1")
	r := &recorder{}
	id := s.Register(sess, r)
	s.Unregister(id)

	assert.False(t, s.Deliver(frame(id, `{}`)))
	assert.Equal(t, router.NoStream, s.Offer(frame(id, `{}`)))
	assert.Empty(t, r.events())
	assert.False(t, s.Holds(id))
	assert.True(t, s.Gone(id))
	assert.Zero(t, s.Len())
	s.Unregister(id) // twice is harmless
}

func TestStreamsNeverDeliverOtherNodes(t *testing.T) {
	s := router.NewStreams("n1")
	r := &recorder{}
	id := s.Register(sess, r)
	for _, node := range []string{"", "n2", "N1", "n1 "} {
		t.Run("node "+node, func(t *testing.T) {
			elsewhere := messages.StreamID{Node: node, Boot: id.Boot, N: id.N}
			assert.Equal(t, router.NoStream, s.Offer(frame(elsewhere, `{}`)))
			assert.False(t, s.Holds(elsewhere))
			assert.True(t, s.Gone(elsewhere))

			s.Unregister(elsewhere)
			assert.True(t, s.Holds(id), "another node's ID touches nothing here")
			assert.True(t, s.Deliver(frame(id, `{}`)), "nor the stream of the same number")
		})
	}
	for _, ev := range r.events() {
		assert.Equal(t, id, ev.Stream)
	}
}

// TestStreamsNeverDeliverOtherBoots: a node that restarts under the same
// name numbers its streams from 1 again, with a boot of its own. An event
// for a stream of its earlier run finds no stream, not the new stream of
// the same number.
func TestStreamsNeverDeliverOtherBoots(t *testing.T) {
	before, after := router.NewStreams("n1"), router.NewStreams("n1")
	require.NotEqual(t, before.Boot(), after.Boot(), "each run has its own boot")
	old := before.Register(sess, &recorder{})
	r := &recorder{}
	id := after.Register(sess, r)
	require.Equal(t, old.N, id.N, "both runs gave their first stream number 1")

	for _, ev := range []messages.StreamEvent{frame(old, `{"from":"the earlier run"}`), signal(old, messages.SignalClosed)} {
		assert.Equal(t, router.NoStream, after.Offer(ev))
	}
	assert.Equal(t, router.NoStream, after.Offer(frame(messages.StreamID{Node: "n1", N: id.N}, `{}`)), "nor an ID without a boot")
	after.Unregister(old)
	assert.False(t, after.Gone(id), "the earlier run's ID touches nothing here")
	assert.True(t, after.Gone(old))
	assert.Empty(t, r.events())
	assert.Zero(t, after.ForeignEvents(), "a stream that does not exist is no foreign event")
}

// TestStreamsTakeEventsOfTheirSessionOnly: a stream takes events from the
// session it was registered for; another session's are dropped and
// counted, and do not end the stream.
func TestStreamsTakeEventsOfTheirSessionOnly(t *testing.T) {
	s := router.NewStreams("n1")
	r := &recorder{}
	id := s.Register(sess, r)
	for _, from := range []string{"n1.other", "", "n1.S"} {
		ev := frame(id, `{"stolen":true}`)
		ev.Session = from
		assert.Equal(t, router.Foreign, s.Offer(ev), "from %q", from)
		ev = signal(id, messages.SignalClosed)
		ev.Session = from
		assert.False(t, s.Deliver(ev))
	}
	assert.Equal(t, int64(6), s.ForeignEvents())
	assert.Empty(t, r.events())
	assert.Equal(t, router.Delivered, s.Offer(frame(id, `{"mine":true}`)))
	assert.Equal(t, []messages.StreamEvent{frame(id, `{"mine":true}`)}, r.events())
}

// TestStreamsBindOnTheFirstEvent: a stream registered without a session
// belongs to the session of its first event.
func TestStreamsBindOnTheFirstEvent(t *testing.T) {
	s := router.NewStreams("n1")
	r := &recorder{}
	id := s.Register("", r)
	anonymous := frame(id, `{}`)
	anonymous.Session = ""
	assert.Equal(t, router.Foreign, s.Offer(anonymous), "an event of no session binds nothing")
	assert.Equal(t, router.Delivered, s.Offer(frame(id, `1`)))
	other := frame(id, `2`)
	other.Session = "n1.other"
	assert.Equal(t, router.Foreign, s.Offer(other), "bound to the first event's session")
	assert.Equal(t, router.Delivered, s.Offer(frame(id, `3`)))
	assert.Equal(t, []messages.StreamEvent{frame(id, `1`), frame(id, `3`)}, r.events())
}

func TestStreamsGone(t *testing.T) {
	s := router.NewStreams("n1")
	assert.True(t, s.Gone(messages.StreamID{Node: "n1", Boot: s.Boot(), N: 1}), "an unknown stream")
	assert.True(t, s.Gone(messages.StreamID{Node: "n1"}), "the zero stream")

	r := &recorder{}
	id := s.Register(sess, r)
	assert.False(t, s.Gone(id))
	r.gone.Store(true)
	assert.True(t, s.Gone(id), "Gone follows the receiver")
}

// TestStreamsDropLowerEpochs: a stream keeps the highest owner epoch of
// the events it took and drops an event of a lower one — a late event of
// an owner that lost the session. Events of no epoch (one node, or a
// release before epochs) are not compared.
func TestStreamsDropLowerEpochs(t *testing.T) {
	s := router.NewStreams("n1")
	r := &recorder{}
	id := s.Register(sess, r)
	frame := func(epoch uint64, data string) messages.StreamEvent {
		return messages.StreamEvent{Stream: id, Session: sess, Epoch: epoch, Frame: messages.Frame{Data: []byte(data)}}
	}
	assert.Equal(t, router.Delivered, s.Offer(frame(1, `{"a":1}`)))
	assert.Equal(t, router.Delivered, s.Offer(frame(2, `{"a":2}`)), "the new owner's")
	assert.Equal(t, router.Stale, s.Offer(frame(1, `{"a":3}`)), "the old owner's, late")
	assert.Equal(t, router.Delivered, s.Offer(frame(2, `{"a":4}`)))
	assert.Equal(t, router.Delivered, s.Offer(frame(0, `{"a":5}`)), "no epoch: not compared")
	assert.Equal(t, int64(1), s.StaleEvents())
	var got []string
	for _, ev := range r.events() {
		got = append(got, string(ev.Frame.Data))
	}
	assert.Equal(t, []string{`{"a":1}`, `{"a":2}`, `{"a":4}`, `{"a":5}`}, got)
}
