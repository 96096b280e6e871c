package messages_test

import (
	json "encoding/json/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/messages"
)

func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":"abc","method":"tools/call","params":{"name":"x","arguments":{"a":[1,2,{"b":null}]}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":0.5}}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":"x","result":null}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`,
		`{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"bad","data":{"why":"\u00e9"}}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":123456789012345678901234567890e99,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":-0.5e-3,"method":"ping","params":[]}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":"str"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":42}`,
		`{"jsonrpc":"2.0","id":true,"method":"ping"}`,
		`{"jsonrpc":"1.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":""}`,
		`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}`,
		`{"jsonrpc":"2.0","id":"\ud800","method":"x\u0000y"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":` + strings.Repeat(`{"a":[`, 200) + strings.Repeat(`]}`, 200) + `}`,
		`{"jsonrpc":"2.0","id":1,"meth`,
		`null`,
		``,
		"\xff\xfe",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, werr := messages.Decode(data)
		if werr != nil {
			assert.NotZero(t, werr.Code)
			return
		}
		require.NotNil(t, m)
		kind := m.Kind()
		require.NotEqual(t, messages.KindInvalid, kind, "decoded without error but invalid: %q", data)

		out, err := messages.Encode(m)
		require.NoError(t, err)
		again, werr := messages.Decode(out)
		require.Nil(t, werr, "re-decoding %q (from %q)", out, data)
		assert.Equal(t, kind, again.Kind())
		assert.Equal(t, m.ID, again.ID)
		assert.Equal(t, m.Method, again.Method)
	})
}

func FuzzUnmarshalContent(f *testing.F) {
	for _, seed := range []string{
		`{"type":"text","text":"hi","annotations":{"audience":["user"],"priority":0.5}}`,
		`{"type":"image","data":"cG5nIQ==","mimeType":"image/png"}`,
		`{"type":"audio","data":"","mimeType":"audio/wav","_meta":{"a":null}}`,
		`{"type":"resource_link","uri":"file:///a","name":"a","size":12}`,
		`{"type":"resource","resource":{"uri":"file:///a","blob":"aGk="}}`,
		`{"type":"resource","resource":{"uri":"file:///a","text":"t"}}`,
		`{"type":"tool_use","id":"1","name":"n","input":{"x":[1]}}`,
		`{"type":"tool_result","toolUseId":"1","content":[{"type":"text","text":"ok"}],"isError":true}`,
		`{"type":"tool_result","toolUseId":"1","content":[{"type":"tool_result","toolUseId":"2","content":[]}]}`,
		`{"type":"video"}`,
		`{"type":7}`,
		`[]`,
		`null`,
		`{"type":"image","data":"%%%"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := messages.UnmarshalContent(data)
		if err != nil {
			assert.Nil(t, c)
			return
		}
		require.NotNil(t, c)
		// After one trip the encoding is a fixed point.
		first, err := json.Marshal(c)
		require.NoError(t, err)
		again, err := messages.UnmarshalContent(first)
		require.NoError(t, err, "re-decoding %s", first)
		second, err := json.Marshal(again)
		require.NoError(t, err)
		assert.Equal(t, string(first), string(second))
	})
}
