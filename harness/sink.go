package harness

import (
	"github.com/mcp-actors/mcp-actors/messages"
)

// streamSink is the messages.Sink of one stream of a harness client. It
// hands frames to the client's pump through an unbounded queue, so the
// session actor never blocks on it.
type streamSink struct {
	c      *Client
	stream string
}

// Deliver queues the frame for the client.
func (s *streamSink) Deliver(f messages.Frame) bool {
	if f.Data == nil {
		return true // a priming event carries no message
	}
	s.c.queue.push(frameIn{stream: s.stream, data: f.Data})
	return true
}

// Close ends the stream; the harness has nothing to release.
func (s *streamSink) Close() {}

// frameIn is a frame waiting for the client's pump.
type frameIn struct {
	stream string
	data   []byte
}
