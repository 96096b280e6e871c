package messages_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/messages"
)

// stdDecode is the reference Decode is checked against: encoding/json
// with case-sensitive member names.
func stdDecode(data []byte) (valid, object bool, method, params string) {
	if !json.Valid(data) {
		return false, false, "", ""
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil {
		return true, false, "", ""
	}
	_ = json.Unmarshal(m["method"], &method)
	return true, true, method, string(m["params"])
}

// FuzzDecodeMatchesEncodingJSON checks the hand-written scanner in Decode
// against encoding/json: the same inputs are malformed (-32700), and a
// request's method and params come out the same.
func FuzzDecodeMatchesEncodingJSON(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"t":"a\"b\\c\u00e9"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"m\u00e9","params":[1,-2.5e+3,true,false,null,{}]}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":01}}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":1.}}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":"\x01"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":"\u12"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":tru}}`,
		`{"jsonrpc":"2.0","id":1,"method":"x"} x`,
		`{"jsonrpc":"2.0","id":1,"method":"x",}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","method":"y"}`,
		`{"\u006dethod":"x","jsonrpc":"2.0","id":1}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}",
		` [1] `, `"s"`, `3`, ``, `{`, `{"a"}`, `{"a":}`, `{"a":1 "b":2}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		valid, object, method, params := stdDecode(data)
		m, derr := messages.Decode(data)
		if !valid {
			require.NotNil(t, derr, "encoding/json rejects %q", data)
			assert.Equal(t, int64(messages.CodeParseError), derr.Code, "malformed JSON is a parse error: %q", data)
			return
		}
		if derr != nil {
			assert.Equal(t, int64(messages.CodeInvalidRequest), derr.Code, "valid JSON is never a parse error: %q (%v)", data, derr)
			if !object {
				assert.Contains(t, derr.Message, "JSON object")
			}
			return
		}
		if m.Method != "" {
			assert.Equal(t, method, m.Method)
			if params != "" && params != "null" {
				assert.Equal(t, params, string(m.Params))
			}
		}
	})
}

func TestDecodeDepthLimit(t *testing.T) {
	deep := `{"jsonrpc":"2.0","id":1,"method":"x","params":` + strings.Repeat(`[`, 10001) + strings.Repeat(`]`, 10001) + `}`
	_, derr := messages.Decode([]byte(deep))
	require.NotNil(t, derr)
	assert.Equal(t, int64(messages.CodeParseError), derr.Code, "too deep for encoding/json too")
}

func BenchmarkDecodeToolCall(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"test_echo","arguments":{"text":"hello from the bench client"},"_meta":{"progressToken":"x"}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := messages.Decode(msg); err != nil {
			b.Fatal(err)
		}
	}
}

func TestIsBatch(t *testing.T) {
	for in, want := range map[string]bool{
		`[{"jsonrpc":"2.0","method":"x"}]`: true,
		" \t\r\n[]":                        true,
		`{"jsonrpc":"2.0","method":"x"}`:   false,
		" \n{}":                            false,
		"":                                 false,
		" \t ":                             false,
		"\v[":                              false, // not JSON whitespace
	} {
		assert.Equal(t, want, messages.IsBatch([]byte(in)), "%q", in)
	}
}
