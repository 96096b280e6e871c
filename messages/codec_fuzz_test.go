package messages_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/mcp-actors/mcp-actors/messages"
)

// FuzzDecodeActorMessage checks that DecodeActorMessage never panics, that
// whatever it cannot read is ErrBadEncoding, and that what it reads
// survives another trip: it encodes, decodes to an equal value (an error's
// data normalised, see TestActorMessageRoundTripKeepsWhitespace), and
// encodes to the same bytes again. The seeds are binary envelopes and the
// JSON of the release before.
func FuzzDecodeActorMessage(f *testing.F) {
	for _, g := range goldenActorMessages {
		f.Add(g.binary)
		f.Add([]byte(g.json))
	}
	deleteSession := varintField(fieldType, 7)
	for _, seed := range [][]byte{
		// Good, unusual.
		envelopeOf(varintField(fieldType, 1), bytesField(fieldPayload, `{"jsonrpc":"2.0","id":"<a&b>","method":"x","params":{ "a" : [ 1 ] }}`)),
		envelopeOf(varintField(fieldType, 3), bytesField(fieldPayload, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"m","data":{ "h" : "<&>" }}}`)),
		envelopeOf(varintField(fieldType, 6), bytesField(fieldPayload, "\u2028\xff")),
		envelopeOf(varintField(fieldType, 5), bytesField(fieldStreamNode, "n1")),
		envelopeOf(varintField(fieldType, 8), varintField(fieldGraceNs, 1<<64-1), varintField(fieldHandover, 2)),
		envelopeOf(append(bytes.Join(unknownFields, nil), deleteSession...)),
		envelopeOf(deleteSession, bytesField(fieldPrincipal, "a"), bytesField(fieldPrincipal, "\xff")),
		// Bad.
		envelopeOf(varintField(fieldType, 2), bytesField(fieldPayload, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)),
		envelopeOf(varintField(fieldType, 1), bytesField(fieldPayload, "")),
		envelopeOf(varintField(fieldType, 6)),
		envelopeOf(varintField(fieldType, 9)),
		envelopeOf(bytesField(fieldType, "\x07")),
		envelopeOf(deleteSession, protowire.AppendTag(nil, 1004, protowire.StartGroupType)),
		envelopeOf(deleteSession)[:6],
		append(envelopeOf(deleteSession), 0),
		{0x01},
		{0x01, 0xff, 0xff, 0xff, 0xff},
	} {
		f.Add(seed)
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
		f.Add(g.binary)
		f.Add([]byte(g.json))
	}
	stream := varintField(fieldStreamN, 1)
	for _, seed := range [][]byte{
		// Good, unusual.
		envelopeOf(stream, bytesField(fieldPayload, "not JSON \u2028")),
		envelopeOf(stream, varintField(fieldSignal, 4), bytesField(fieldEventID, "1-1"), varintField(fieldEnd, 1)),
		envelopeOf(bytesField(fieldStreamNode, "n1"), varintField(fieldStreamN, 1<<64-1), varintField(fieldEnd, 9)),
		envelopeOf(append(bytes.Join(unknownFields, nil), stream...)),
		envelopeOf(),
		// Bad.
		envelopeOf(stream, varintField(fieldSignal, 6)),
		envelopeOf(stream, varintField(fieldSignal, 256)),
		envelopeOf(stream, bytesField(fieldPayload, "")),
		envelopeOf(stream, bytesField(fieldSignal, "\x01")),
		envelopeOf(stream)[:5],
		{0x01},
	} {
		f.Add(seed)
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
