package cluster

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/actors/session"
	"github.com/mcp-actors/mcp-actors/messages"
)

// TestEventEncoding round-trips stored events, request IDs with spaces and
// data with newlines included, and refuses what is not one.
func TestEventEncoding(t *testing.T) {
	for _, e := range []session.LoggedEvent{
		{Stream: "0", Seq: 3, Data: []byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)},
		{Stream: "12", Seq: 1, Request: messages.StringID("a b\nc"), Data: []byte("{\n}")},
		{Stream: "65537", Seq: 65538, Request: messages.IntID(-4), Data: []byte(`{"id":-4}`), End: true},
	} {
		got, epoch, err := parseEvent(encodeEvent(nil, e, 7))
		require.NoError(t, err)
		assert.Equal(t, e, got)
		assert.Equal(t, uint64(7), epoch)
	}
	for _, bad := range []string{"", "0 1 0", "0 x 0 1 \n{}", "0 1\n{}", "0 1 0 1 {\n{}", "0 1 0 x \n{}", "0 1 0 \n{}"} {
		_, _, err := parseEvent([]byte(bad))
		assert.Error(t, err, "%q", bad)
	}
}
