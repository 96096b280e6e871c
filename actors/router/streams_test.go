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
			a, b := s.Register(&recorder{}), s.Register(&recorder{})
			assert.Equal(t, node, a.Node)
			assert.Equal(t, node, b.Node)
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
				ids <- s.Register(&recorder{})
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
	id := s.Register(r)
	other := &recorder{}
	s.Register(other)

	assert.True(t, s.Deliver(frame(id, `{"a":1}`)))
	assert.True(t, s.Deliver(signal(id, messages.SignalClosed)))
	assert.Equal(t, []messages.StreamEvent{frame(id, `{"a":1}`), signal(id, messages.SignalClosed)}, r.events())
	assert.Empty(t, other.events(), "an event reaches its own stream only")

	r.refuse.Store(true)
	assert.False(t, s.Deliver(frame(id, `{"a":2}`)), "what the receiver refuses is not taken")
}

func TestStreamsUnregister(t *testing.T) {
	s := router.NewStreams("n1")
	r := &recorder{}
	id := s.Register(r)
	s.Unregister(id)

	assert.False(t, s.Deliver(frame(id, `{}`)))
	assert.Empty(t, r.events())
	assert.False(t, s.Holds(id))
	assert.True(t, s.Gone(id))
	assert.Zero(t, s.Len())
	s.Unregister(id) // twice is harmless
}

func TestStreamsNeverDeliverOtherNodes(t *testing.T) {
	s := router.NewStreams("n1")
	r := &recorder{}
	id := s.Register(r)
	for _, node := range []string{"", "n2", "N1", "n1 "} {
		t.Run("node "+node, func(t *testing.T) {
			elsewhere := messages.StreamID{Node: node, N: id.N}
			assert.False(t, s.Deliver(frame(elsewhere, `{}`)))
			assert.False(t, s.Holds(elsewhere))
			assert.True(t, s.Gone(elsewhere))

			s.Unregister(elsewhere)
			s.Replace(elsewhere, &recorder{})
			assert.True(t, s.Holds(id), "another node's ID touches nothing here")
			assert.True(t, s.Deliver(frame(id, `{}`)), "nor replaces the stream of the same number")
		})
	}
	for _, ev := range r.events() {
		assert.Equal(t, id, ev.Stream)
	}
}

func TestStreamsGone(t *testing.T) {
	s := router.NewStreams("n1")
	assert.True(t, s.Gone(messages.StreamID{Node: "n1", N: 1}), "an unknown stream")
	assert.True(t, s.Gone(messages.StreamID{Node: "n1"}), "the zero stream")

	r := &recorder{}
	id := s.Register(r)
	assert.False(t, s.Gone(id))
	r.gone.Store(true)
	assert.True(t, s.Gone(id), "Gone follows the receiver")
}

func TestStreamsReplace(t *testing.T) {
	s := router.NewStreams("n1")
	old, repl := &recorder{}, &recorder{}
	id := s.Register(old)
	require.True(t, s.Deliver(frame(id, `1`)))

	s.Replace(id, repl)
	require.True(t, s.Deliver(frame(id, `2`)))
	assert.Equal(t, []messages.StreamEvent{frame(id, `1`)}, old.events())
	assert.Equal(t, []messages.StreamEvent{frame(id, `2`)}, repl.events())
	assert.Equal(t, 1, s.Len())

	repl.gone.Store(true)
	assert.True(t, s.Gone(id), "Gone follows the new receiver")
	assert.False(t, old.Gone())
}
