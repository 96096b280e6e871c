package session

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/messages"
)

// recordSink keeps what it is given.
type recordSink struct {
	frames []messages.Frame
	closed bool
}

func (s *recordSink) Deliver(f messages.Frame) bool { s.frames = append(s.frames, f); return true }
func (s *recordSink) Close()                        { s.closed = true }

// answer runs one request stream to its response on a live connection,
// with one event before the response, and returns the stream and the ID of
// that first event.
func answer(ss *streamSet, n int) (*stream, string) {
	sink := &recordSink{}
	st := ss.open(sink)
	ss.send(st, []byte(`{"progress":`+strconv.Itoa(n)+`}`), false)
	ss.send(st, []byte(`{"result":`+strconv.Itoa(n)+`}`), true)
	return st, sink.frames[1].EventID // after the priming event
}

// TestAnsweredStreamsStayResumable checks that a response handed to a live
// connection can still be replayed (the client may have hung up before the
// write), for the last answeredRetain streams.
func TestAnsweredStreamsStayResumable(t *testing.T) {
	ss := newStreamSet(true, Limits{}.withDefaults())
	ss.prime = true
	_, firstEvent := answer(&ss, 0)
	for i := 1; i < answeredRetain; i++ {
		answer(&ss, i)
	}

	resumed := &recordSink{}
	require.NoError(t, ss.attach(resumed, firstEvent))
	require.Len(t, resumed.frames, 1, "the response follows the event seen")
	assert.JSONEq(t, `{"result":0}`, string(resumed.frames[0].Data))
	assert.True(t, resumed.frames[0].End)
	assert.ErrorIs(t, ss.attach(&recordSink{}, firstEvent), messages.ErrUnknownEvent,
		"a stream answered on its resumed connection is forgotten")

	_, oldest := answer(&ss, answeredRetain) // 1 … answeredRetain are retained
	for i := answeredRetain + 1; i <= 2*answeredRetain; i++ {
		answer(&ss, i) // each evicts the oldest
	}
	assert.ErrorIs(t, ss.attach(&recordSink{}, oldest), messages.ErrUnknownEvent, "evicted past the retained count")
	assert.Len(t, ss.answered, answeredRetain)
	assert.LessOrEqual(t, len(ss.log), 2*answeredRetain, "only the retained streams' events are logged")
}

// TestDeliveredStandaloneEventsAreTrimmed checks that the log keeps only
// the last standaloneRetain standalone events a live GET was given (for a
// GET that resumes), keeps those it was not given, and counts them right
// while request streams come and go beside them.
func TestDeliveredStandaloneEventsAreTrimmed(t *testing.T) {
	ss := newStreamSet(true, Limits{}.withDefaults())
	ss.prime = true
	standalone := func() (n int) {
		for _, e := range ss.log {
			if e.stream.standalone {
				n++
			}
		}
		return n
	}

	ss.send(nil, []byte(`{"queued":0}`), false) // no GET yet: not delivered
	get := &recordSink{}
	require.NoError(t, ss.attach(get, ""))
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
}
