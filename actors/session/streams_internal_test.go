package session

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/messages"
)

// recordSink keeps what one stream is given.
type recordSink struct {
	id      messages.StreamID
	frames  []messages.Frame
	signals []messages.StreamSignal
}

// recordStreams is a Streams that keeps what each stream is given.
type recordStreams struct {
	next  uint64
	sinks map[messages.StreamID]*recordSink
}

func (r *recordStreams) sink() *recordSink {
	if r.sinks == nil {
		r.sinks = map[messages.StreamID]*recordSink{}
	}
	r.next++
	s := &recordSink{id: messages.StreamID{N: r.next}}
	r.sinks[s.id] = s
	return s
}

func (r *recordStreams) DeliverStream(ev messages.StreamEvent) bool {
	s := r.sinks[ev.Stream]
	if s == nil {
		return false
	}
	if ev.Signal == messages.SignalFrame {
		s.frames = append(s.frames, ev.Frame)
	} else {
		s.signals = append(s.signals, ev.Signal)
	}
	return true
}

func (r *recordStreams) StreamGone(messages.StreamID) bool { return false }

// newTestStreamSet returns a resumable, primed stream set on out.
func newTestStreamSet(out *recordStreams) streamSet {
	ss := newStreamSet(true, Limits{}.withDefaults(), out)
	ss.prime = true
	return ss
}

// answer runs one request stream to its response on a live connection,
// with one event before the response, and returns the stream and the ID of
// that first event.
func answer(ss *streamSet, n int) (*stream, string) {
	sink := ss.out.(*recordStreams).sink()
	st := ss.open(sink.id, messages.IntID(1))
	ss.send(st, []byte(`{"progress":`+strconv.Itoa(n)+`}`), false)
	ss.send(st, []byte(`{"result":`+strconv.Itoa(n)+`}`), true)
	return st, sink.frames[1].EventID // after the priming event
}

// TestAnsweredStreamsStayResumable checks that a response handed to a live
// connection can still be replayed (the client may have hung up before the
// write), for the last answeredRetain streams.
func TestAnsweredStreamsStayResumable(t *testing.T) {
	out := &recordStreams{}
	ss := newTestStreamSet(out)
	_, firstEvent := answer(&ss, 0)
	for i := 1; i < answeredRetain; i++ {
		answer(&ss, i)
	}

	resumed := out.sink()
	ss.attach(resumed.id, firstEvent)
	require.Equal(t, []messages.StreamSignal{messages.SignalResumed}, resumed.signals)
	require.Len(t, resumed.frames, 1, "the response follows the event seen")
	assert.JSONEq(t, `{"result":0}`, string(resumed.frames[0].Data))
	assert.True(t, resumed.frames[0].End)

	// An event the session no longer holds opens the standalone stream.
	unknown := func(ev string) {
		t.Helper()
		s := out.sink()
		ss.attach(s.id, ev)
		require.Equal(t, []messages.StreamSignal{messages.SignalAttached}, s.signals)
		assert.Equal(t, s.id, ss.standalone.conn, "%s: the standalone stream took the connection", ev)
		for _, f := range s.frames {
			assert.NotContains(t, string(f.Data), "result", "%s: nothing of the forgotten stream is replayed", ev)
		}
		ss.detach(s.id, nil)
	}
	unknown(firstEvent) // a stream answered on its resumed connection is forgotten

	_, oldest := answer(&ss, answeredRetain) // 1 … answeredRetain are retained
	for i := answeredRetain + 1; i <= 2*answeredRetain; i++ {
		answer(&ss, i) // each evicts the oldest
	}
	unknown(oldest) // evicted past the retained count
	assert.Len(t, ss.answered, answeredRetain)
	assert.LessOrEqual(t, len(ss.log), 2*answeredRetain, "only the retained streams' events are logged")
}

// TestDeliveredStandaloneEventsAreTrimmed checks that the log keeps only
// the last standaloneRetain standalone events a live GET was given (for a
// GET that resumes), keeps those it was not given, and counts them right
// while request streams come and go beside them.
func TestDeliveredStandaloneEventsAreTrimmed(t *testing.T) {
	out := &recordStreams{}
	ss := newTestStreamSet(out)
	standalone := func() (n int) {
		for _, e := range ss.log {
			if e.stream.standalone {
				n++
			}
		}
		return n
	}

	ss.send(nil, []byte(`{"queued":0}`), false) // no GET yet: not delivered
	get := out.sink()
	ss.attach(get.id, "")
	require.Equal(t, []messages.StreamSignal{messages.SignalAttached}, get.signals)
	for i := range 3 * ss.standaloneRetain {
		ss.send(nil, []byte(`{"n":`+strconv.Itoa(i)+`}`), false)
		if i%7 == 0 {
			answer(&ss, i)
		}
		require.Equal(t, standalone(), ss.standaloneEvents, "after event %d", i)
	}
	assert.Equal(t, ss.standaloneRetain, standalone(), "the delivered ones beyond the retained are gone")
	assert.GreaterOrEqual(t, len(get.frames), 3*ss.standaloneRetain, "every event reached the GET")

	ss.closeAll(nil)
	assert.Zero(t, ss.standaloneEvents)
	assert.Equal(t, []messages.StreamSignal{messages.SignalAttached, messages.SignalClosed}, get.signals)
}
