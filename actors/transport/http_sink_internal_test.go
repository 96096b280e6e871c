package transport

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/messages"
)

// TestSinkFirstTakesALateJob checks that a handler handed over after the
// HTTP goroutine began waiting (the session's mailbox was busy with
// another goroutine when the request arrived) is still run by it.
func TestSinkFirstTakesALateJob(t *testing.T) {
	// Run races with first: over the rounds, it comes both before first
	// looks and while first waits.
	for range 200 {
		s := newHTTPSink(8)
		got := make(chan func() []byte, 1)
		go func() {
			job, _, _, _ := s.first(context.Background())
			got <- job
		}()
		require.True(t, s.Run(func() []byte { return []byte("answer") }))
		job := <-got
		require.NotNil(t, job, "the job handed over")
		assert.Equal(t, "answer", string(job()))
	}

	t.Run("frames first", func(t *testing.T) {
		s := newHTTPSink(8)
		require.True(t, s.Deliver(messages.Frame{Data: []byte("{}"), End: true}))
		job, frames, closed, ok := s.first(context.Background())
		assert.Nil(t, job)
		assert.Len(t, frames, 1)
		assert.False(t, closed)
		assert.True(t, ok)
	})
}
