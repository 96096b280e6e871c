package session

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/messages"
)

// TestRestoredEventLog checks a session's event log rebuilt from what the
// event log kept of it on a node that was then lost: a client resumes any
// stream from an event it saw; a request whose handler was lost ends with
// an error; nothing the restored session numbers reuses an event ID the
// lost node may have given.
func TestRestoredEventLog(t *testing.T) {
	lost := newTestStreamSet(&recordStreams{})
	var kept []LoggedEvent
	lost.logEvent = func(e LoggedEvent) { kept = append(kept, e) }

	lost.send(nil, []byte(`{"standalone":1}`), false) // no GET: logged for later
	answered, _ := answer(&lost, 1)
	sink := lost.out.(*recordStreams).sink()
	running := lost.open(sink.id, messages.StringID("slow"))
	lost.send(running, []byte(`{"progress":2}`), false)
	seen := sink.frames[1].EventID // after the priming event
	require.Len(t, kept, 4, "every event with an ID is logged")
	assert.Equal(t, LoggedEvent{Stream: running.id, Seq: 1, Request: messages.StringID("slow"), Data: []byte(`{"progress":2}`)}, kept[3])

	out := &recordStreams{}
	ss := newTestStreamSet(out)
	var again []LoggedEvent
	ss.logEvent = func(e LoggedEvent) { again = append(again, e) }
	ss.restore(kept)

	t.Run("a request that was running ends with an error", func(t *testing.T) {
		conn := out.sink()
		ss.attach(conn.id, seen)
		require.Equal(t, []messages.StreamSignal{messages.SignalResumed}, conn.signals)
		require.Len(t, conn.frames, 1)
		f := conn.frames[0]
		assert.True(t, f.End)
		assert.Contains(t, string(f.Data), `"id":"slow"`)
		assert.Contains(t, string(f.Data), "lost before it answered")
		require.Len(t, again, 1, "the error is logged: another loss keeps it")
		assert.True(t, again[0].End)
	})
	t.Run("an answered request is replayed", func(t *testing.T) {
		conn := out.sink()
		ss.attach(conn.id, eventID(answered.id, 1))
		require.Len(t, conn.frames, 1)
		assert.Equal(t, `{"result":1}`, string(conn.frames[0].Data))
		assert.True(t, conn.frames[0].End)
	})
	t.Run("new streams take IDs the lost node never gave", func(t *testing.T) {
		st := ss.open(out.sink().id, messages.IntID(9))
		assert.Greater(t, len(st.id), len(running.id))
		ss.send(nil, []byte(`{"standalone":2}`), false)
		assert.Greater(t, ss.standalone.seq, uint64(restoreGap))
	})
	t.Run("the standalone stream resumes after an event the log lost", func(t *testing.T) {
		conn := out.sink()
		ss.attach(conn.id, eventID("0", 2)) // given by the lost node, never logged
		require.Equal(t, []messages.StreamSignal{messages.SignalAttached}, conn.signals)
		var data []string
		for _, f := range conn.frames {
			data = append(data, string(f.Data))
		}
		assert.Equal(t, `{"standalone":2}`, strings.Join(data, ""), "only what followed, then the priming ID")
	})
}

// TestRestoreIgnoresForeignEvents checks that events no stream of the
// package could have logged, duplicates, and events after a response are
// left out of a restored log.
func TestRestoreIgnoresForeignEvents(t *testing.T) {
	ss := newTestStreamSet(&recordStreams{})
	ss.restore([]LoggedEvent{
		{Stream: "x", Seq: 1, Data: []byte(`{}`)},
		{Stream: "3", Seq: 1, Request: messages.IntID(3), Data: []byte(`{"a":1}`), End: true},
		{Stream: "3", Seq: 1, Request: messages.IntID(3), Data: []byte(`{"a":1}`), End: true},
		{Stream: "3", Seq: 2, Request: messages.IntID(3), Data: []byte(`{"a":2}`)},
	})
	require.Len(t, ss.log, 1)
	assert.Equal(t, `{"a":1}`, string(ss.log[0].data))
	assert.Nil(t, ss.byID["x"])
}
