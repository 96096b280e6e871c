package harness

import (
	"github.com/mcp-actors/mcp-actors/actors/router"
	"github.com/mcp-actors/mcp-actors/messages"
)

// streamSink is the router.Receiver of one stream of a harness client: a
// request's, or the standalone stream. It hands frames to the client's
// pump through an unbounded queue, so the session actor never blocks on
// it.
type streamSink struct {
	c          *Client
	rt         router.Router // whose registry holds it
	stream     string
	standalone bool
}

// Receive queues a frame for the client. A request's stream is done with
// its response; the standalone stream ends with the session.
func (s *streamSink) Receive(ev messages.StreamEvent) bool {
	switch {
	case ev.Signal == messages.SignalFrame:
		if ev.Frame.Data != nil { // a priming event carries no message
			s.c.queue.push(frameIn{stream: s.stream, data: ev.Frame.Data})
		}
		if ev.Frame.End && !s.standalone {
			s.rt.Streams().Unregister(ev.Stream)
		}
	case ev.Signal.Ends():
		if s.standalone {
			s.c.endOnce.Do(func() { close(s.c.ended) })
		} else {
			s.rt.Streams().Unregister(ev.Stream)
		}
	}
	return true
}

// Gone implements router.Receiver: a harness client never goes away.
func (s *streamSink) Gone() bool { return false }

// frameIn is a frame waiting for the client's pump.
type frameIn struct {
	stream string
	data   []byte
}
