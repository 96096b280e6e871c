package messages_test

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/mcp-actors/mcp-actors/messages"
)

// The field numbers of the binary envelope, as codec.go lists them.
const (
	fieldType        protowire.Number = 1
	fieldPrincipal   protowire.Number = 2
	fieldStreamNode  protowire.Number = 3
	fieldStreamN     protowire.Number = 4
	fieldLastEventID protowire.Number = 5
	fieldURI         protowire.Number = 6
	fieldReason      protowire.Number = 7
	fieldGraceNs     protowire.Number = 8
	fieldHandover    protowire.Number = 9
	fieldPayload     protowire.Number = 10
	fieldSignal      protowire.Number = 11
	fieldEventID     protowire.Number = 12
	fieldEnd         protowire.Number = 13
	fieldStreamBoot  protowire.Number = 14
	fieldSession     protowire.Number = 15
	fieldEpoch       protowire.Number = 18
)

// envelopeOf is the binary envelope of fields: the format marker, their
// length (uint32, little-endian), and them.
func envelopeOf(fields ...[]byte) []byte {
	body := bytes.Join(fields, nil)
	b := binary.LittleEndian.AppendUint32([]byte{0x01}, uint32(len(body)))
	return append(b, body...)
}

func varintField(num protowire.Number, v uint64) []byte {
	return protowire.AppendVarint(protowire.AppendTag(nil, num, protowire.VarintType), v)
}

func bytesField(num protowire.Number, v string) []byte {
	return protowire.AppendString(protowire.AppendTag(nil, num, protowire.BytesType), v)
}

func fixed32Field(num protowire.Number, v uint32) []byte {
	return protowire.AppendFixed32(protowire.AppendTag(nil, num, protowire.Fixed32Type), v)
}

func fixed64Field(num protowire.Number, v uint64) []byte {
	return protowire.AppendFixed64(protowire.AppendTag(nil, num, protowire.Fixed64Type), v)
}

func groupField(num protowire.Number, fields ...[]byte) []byte {
	return protowire.AppendGroup(protowire.AppendTag(nil, num, protowire.StartGroupType), num, bytes.Join(fields, nil))
}

// fromHex decodes hex written with spaces between its parts.
func fromHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	require.NoError(t, err)
	return b
}

// TestBinaryEnvelopeBytes pins every byte of two encodings, without the
// helpers the golden encodings are written with.
func TestBinaryEnvelopeBytes(t *testing.T) {
	m, err := messages.EncodeActorMessage(&messages.DeleteSession{Principal: "alice"})
	require.NoError(t, err)
	// marker, 9 bytes of fields, type 7, principal "alice"
	assert.Equal(t, fromHex(t, "01 09000000 08 07 12 05 616c696365"), m)

	ev, err := messages.EncodeStreamEvent(messages.StreamEvent{
		Stream: messages.StreamID{Node: "n1", N: 300},
		Frame:  messages.Frame{EventID: "3-2", Data: []byte(`{}`), End: true},
	})
	require.NoError(t, err)
	// marker, 18 bytes of fields, node "n1", n 300, payload "{}", event id "3-2", end
	assert.Equal(t, fromHex(t, "01 12000000 1a 02 6e31 20 ac02 52 02 7b7d 62 03 332d32 68 01"), ev)
}

// TestDecodeTruncated checks every prefix of every golden encoding: each is
// an error, never a panic and never a shorter message.
func TestDecodeTruncated(t *testing.T) {
	for _, g := range goldenActorMessages {
		for n := range len(g.binary) {
			m, err := messages.DecodeActorMessage(g.binary[:n])
			require.ErrorIs(t, err, messages.ErrBadEncoding, "%s cut to %d bytes", g.name, n)
			assert.Nil(t, m)
		}
	}
	for _, g := range goldenStreamEvents {
		for n := range len(g.binary) {
			ev, err := messages.DecodeStreamEvent(g.binary[:n])
			require.ErrorIs(t, err, messages.ErrBadEncoding, "%s cut to %d bytes", g.name, n)
			assert.Zero(t, ev)
		}
	}
}

// TestDecodeCutFields checks every prefix of the fields of every golden
// encoding under a header that says its length: a cut inside a field is
// an error, a cut between fields may decode, and none panics.
func TestDecodeCutFields(t *testing.T) {
	for _, g := range goldenActorMessages {
		fields := g.binary[5:]
		for n := range len(fields) {
			if m, err := messages.DecodeActorMessage(envelopeOf(fields[:n])); err != nil {
				require.ErrorIs(t, err, messages.ErrBadEncoding, "%s cut to %d bytes of fields", g.name, n)
				assert.Nil(t, m)
			}
		}
	}
	for _, g := range goldenStreamEvents {
		fields := g.binary[5:]
		for n := range len(fields) {
			if ev, err := messages.DecodeStreamEvent(envelopeOf(fields[:n])); err != nil {
				require.ErrorIs(t, err, messages.ErrBadEncoding, "%s cut to %d bytes of fields", g.name, n)
				assert.Zero(t, ev)
			}
		}
	}
}

// unknownFields are fields of every wire type with numbers the envelope
// does not know, as a later version could send them.
var unknownFields = [][]byte{
	varintField(1000, 7),
	bytesField(1001, "later"),
	fixed32Field(1002, 32),
	fixed64Field(1003, 64),
	groupField(1004, varintField(1, 1), bytesField(2, "nested")),
	bytesField(protowire.MaxValidNumber, ""),
}

// TestDecodeSkipsUnknownFields checks that fields of a later version are
// skipped wherever they are, and that a repeated field counts the last
// time, as in protocol buffers.
func TestDecodeSkipsUnknownFields(t *testing.T) {
	unknown := bytes.Join(unknownFields, nil)
	for _, g := range goldenActorMessages {
		fields := g.binary[5:]
		for _, data := range [][]byte{envelopeOf(unknown, fields), envelopeOf(fields, unknown), envelopeOf(fields[:2], unknown, fields[2:])} {
			m, err := messages.DecodeActorMessage(data)
			require.NoError(t, err, "%s: %x", g.name, data)
			assert.Equal(t, g.msg(t), m, g.name)
		}
	}
	for _, g := range goldenStreamEvents {
		fields := g.binary[5:]
		for _, data := range [][]byte{envelopeOf(unknown, fields), envelopeOf(fields, unknown)} {
			ev, err := messages.DecodeStreamEvent(data)
			require.NoError(t, err, "%s: %x", g.name, data)
			assert.Equal(t, g.ev, ev, g.name)
		}
	}

	m, err := messages.DecodeActorMessage(envelopeOf(bytesField(fieldPrincipal, "alice"), varintField(fieldType, 7), bytesField(fieldPrincipal, "bob")))
	require.NoError(t, err)
	assert.Equal(t, &messages.DeleteSession{Principal: "bob"}, m)
}

func TestDecodeBinaryActorMessageErrors(t *testing.T) {
	ping := bytesField(fieldPayload, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	tests := []struct {
		name string
		data []byte
	}{
		{"another format marker", append([]byte{0x02}, envelopeOf(varintField(fieldType, 7))[1:]...)},
		{"JSON white space before the marker", append([]byte(" "), envelopeOf(varintField(fieldType, 7))...)},
		{"a header without its length", []byte{0x01, 0x02, 0x00}},
		{"fewer bytes than the header says", envelopeOf(varintField(fieldType, 7))[:6]},
		{"more bytes than the header says", append(envelopeOf(varintField(fieldType, 7)), 0x12, 0x00)},
		{"no type", envelopeOf(bytesField(fieldPrincipal, "alice"))},
		{"nothing", envelopeOf()},
		{"type 0", envelopeOf(varintField(fieldType, 0))},
		{"unknown type", envelopeOf(varintField(fieldType, 9))},
		{"type as bytes", envelopeOf(bytesField(fieldType, "\x07"))},
		{"principal as a varint", envelopeOf(varintField(fieldType, 7), varintField(fieldPrincipal, 1))},
		{"stream n as bytes", envelopeOf(varintField(fieldType, 5), bytesField(fieldStreamN, "1"))},
		{"payload as a fixed32", envelopeOf(varintField(fieldType, 1), fixed32Field(fieldPayload, 1))},
		{"field number 0", envelopeOf(varintField(fieldType, 7), []byte{0x00, 0x00})},
		{"reserved wire type", envelopeOf(varintField(fieldType, 7), []byte{0x0e, 0x00})},
		{"an end group without a start", envelopeOf(varintField(fieldType, 7), protowire.AppendTag(nil, 1004, protowire.EndGroupType))},
		{"an unterminated group", envelopeOf(varintField(fieldType, 7), protowire.AppendTag(nil, 1004, protowire.StartGroupType))},
		{"a varint of eleven bytes", envelopeOf(varintField(fieldType, 7), []byte{0x20, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})},
		{"a bytes field longer than the fields", envelopeOf(varintField(fieldType, 7), []byte{0x12, 0x05, 'a'})},
		{"an unknown field longer than the fields", envelopeOf(varintField(fieldType, 7), bytesField(1001, "later")[:4])},
		{"a request without its message", envelopeOf(varintField(fieldType, 1), varintField(fieldStreamN, 1))},
		{"a request with an empty message", envelopeOf(varintField(fieldType, 1), bytesField(fieldPayload, ""))},
		{"a request that is no JSON", envelopeOf(varintField(fieldType, 1), bytesField(fieldPayload, `{"jsonrpc":`))},
		{"a request that is no JSON-RPC message", envelopeOf(varintField(fieldType, 1), bytesField(fieldPayload, `{"id":1,"method":"ping"}`))},
		{"a request that is a batch", envelopeOf(varintField(fieldType, 1), bytesField(fieldPayload, `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`))},
		{"a request where a notification belongs", envelopeOf(varintField(fieldType, 2), ping)},
		{"a request where a response belongs", envelopeOf(varintField(fieldType, 3), ping)},
		{"a notification where a request belongs", envelopeOf(varintField(fieldType, 1), bytesField(fieldPayload, `{"jsonrpc":"2.0","method":"notifications/initialized"}`))},
		{"a response where a request belongs", envelopeOf(varintField(fieldType, 1), bytesField(fieldPayload, `{"jsonrpc":"2.0","id":1,"result":{}}`))},
		{"a notification without its message", envelopeOf(varintField(fieldType, 2))},
		{"a response without its message", envelopeOf(varintField(fieldType, 3))},
		{"notifyClient without data", envelopeOf(varintField(fieldType, 6), bytesField(fieldURI, "test://x"))},
		{"notifyClient with empty data", envelopeOf(varintField(fieldType, 6), bytesField(fieldPayload, ""))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := messages.DecodeActorMessage(tc.data)
			require.ErrorIs(t, err, messages.ErrBadEncoding)
			assert.Nil(t, m)
		})
	}
}

func TestDecodeBinaryStreamEventErrors(t *testing.T) {
	stream := varintField(fieldStreamN, 1)
	tests := []struct {
		name string
		data []byte
	}{
		{"unknown signal", envelopeOf(stream, varintField(fieldSignal, 6))},
		{"a signal that is frame modulo 256", envelopeOf(stream, varintField(fieldSignal, 256))},
		{"the largest signal", envelopeOf(stream, varintField(fieldSignal, 1<<64-1))},
		{"signal as bytes", envelopeOf(stream, bytesField(fieldSignal, "\x01"))},
		{"end as bytes", envelopeOf(stream, bytesField(fieldEnd, "\x01"))},
		{"event id as a fixed64", envelopeOf(stream, fixed64Field(fieldEventID, 1))},
		{"empty frame data", envelopeOf(stream, bytesField(fieldEventID, "1-1"), bytesField(fieldPayload, ""))},
		{"a truncated stream n", envelopeOf(varintField(fieldStreamN, 1<<20)[:2])},
		{"a header without its length", []byte{0x01}},
		{"fewer bytes than the header says", envelopeOf(stream)[:5]},
		{"more bytes than the header says", append(envelopeOf(stream), 0)},
		{"empty input", nil},
		{"another format marker", []byte{0x00, 0, 0, 0, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := messages.DecodeStreamEvent(tc.data)
			require.ErrorIs(t, err, messages.ErrBadEncoding)
			assert.Zero(t, ev)
		})
	}
}
