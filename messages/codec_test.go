package messages_test

import (
	"bytes"
	"encoding/json/jsontext"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/messages"
)

// wire decodes one JSON-RPC message as a transport would.
func wire(t testing.TB, s string) *messages.Message {
	t.Helper()
	m, werr := messages.Decode([]byte(s))
	require.Nil(t, werr, "decoding %s", s)
	return m
}

// goldenActorMessages pins the encoding of one instance of every actor
// message. The encoding is stable (see codec.go): a change of binary is a
// change of what nodes of different versions say to each other. json is
// what the release before the binary envelope sent for the same message,
// which still decodes (codec_json_test.go); it is empty for a message with
// what that release did not have (a stream's boot, an event's session).
// Both seed FuzzDecodeActorMessage.
var goldenActorMessages = []struct {
	name   string
	msg    func(testing.TB) messages.ActorMessage
	binary []byte
	json   string
}{
	{
		name: "handleRequest",
		msg: func(t testing.TB) messages.ActorMessage {
			return &messages.HandleRequest{
				Principal: "alice",
				Msg:       wire(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`),
				Stream:    messages.StreamID{Node: "n1", N: 7},
			}
		},
		binary: envelopeOf(
			varintField(fieldType, 1),
			bytesField(fieldPrincipal, "alice"),
			bytesField(fieldStreamNode, "n1"),
			varintField(fieldStreamN, 7),
			bytesField(fieldPayload, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`),
		),
		json: `{"type":"handleRequest","principal":"alice","stream":{"node":"n1","n":7},"msg":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}}`,
	},
	{
		name: "handleRequest with a stream named for life",
		msg: func(t testing.TB) messages.ActorMessage {
			return &messages.HandleRequest{
				Principal: "alice",
				Msg:       wire(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`),
				Stream:    messages.StreamID{Node: "n1", Boot: 0x9e3779b97f4a7c15, N: 7},
			}
		},
		binary: envelopeOf(
			varintField(fieldType, 1),
			bytesField(fieldPrincipal, "alice"),
			bytesField(fieldStreamNode, "n1"),
			varintField(fieldStreamN, 7),
			bytesField(fieldPayload, `{"jsonrpc":"2.0","id":1,"method":"ping"}`),
			varintField(fieldStreamBoot, 0x9e3779b97f4a7c15),
		),
	},
	{
		name: "handleNotification",
		msg: func(t testing.TB) messages.ActorMessage {
			return &messages.HandleNotification{
				Principal: "alice",
				Msg:       wire(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r-1","reason":"user"}}`),
			}
		},
		binary: envelopeOf(
			varintField(fieldType, 2),
			bytesField(fieldPrincipal, "alice"),
			bytesField(fieldPayload, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r-1","reason":"user"}}`),
		),
		json: `{"type":"handleNotification","principal":"alice","msg":{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r-1","reason":"user"}}}`,
	},
	{
		name: "deliverResponse",
		msg: func(t testing.TB) messages.ActorMessage {
			return &messages.DeliverResponse{
				Principal: "alice",
				Msg:       wire(t, `{"jsonrpc":"2.0","id":"s-1","result":{"roots":[{"uri":"file:///a","name":"a"}]}}`),
			}
		},
		binary: envelopeOf(
			varintField(fieldType, 3),
			bytesField(fieldPrincipal, "alice"),
			bytesField(fieldPayload, `{"jsonrpc":"2.0","id":"s-1","result":{"roots":[{"uri":"file:///a","name":"a"}]}}`),
		),
		json: `{"type":"deliverResponse","principal":"alice","msg":{"jsonrpc":"2.0","id":"s-1","result":{"roots":[{"uri":"file:///a","name":"a"}]}}}`,
	},
	{
		name: "attachStream",
		msg: func(testing.TB) messages.ActorMessage {
			return &messages.AttachStream{Principal: "alice", Stream: messages.StreamID{Node: "n1", N: 8}, LastEventID: "3-2"}
		},
		binary: envelopeOf(
			varintField(fieldType, 4),
			bytesField(fieldPrincipal, "alice"),
			bytesField(fieldStreamNode, "n1"),
			varintField(fieldStreamN, 8),
			bytesField(fieldLastEventID, "3-2"),
		),
		json: `{"type":"attachStream","principal":"alice","stream":{"node":"n1","n":8},"lastEventId":"3-2"}`,
	},
	{
		name: "detachStream",
		msg: func(testing.TB) messages.ActorMessage {
			return &messages.DetachStream{Stream: messages.StreamID{Node: "n1", N: 8}}
		},
		binary: envelopeOf(varintField(fieldType, 5), bytesField(fieldStreamNode, "n1"), varintField(fieldStreamN, 8)),
		json:   `{"type":"detachStream","stream":{"node":"n1","n":8}}`,
	},
	{
		name: "detachStream named for life",
		msg: func(testing.TB) messages.ActorMessage {
			return &messages.DetachStream{Stream: messages.StreamID{Node: "n1", Boot: 1<<64 - 1, N: 8}}
		},
		binary: envelopeOf(varintField(fieldType, 5), bytesField(fieldStreamNode, "n1"), varintField(fieldStreamN, 8),
			varintField(fieldStreamBoot, 1<<64-1)),
	},
	{
		name: "attachStream named for life",
		msg: func(testing.TB) messages.ActorMessage {
			return &messages.AttachStream{Principal: "alice", Stream: messages.StreamID{Node: "n1", Boot: 42, N: 8}}
		},
		binary: envelopeOf(varintField(fieldType, 4), bytesField(fieldPrincipal, "alice"), bytesField(fieldStreamNode, "n1"),
			varintField(fieldStreamN, 8), varintField(fieldStreamBoot, 42)),
	},
	{
		name: "notifyClient",
		msg: func(testing.TB) messages.ActorMessage {
			return &messages.NotifyClient{
				Data: []byte(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"test://x"}}`),
				URI:  "test://x",
			}
		},
		binary: envelopeOf(
			varintField(fieldType, 6),
			bytesField(fieldURI, "test://x"),
			bytesField(fieldPayload, `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"test://x"}}`),
		),
		json: `{"type":"notifyClient","data":{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"test://x"}},"uri":"test://x"}`,
	},
	{
		name:   "deleteSession",
		msg:    func(testing.TB) messages.ActorMessage { return &messages.DeleteSession{Principal: "alice"} },
		binary: envelopeOf(varintField(fieldType, 7), bytesField(fieldPrincipal, "alice")),
		json:   `{"type":"deleteSession","principal":"alice"}`,
	},
	{
		name: "closeSession",
		msg: func(testing.TB) messages.ActorMessage {
			return &messages.CloseSession{Reason: "server closing", Grace: 1500 * time.Millisecond}
		},
		binary: envelopeOf(varintField(fieldType, 8), bytesField(fieldReason, "server closing"), varintField(fieldGraceNs, 1500000000)),
		json:   `{"type":"closeSession","reason":"server closing","graceNs":1500000000}`,
	},
	{
		name: "closeSession for a handover",
		msg: func(testing.TB) messages.ActorMessage {
			return &messages.CloseSession{Reason: "node stopping", Handover: true}
		},
		binary: envelopeOf(varintField(fieldType, 8), bytesField(fieldReason, "node stopping"), varintField(fieldHandover, 1)),
		json:   `{"type":"closeSession","reason":"node stopping","handover":true}`,
	},
}

// goldenStreamEvents pins the encoding of stream events: every signal, and
// frames with and without an event ID, data and end. json is as in
// goldenActorMessages.
var goldenStreamEvents = []struct {
	name   string
	ev     messages.StreamEvent
	binary []byte
	json   string
}{
	{
		name: "response frame",
		ev: messages.StreamEvent{Stream: messages.StreamID{Node: "n1", N: 7}, Frame: messages.Frame{
			EventID: "3-2", Data: []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), End: true,
		}},
		binary: envelopeOf(
			bytesField(fieldStreamNode, "n1"),
			varintField(fieldStreamN, 7),
			bytesField(fieldPayload, `{"jsonrpc":"2.0","id":1,"result":{}}`),
			bytesField(fieldEventID, "3-2"),
			varintField(fieldEnd, 1),
		),
		json: `{"stream":{"node":"n1","n":7},"signal":0,"frame":{"id":"3-2","data":{"jsonrpc":"2.0","id":1,"result":{}},"end":true}}`,
	},
	{
		name: "frame of a session, named for life",
		ev: messages.StreamEvent{Stream: messages.StreamID{Node: "n1", Boot: 0x9e3779b97f4a7c15, N: 7}, Session: "n2.abc",
			Frame: messages.Frame{EventID: "3-2", Data: []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), End: true}},
		binary: envelopeOf(
			bytesField(fieldStreamNode, "n1"),
			varintField(fieldStreamN, 7),
			bytesField(fieldPayload, `{"jsonrpc":"2.0","id":1,"result":{}}`),
			bytesField(fieldEventID, "3-2"),
			varintField(fieldEnd, 1),
			varintField(fieldStreamBoot, 0x9e3779b97f4a7c15),
			bytesField(fieldSession, "n2.abc"),
		),
	},
	{
		name: "frame of an owner's epoch",
		ev: messages.StreamEvent{Stream: messages.StreamID{Node: "n1", Boot: 5, N: 7}, Session: "n2.abc", Epoch: 3,
			Frame: messages.Frame{EventID: "3-2", Data: []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), End: true}},
		binary: envelopeOf(
			bytesField(fieldStreamNode, "n1"),
			varintField(fieldStreamN, 7),
			bytesField(fieldPayload, `{"jsonrpc":"2.0","id":1,"result":{}}`),
			bytesField(fieldEventID, "3-2"),
			varintField(fieldEnd, 1),
			varintField(fieldStreamBoot, 5),
			bytesField(fieldSession, "n2.abc"),
			varintField(fieldEpoch, 3),
		),
	},
	{
		name: "signal of a session, named for life",
		ev:   messages.StreamEvent{Stream: messages.StreamID{Node: "n1", Boot: 5, N: 7}, Session: "n2.abc", Signal: messages.SignalNotFound},
		binary: envelopeOf(bytesField(fieldStreamNode, "n1"), varintField(fieldStreamN, 7), varintField(fieldSignal, 5),
			varintField(fieldStreamBoot, 5), bytesField(fieldSession, "n2.abc")),
	},
	{
		name:   "priming event",
		ev:     messages.StreamEvent{Stream: messages.StreamID{Node: "n1", N: 7}, Frame: messages.Frame{EventID: "3-0"}},
		binary: envelopeOf(bytesField(fieldStreamNode, "n1"), varintField(fieldStreamN, 7), bytesField(fieldEventID, "3-0")),
		json:   `{"stream":{"node":"n1","n":7},"signal":0,"frame":{"id":"3-0"}}`,
	},
	{
		name: "plain frame outside a cluster",
		ev: messages.StreamEvent{Stream: messages.StreamID{N: 3}, Frame: messages.Frame{
			Data: []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":0.5}}`),
		}},
		binary: envelopeOf(
			varintField(fieldStreamN, 3),
			bytesField(fieldPayload, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":0.5}}`),
		),
		json: `{"stream":{"n":3},"signal":0,"frame":{"data":{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":0.5}}}}`,
	},
	{
		name:   "attached",
		ev:     messages.StreamEvent{Stream: messages.StreamID{Node: "n1", N: 7}, Signal: messages.SignalAttached},
		binary: envelopeOf(bytesField(fieldStreamNode, "n1"), varintField(fieldStreamN, 7), varintField(fieldSignal, 1)),
		json:   `{"stream":{"node":"n1","n":7},"signal":1}`,
	},
	{
		name:   "resumed",
		ev:     messages.StreamEvent{Stream: messages.StreamID{Node: "n1", N: 7}, Signal: messages.SignalResumed},
		binary: envelopeOf(bytesField(fieldStreamNode, "n1"), varintField(fieldStreamN, 7), varintField(fieldSignal, 2)),
		json:   `{"stream":{"node":"n1","n":7},"signal":2}`,
	},
	{
		name:   "conflict",
		ev:     messages.StreamEvent{Stream: messages.StreamID{Node: "n1", N: 7}, Signal: messages.SignalConflict},
		binary: envelopeOf(bytesField(fieldStreamNode, "n1"), varintField(fieldStreamN, 7), varintField(fieldSignal, 3)),
		json:   `{"stream":{"node":"n1","n":7},"signal":3}`,
	},
	{
		name:   "closed",
		ev:     messages.StreamEvent{Stream: messages.StreamID{Node: "n1", N: 7}, Signal: messages.SignalClosed},
		binary: envelopeOf(bytesField(fieldStreamNode, "n1"), varintField(fieldStreamN, 7), varintField(fieldSignal, 4)),
		json:   `{"stream":{"node":"n1","n":7},"signal":4}`,
	},
	{
		name:   "not found",
		ev:     messages.StreamEvent{Stream: messages.StreamID{Node: "n1", N: 7}, Signal: messages.SignalNotFound},
		binary: envelopeOf(bytesField(fieldStreamNode, "n1"), varintField(fieldStreamN, 7), varintField(fieldSignal, 5)),
		json:   `{"stream":{"node":"n1","n":7},"signal":5}`,
	},
}

func TestActorMessageGoldenEncoding(t *testing.T) {
	for _, tc := range goldenActorMessages {
		t.Run(tc.name, func(t *testing.T) {
			got, err := messages.EncodeActorMessage(tc.msg(t))
			require.NoError(t, err)
			assert.Equal(t, tc.binary, got)
			m, err := messages.DecodeActorMessage(tc.binary)
			require.NoError(t, err)
			assert.Equal(t, tc.msg(t), m)
		})
	}
}

func TestStreamEventGoldenEncoding(t *testing.T) {
	for _, tc := range goldenStreamEvents {
		t.Run(tc.name, func(t *testing.T) {
			got, err := messages.EncodeStreamEvent(tc.ev)
			require.NoError(t, err)
			assert.Equal(t, tc.binary, got)
			ev, err := messages.DecodeStreamEvent(tc.binary)
			require.NoError(t, err)
			assert.Equal(t, tc.ev, ev)
		})
	}
}

func TestActorMessageRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		msg  messages.ActorMessage
	}{
		{"request with an integer ID and nested params", &messages.HandleRequest{
			Principal: "alice",
			Msg: wire(t, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search",`+
				`"arguments":{"query":{"text":"actors","limit":10},"tags":["a","b"],"deep":[{"x":null,"y":[1.5,-2e3]}]},`+
				`"_meta":{"progressToken":"p-1"}}}`),
			Stream: messages.StreamID{Node: "n1", N: 42},
		}},
		{"request with a string ID, no params, no stream, no principal", &messages.HandleRequest{
			Msg: wire(t, `{"jsonrpc":"2.0","id":"req-1","method":"ping"}`),
		}},
		{"request on a stream outside a cluster", &messages.HandleRequest{
			Principal: "bob",
			Msg:       wire(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"c","version":"1"}}}`),
			Stream:    messages.StreamID{N: 1},
		}},
		{"request on a node's stream without a number", &messages.HandleRequest{
			Msg:    wire(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`),
			Stream: messages.StreamID{Node: "n1"},
		}},
		{"request with a large integer ID and array params", &messages.HandleRequest{
			Msg:    wire(t, `{"jsonrpc":"2.0","id":9007199254740993,"method":"x/y","params":[1,{"a":"b"}]}`),
			Stream: messages.StreamID{Node: "n2", N: 18446744073709551615},
		}},
		{"notification with params", &messages.HandleNotification{
			Principal: "alice",
			Msg:       wire(t, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p-1","progress":0.5,"total":1,"message":"half"}}`),
		}},
		{"notification without params", &messages.HandleNotification{
			Msg: wire(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`),
		}},
		{"response with a result", &messages.DeliverResponse{
			Principal: "alice",
			Msg:       wire(t, `{"jsonrpc":"2.0","id":3,"result":{"roots":[{"uri":"file:///a","name":"a"},{"uri":"file:///b"}]}}`),
		}},
		{"response with a null result", &messages.DeliverResponse{
			Msg: wire(t, `{"jsonrpc":"2.0","id":"s-2","result":null}`),
		}},
		{"response with an error and data", &messages.DeliverResponse{
			Principal: "alice",
			Msg:       wire(t, `{"jsonrpc":"2.0","id":"s-4","error":{"code":-32602,"message":"invalid params","data":{"field":"name","why":["missing"]}}}`),
		}},
		{"error without an ID", &messages.DeliverResponse{
			Msg: wire(t, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`),
		}},
		{"attach the standalone stream", &messages.AttachStream{Principal: "alice", Stream: messages.StreamID{Node: "n1", N: 5}}},
		{"resume a stream", &messages.AttachStream{Principal: "alice", Stream: messages.StreamID{Node: "n1", N: 6}, LastEventID: "12-34"}},
		{"detach", &messages.DetachStream{Stream: messages.StreamID{Node: "n1", N: 6}}},
		{"detach outside a cluster", &messages.DetachStream{Stream: messages.StreamID{N: 6}}},
		{"notify subscribers", &messages.NotifyClient{
			Data: []byte(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///a"}}`),
			URI:  "file:///a",
		}},
		{"notify everyone", &messages.NotifyClient{
			Data: []byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`),
		}},
		{"delete", &messages.DeleteSession{Principal: "alice"}},
		{"delete unauthenticated", &messages.DeleteSession{}},
		{"close at once", &messages.CloseSession{Reason: "idle timeout"}},
		{"close with grace", &messages.CloseSession{Reason: "server closing", Grace: 10 * time.Second}},
		{"close with a negative grace", &messages.CloseSession{Grace: -1}},
		{"close with the longest grace", &messages.CloseSession{Grace: 1<<63 - 1}},
		{"close for a handover", &messages.CloseSession{Reason: "node stopping", Grace: time.Second, Handover: true}},
		{"close without a reason", &messages.CloseSession{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data, err := messages.EncodeActorMessage(tc.msg)
			require.NoError(t, err)
			got, err := messages.DecodeActorMessage(data)
			require.NoError(t, err, "decoding %q", data)
			assert.Equal(t, tc.msg, got)
		})
	}
}

// TestActorMessageKeepsBytes checks that a message crosses a node byte for
// byte: a response echoes the ID exactly as the client wrote it, a
// cancellation finds its request by comparing IDs, and a handler reads the
// params the client sent. HTML-sensitive characters, escapes and U+2028
// are where a JSON encoder would rewrite the text. The JSON-RPC message
// travels as Encode writes it, once.
func TestActorMessageKeepsBytes(t *testing.T) {
	for _, id := range []string{`"<a&b>"`, `"\u003c"`, "\"line\u2028sep\"", `"é\u2028"`, `"\u00e9"`, `1.50`, `-0`, `1e3`} {
		t.Run(id, func(t *testing.T) {
			in := &messages.HandleRequest{
				Principal: "é&<>\u2028",
				Msg: wire(t, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/<call>&é",`+
					"\"params\":{\"name\":\"<b>&\",\"text\":\"é\u2028\\u2028\\u0026 ☃\",\"n\":1.0}}"),
				Stream: messages.StreamID{Node: "nœud-1", N: 1},
			}
			onWire, err := messages.Encode(in.Msg)
			require.NoError(t, err)
			data, err := messages.EncodeActorMessage(in)
			require.NoError(t, err)
			assert.True(t, bytes.Contains(data, onWire), "the payload is what Encode writes")
			got, err := messages.DecodeActorMessage(data)
			require.NoError(t, err)
			req, ok := got.(*messages.HandleRequest)
			require.True(t, ok)
			assert.Equal(t, id, req.Msg.ID.Raw())
			assert.Equal(t, in, got)
		})
	}
}

// TestActorMessageRoundTripKeepsWhitespace checks messages whose raw JSON
// is not compact. Params and results travel as they arrived, white space
// included; an error's data is what Encode writes for any transport
// (json.Marshal: compact, with <, > and & escaped), so it equals the
// original once both are normalised.
func TestActorMessageRoundTripKeepsWhitespace(t *testing.T) {
	tests := []struct {
		name  string
		msg   messages.ActorMessage
		exact bool
	}{
		{"request", &messages.HandleRequest{
			Principal: "alice",
			Msg: wire(t, "{ \"jsonrpc\" : \"2.0\", \"id\" : \"a b\" ,\n \"method\":\"tools/call\",\n"+
				"  \"params\": { \"name\" : \"x y\",\t\"arguments\": { \"n\" : [ 1 , 2 ] } } }"),
			Stream: messages.StreamID{Node: "n1", N: 3},
		}, true},
		{"result", &messages.DeliverResponse{Msg: wire(t, `{"jsonrpc":"2.0","id":2,"result":  { "ok" : true }  }`)}, true},
		{"notify", &messages.NotifyClient{Data: []byte("{\n  \"jsonrpc\": \"2.0\",\n  \"method\": \"notifications/message\"\n}\n")}, true},
		{"error", &messages.DeliverResponse{Msg: wire(t, `{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"<m>","data": { "html" : "<p>&amp;" } }}`)}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data, err := messages.EncodeActorMessage(tc.msg)
			require.NoError(t, err)
			got, err := messages.DecodeActorMessage(data)
			require.NoError(t, err, "decoding %q", data)
			if tc.exact {
				assert.Equal(t, tc.msg, got)
			} else {
				assert.Equal(t, normaliseActorMessage(t, tc.msg), normaliseActorMessage(t, got))
			}
		})
	}
}

func TestStreamEventRoundTrip(t *testing.T) {
	id := messages.StreamID{Node: "n1", N: 7}
	data := []byte(`{"jsonrpc":"2.0","id":"r-1","result":{"content":[{"type":"text","text":"<ok> & done"}]}}`)
	tests := []struct {
		name string
		ev   messages.StreamEvent
	}{
		{"frame with everything", messages.StreamEvent{Stream: id, Frame: messages.Frame{EventID: "1-3", Data: data, End: true}}},
		{"frame with data only", messages.StreamEvent{Stream: id, Frame: messages.Frame{Data: data}}},
		{"frame with data and end", messages.StreamEvent{Stream: id, Frame: messages.Frame{Data: data, End: true}}},
		{"frame with ID and data", messages.StreamEvent{Stream: id, Frame: messages.Frame{EventID: "1-2", Data: data}}},
		{"frame with bytes a JSON encoder would rewrite", messages.StreamEvent{Stream: id, Frame: messages.Frame{
			Data: []byte("{\"jsonrpc\":\"2.0\",\"id\":\"<a>\",\"result\":{ \"text\" : \"é\u2028\\u2028&\\u0026\" }}"),
		}}},
		{"priming event", messages.StreamEvent{Stream: id, Frame: messages.Frame{EventID: "1-0"}}},
		{"empty frame", messages.StreamEvent{Stream: id}},
		{"frame outside a cluster", messages.StreamEvent{Stream: messages.StreamID{N: 1}, Frame: messages.Frame{Data: data}}},
		{"frame of the largest stream", messages.StreamEvent{Stream: messages.StreamID{Node: "n", N: 1<<64 - 1}, Frame: messages.Frame{Data: []byte(`null`)}}},
		{"frame of a session, on a stream of one boot", messages.StreamEvent{Stream: messages.StreamID{Node: "n1", Boot: 1<<64 - 1, N: 2},
			Session: "n3.s", Frame: messages.Frame{Data: data}}},
		{"signal of a session", messages.StreamEvent{Stream: messages.StreamID{Node: "n1", Boot: 1, N: 2}, Session: "s", Signal: messages.SignalClosed}},
		{"attached", messages.StreamEvent{Stream: id, Signal: messages.SignalAttached}},
		{"resumed", messages.StreamEvent{Stream: id, Signal: messages.SignalResumed}},
		{"conflict", messages.StreamEvent{Stream: id, Signal: messages.SignalConflict}},
		{"closed", messages.StreamEvent{Stream: id, Signal: messages.SignalClosed}},
		{"not found", messages.StreamEvent{Stream: id, Signal: messages.SignalNotFound}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			enc, err := messages.EncodeStreamEvent(tc.ev)
			require.NoError(t, err)
			got, err := messages.DecodeStreamEvent(enc)
			require.NoError(t, err, "decoding %q", enc)
			assert.Equal(t, tc.ev, got)
			if tc.ev.Signal == messages.SignalFrame && tc.ev.Frame.Data == nil {
				assert.Nil(t, got.Frame.Data, "a priming event stays without data")
			}
		})
	}
}

// TestStreamEventSignalCarriesNoFrame checks that a frame set on a signal
// is not sent: only SignalFrame carries one.
func TestStreamEventSignalCarriesNoFrame(t *testing.T) {
	ev := messages.StreamEvent{Stream: messages.StreamID{N: 1}, Signal: messages.SignalClosed,
		Frame: messages.Frame{EventID: "1-1", Data: []byte(`{}`), End: true}}
	enc, err := messages.EncodeStreamEvent(ev)
	require.NoError(t, err)
	assert.Equal(t, envelopeOf(varintField(fieldStreamN, 1), varintField(fieldSignal, 4)), enc)
	got, err := messages.DecodeStreamEvent(enc)
	require.NoError(t, err)
	assert.Equal(t, messages.StreamEvent{Stream: ev.Stream, Signal: messages.SignalClosed}, got)
}

// TestEncodeCarriesDataAsIs checks that a notification's and a frame's
// data are not checked or rewritten: they are bytes the server or the
// session produced, and scanning them on every frame would cost more than
// the rest of the encoding.
func TestEncodeCarriesDataAsIs(t *testing.T) {
	notJSON := []byte(`{"jsonrpc":`)
	enc, err := messages.EncodeActorMessage(&messages.NotifyClient{Data: notJSON})
	require.NoError(t, err)
	m, err := messages.DecodeActorMessage(enc)
	require.NoError(t, err)
	assert.Equal(t, &messages.NotifyClient{Data: notJSON}, m)

	ev := messages.StreamEvent{Stream: messages.StreamID{N: 1}, Frame: messages.Frame{Data: notJSON}}
	enc, err = messages.EncodeStreamEvent(ev)
	require.NoError(t, err)
	got, err := messages.DecodeStreamEvent(enc)
	require.NoError(t, err)
	assert.Equal(t, ev, got)
}

func TestEncodeActorMessageErrors(t *testing.T) {
	tests := []struct {
		name string
		msg  messages.ActorMessage
	}{
		{"no message", nil},
		{"a request without its message", &messages.HandleRequest{Stream: messages.StreamID{N: 1}}},
		{"a notification without its message", &messages.HandleNotification{}},
		{"a response without its message", &messages.DeliverResponse{}},
		{"an invalid JSON-RPC message", &messages.HandleRequest{Msg: &messages.Message{}}},
		{"notifyClient without data", &messages.NotifyClient{URI: "test://x"}},
		{"notifyClient with empty data", &messages.NotifyClient{Data: []byte{}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data, err := messages.EncodeActorMessage(tc.msg)
			require.ErrorIs(t, err, messages.ErrBadEncoding)
			assert.Nil(t, data)
		})
	}
}

func TestEncodeStreamEventErrors(t *testing.T) {
	tests := []struct {
		name string
		ev   messages.StreamEvent
	}{
		{"unknown signal", messages.StreamEvent{Stream: messages.StreamID{N: 1}, Signal: messages.SignalNotFound + 1}},
		{"empty frame data", messages.StreamEvent{Stream: messages.StreamID{N: 1}, Frame: messages.Frame{EventID: "1-1", Data: []byte{}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data, err := messages.EncodeStreamEvent(tc.ev)
			require.ErrorIs(t, err, messages.ErrBadEncoding)
			assert.Nil(t, data)
		})
	}
}

// normaliseRaw is raw JSON compacted. nil stays nil, and bytes that are
// no JSON (data, which is carried as it is) stay as they are.
func normaliseRaw(t testing.TB, raw []byte) []byte {
	t.Helper()
	v := jsontext.Value(bytes.Clone(raw))
	if raw == nil || !v.IsValid() {
		return raw
	}
	require.NoError(t, v.Compact(), "raw JSON %q", raw)
	return v
}

// normaliseMessage returns a copy of m with its raw JSON normalised.
func normaliseMessage(t testing.TB, m *messages.Message) *messages.Message {
	t.Helper()
	if m == nil {
		return nil
	}
	n := *m
	n.Params = normaliseRaw(t, m.Params)
	n.Result = normaliseRaw(t, m.Result)
	if m.Error != nil {
		e := *m.Error
		e.Data = normaliseRaw(t, e.Data)
		n.Error = &e
	}
	return &n
}

// normaliseActorMessage returns a copy of m with the raw JSON it carries
// normalised, for comparing messages whose error data went through
// different numbers of encodings.
func normaliseActorMessage(t testing.TB, m messages.ActorMessage) messages.ActorMessage {
	t.Helper()
	switch m := m.(type) {
	case *messages.HandleRequest:
		n := *m
		n.Msg = normaliseMessage(t, m.Msg)
		return &n
	case *messages.HandleNotification:
		n := *m
		n.Msg = normaliseMessage(t, m.Msg)
		return &n
	case *messages.DeliverResponse:
		n := *m
		n.Msg = normaliseMessage(t, m.Msg)
		return &n
	case *messages.NotifyClient:
		n := *m
		n.Data = normaliseRaw(t, m.Data)
		return &n
	}
	return m
}

func TestStreamIDString(t *testing.T) {
	for _, tc := range []struct {
		id   messages.StreamID
		want string
	}{
		{messages.StreamID{N: 3}, "3"},
		{messages.StreamID{Node: "n1", N: 3}, "n1/3"},
		{messages.StreamID{Boot: 0xbeef, N: 3}, "beef/3"},
		{messages.StreamID{Node: "n1", Boot: 0xbeef, N: 3}, "n1/beef/3"},
	} {
		assert.Equal(t, tc.want, tc.id.String())
	}
}
