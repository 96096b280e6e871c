package session

import (
	json "encoding/json/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/messages"
)

// TestStateSizeIsTheEncodedSize: the size PutData checks against
// Limits.MaxStateBytes is the size of the State as Config.Persist gets
// it, encoded as a cluster encodes it (encoding/json: values in base64,
// keys escaped), or one byte more — never less.
func TestStateSizeIsTheEncodedSize(t *testing.T) {
	a := newSessionActor(&Ref{id: "n1.s"}, &Config{}, SpawnOptions{Principal: "alice"})
	a.info = &Info{ProtocolVersion: messages.Version20251125, ClientInfo: messages.Implementation{Name: "c", Version: "1"}}
	a.subs = map[string]struct{}{"test://x": {}}
	for _, kv := range []struct{ key, value string }{
		{"a", ""},
		{"b", "x"},
		{"c", "xy"},
		{"d", "xyz"},
		{"<html & \"quotes\">", strings.Repeat("v", 1000)},
		{"ünïcode\u2028", "\x00\xff"},
		{"a", strings.Repeat("w", 77)}, // replaces a value
	} {
		size, err := a.stateSize(kv.key, []byte(kv.value))
		require.NoError(t, err)
		require.NoError(t, a.data.put(kv.key, []byte(kv.value), a.lim))
		b, err := json.Marshal(a.snapshot())
		require.NoError(t, err)
		assert.GreaterOrEqual(t, size, len(b), "%q", kv.key)
		assert.LessOrEqual(t, size, len(b)+1, "%q", kv.key)
	}
}
