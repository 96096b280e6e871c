package messages_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/messages"
)

// The JSON encoding of the release before the binary envelope still
// decodes, as it did then: a node of that release may share the cluster.

func TestDecodeLegacyActorMessage(t *testing.T) {
	for _, tc := range goldenActorMessages {
		t.Run(tc.name, func(t *testing.T) {
			if tc.json == "" {
				t.Skip("the release before had no such message")
			}
			got, err := messages.DecodeActorMessage([]byte(tc.json))
			require.NoError(t, err)
			assert.Equal(t, tc.msg(t), got)

			again, err := messages.EncodeActorMessage(got)
			require.NoError(t, err)
			assert.Equal(t, tc.binary, again, "passed on in the binary envelope")
		})
	}
	t.Run("after white space", func(t *testing.T) {
		got, err := messages.DecodeActorMessage([]byte(" \t\r\n" + `{"type":"deleteSession","principal":"alice"}` + "\n"))
		require.NoError(t, err)
		assert.Equal(t, &messages.DeleteSession{Principal: "alice"}, got)
	})
}

func TestDecodeLegacyStreamEvent(t *testing.T) {
	for _, tc := range goldenStreamEvents {
		t.Run(tc.name, func(t *testing.T) {
			if tc.json == "" {
				t.Skip("the release before had no such event")
			}
			got, err := messages.DecodeStreamEvent([]byte(tc.json))
			require.NoError(t, err)
			assert.Equal(t, tc.ev, got)
		})
	}
}

func TestDecodeLegacyActorMessageErrors(t *testing.T) {
	tests := []struct {
		name string
		data string
	}{
		{"unknown type", `{"type":"launchMissiles","principal":"alice"}`},
		{"no type", `{"principal":"alice"}`},
		{"type of the wrong case", `{"type":"HandleRequest","msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}`},
		{"a request where a notification belongs", `{"type":"handleNotification","msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}`},
		{"a notification where a request belongs", `{"type":"handleRequest","stream":{"n":1},"msg":{"jsonrpc":"2.0","method":"notifications/initialized"}}`},
		{"a request where a response belongs", `{"type":"deliverResponse","msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}`},
		{"a response where a request belongs", `{"type":"handleRequest","msg":{"jsonrpc":"2.0","id":1,"result":{}}}`},
		{"missing msg", `{"type":"handleRequest","principal":"alice","stream":{"n":1}}`},
		{"missing msg of a notification", `{"type":"handleNotification"}`},
		{"missing msg of a response", `{"type":"deliverResponse"}`},
		{"null msg", `{"type":"handleRequest","msg":null}`},
		{"msg that is no JSON-RPC message", `{"type":"handleRequest","msg":{"id":1,"method":"ping"}}`},
		{"msg that is a batch", `{"type":"handleRequest","msg":[{"jsonrpc":"2.0","id":1,"method":"ping"}]}`},
		{"msg that is a string", `{"type":"handleRequest","msg":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"}`},
		{"notifyClient without data", `{"type":"notifyClient","uri":"test://x"}`},
		{"invalid JSON", `{"type":"deleteSession"`},
		{"empty input", ``},
		{"only white space", " \n"},
		{"not an object", `["deleteSession"]`},
		{"null", `null`},
		{"trailing garbage", `{"type":"deleteSession"} x`},
		{"a member of the wrong type", `{"type":"closeSession","graceNs":"1s"}`},
		{"a stream of the wrong type", `{"type":"detachStream","stream":{"node":"n1","n":-1}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := messages.DecodeActorMessage([]byte(tc.data))
			require.ErrorIs(t, err, messages.ErrBadEncoding)
			assert.Nil(t, m)
		})
	}
}

func TestDecodeLegacyStreamEventErrors(t *testing.T) {
	tests := []struct {
		name string
		data string
	}{
		{"unknown signal", `{"stream":{"n":1},"signal":6}`},
		{"signal out of range", `{"stream":{"n":1},"signal":256}`},
		{"negative signal", `{"stream":{"n":1},"signal":-1}`},
		{"signal of the wrong type", `{"stream":{"n":1},"signal":"closed"}`},
		{"a frame event without frame", `{"stream":{"n":1},"signal":0}`},
		{"a frame event without anything", `{}`},
		{"a frame event with a null frame", `{"stream":{"n":1},"signal":0,"frame":null}`},
		{"frame of the wrong type", `{"stream":{"n":1},"signal":0,"frame":[]}`},
		{"invalid JSON", `{"stream":{"n":1},"signal":0,"frame":{"data":{}`},
		{"empty input", ``},
		{"not an object", `[]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := messages.DecodeStreamEvent([]byte(tc.data))
			require.ErrorIs(t, err, messages.ErrBadEncoding)
			assert.Zero(t, ev)
		})
	}
}
