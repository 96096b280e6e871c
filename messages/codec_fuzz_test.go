package messages_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/messages"
)

// FuzzDecodeActorMessage checks that DecodeActorMessage never panics, that
// whatever it cannot read is ErrBadEncoding, and that what it reads
// survives another trip: it encodes, decodes to an equal value (raw JSON
// normalised, see TestActorMessageRoundTripCompacts), and encodes to the
// same bytes again.
func FuzzDecodeActorMessage(f *testing.F) {
	for _, g := range goldenActorMessages {
		f.Add([]byte(g.want))
	}
	for _, seed := range []string{
		// Good, unusual.
		`{"type":"handleRequest","msg":{"jsonrpc":"2.0","id":"<a&b>","method":"x","params":{ "a" : [ 1 ] }}}`,
		`{"type":"handleRequest","stream":{"node":"n1","n":0},"msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}`,
		`{"type":"detachStream","stream":{"node":"n1"}}`,
		`{"type":"detachStream","stream":null}`,
		`{"type":"deliverResponse","msg":{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"m","data":null}}}`,
		`{"type":"notifyClient","data":null}`,
		`{"type":"notifyClient","data":"\u2028"}`,
		`{"Type":"deleteSession","PRINCIPAL":"p","unknown":[1,2,3]}`,
		`{"type":"closeSession","graceNs":-1}`,
		`{"type":"closeSession","graceNs":9223372036854775807}`,
		"{\"type\":\"attachStream\",\"principal\":\"\xff\",\"lastEventId\":\"\\ud800\"}",
		// Bad.
		`{"type":"closeSession","graceNs":9223372036854775808}`,
		`{"type":"closeSession","graceNs":1.5}`,
		`{"type":"handleNotification","msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}`,
		`{"type":"handleRequest","msg":{"jsonrpc":"2.0","method":"notifications/initialized"}}`,
		`{"type":"deliverResponse","msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}`,
		`{"type":"handleRequest","stream":{"n":1}}`,
		`{"type":"handleRequest","msg":null}`,
		`{"type":"handleRequest","msg":[]}`,
		`{"type":"handleRequest","msg":{"jsonrpc":"1.0","id":1,"method":"ping"}}`,
		`{"type":"detachStream","stream":{"n":-1}}`,
		`{"type":"detachStream","stream":[]}`,
		`{"type":"notifyClient"}`,
		`{"type":"launchMissiles"}`,
		`{"type":7}`,
		`{"type":"deleteSession"`,
		`{}`,
		`[]`,
		`null`,
		``,
		"\xff\xfe",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := messages.DecodeActorMessage(data)
		if err != nil {
			require.ErrorIs(t, err, messages.ErrBadEncoding)
			assert.Nil(t, m)
			return
		}
		require.NotNil(t, m)
		first, err := messages.EncodeActorMessage(m)
		require.NoError(t, err, "re-encoding %#v (from %q)", m, data)
		again, err := messages.DecodeActorMessage(first)
		require.NoError(t, err, "re-decoding %q (from %q)", first, data)
		assert.Equal(t, normaliseActorMessage(t, m), normaliseActorMessage(t, again), "from %q", data)
		second, err := messages.EncodeActorMessage(again)
		require.NoError(t, err)
		assert.Equal(t, string(first), string(second), "from %q", data)
	})
}

// FuzzDecodeStreamEvent is FuzzDecodeActorMessage for stream events.
func FuzzDecodeStreamEvent(f *testing.F) {
	for _, g := range goldenStreamEvents {
		f.Add([]byte(g.want))
	}
	for _, seed := range []string{
		// Good, unusual.
		`{"stream":{"n":1},"signal":0,"frame":{}}`,
		`{"stream":{"n":1},"signal":0,"frame":{"data":null}}`,
		`{"stream":{"n":1},"signal":0,"frame":{"data": { "a" : "<&>" } ,"end":false}}`,
		`{"stream":{"n":1},"signal":4,"frame":{"id":"1-1"}}`,
		`{"stream":null,"signal":5}`,
		`{"stream":{"node":"\u2028","n":18446744073709551615},"signal":0,"frame":{"id":"\ud800"}}`,
		`{"STREAM":{"N":2},"Signal":1}`,
		// Bad.
		`{"stream":{"n":1},"signal":6}`,
		`{"stream":{"n":1},"signal":256}`,
		`{"stream":{"n":1},"signal":-1}`,
		`{"stream":{"n":1},"signal":0}`,
		`{"stream":{"n":1},"signal":0,"frame":null}`,
		`{"stream":{"n":1},"signal":0,"frame":{"end":1}}`,
		`{"stream":{"n":18446744073709551616},"signal":1}`,
		`{"stream":"n1/1","signal":1}`,
		`{"stream":{"n":1},"signal":0,"frame":{"data":{}`,
		`{}`,
		`[]`,
		`null`,
		``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, err := messages.DecodeStreamEvent(data)
		if err != nil {
			require.ErrorIs(t, err, messages.ErrBadEncoding)
			assert.Zero(t, ev)
			return
		}
		if ev.Signal != messages.SignalFrame {
			assert.Zero(t, ev.Frame, "a signal carries no frame")
		}
		first, err := messages.EncodeStreamEvent(ev)
		require.NoError(t, err, "re-encoding %#v (from %q)", ev, data)
		again, err := messages.DecodeStreamEvent(first)
		require.NoError(t, err, "re-decoding %q (from %q)", first, data)
		second, err := messages.EncodeStreamEvent(again)
		require.NoError(t, err)
		assert.Equal(t, string(first), string(second), "from %q", data)
		want, got := ev, again
		want.Frame.Data = normaliseRaw(t, ev.Frame.Data)
		got.Frame.Data = normaliseRaw(t, again.Frame.Data)
		assert.Equal(t, want, got, "from %q", data)
	})
}
