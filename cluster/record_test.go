package cluster

import (
	json "encoding/json/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/messages"
)

// TestRecordFormat: directory and lease records written by the release
// that encoded them with encoding/json (v1) are read as they were meant,
// and a record read is written again byte for byte: nodes of both
// releases share the buckets during an upgrade. The capabilities that are
// empty objects ("roots":{}, "elicitation":{}) must survive the trip: a
// restored session that lost them would stop asking its client for roots
// or input.
func TestRecordFormat(t *testing.T) {
	t.Run("directory", func(t *testing.T) {
		tests := []struct {
			name  string
			v1    string // as encoding/json (v1) wrote it
			check func(t *testing.T, rec *record)
		}{
			{
				name: "full state",
				v1:   `{"v":1,"session":"s1","owner":"n1","epoch":2,"principal":"alice","state":{"principal":"alice","protocolVersion":"2025-06-18","clientInfo":{"name":"client","version":"1.0"},"clientCapabilities":{"experimental":{"x":{"on":true}},"roots":{},"sampling":{},"elicitation":{},"tasks":{"list":{}}},"logLevel":"debug","subscriptions":["test://a","test://b"],"data":{"empty":"","k":"dgD/"},"mark":{"tools":"3"}}}`,
				check: func(t *testing.T, rec *record) {
					assert.Equal(t, "alice", rec.Principal)
					require.NotNil(t, rec.State)
					st := rec.State
					assert.Equal(t, "2025-06-18", st.ProtocolVersion)
					assert.Equal(t, messages.Implementation{Name: "client", Version: "1.0"}, st.ClientInfo)
					caps := st.ClientCapabilities
					assert.NotNil(t, caps.Roots)
					assert.NotNil(t, caps.Sampling)
					assert.NotNil(t, caps.Elicitation)
					assert.JSONEq(t, `{"on":true}`, string(caps.Experimental["x"]))
					assert.JSONEq(t, `{"list":{}}`, string(caps.Tasks))
					assert.Equal(t, messages.LoggingLevel("debug"), st.LogLevel)
					assert.Equal(t, []string{"test://a", "test://b"}, st.Subscriptions)
					assert.Equal(t, map[string][]byte{"empty": {}, "k": []byte("v\x00\xff")}, st.Data)
					assert.Equal(t, map[string]string{"tools": "3"}, st.Mark)
				},
			},
			{
				name: "no state",
				v1:   `{"v":1,"session":"s2","owner":"n2","epoch":0}`,
				check: func(t *testing.T, rec *record) {
					assert.Nil(t, rec.State)
					assert.Empty(t, rec.Principal)
				},
			},
			{
				name: "empty state",
				v1:   `{"v":1,"session":"s3","owner":"n1","epoch":1,"state":{"protocolVersion":"2025-03-26","clientInfo":{"name":"c","version":"0"},"clientCapabilities":{}}}`,
				check: func(t *testing.T, rec *record) {
					require.NotNil(t, rec.State)
					assert.Nil(t, rec.State.ClientCapabilities.Roots)
					assert.Nil(t, rec.State.Subscriptions)
					assert.Nil(t, rec.State.Data)
				},
			},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				var rec record
				require.NoError(t, json.Unmarshal([]byte(tt.v1), &rec))
				assert.Equal(t, recordVersion, rec.V)
				tt.check(t, &rec)
				b, err := rec.encode()
				require.NoError(t, err)
				assert.Equal(t, tt.v1, string(b))
			})
		}
	})
	t.Run("lease", func(t *testing.T) {
		const v1 = `{"node":"n1","boot":"b1","started":"2025-11-26T18:32:00.123456789Z"}`
		var rec leaseRecord
		require.NoError(t, json.Unmarshal([]byte(v1), &rec))
		want := leaseRecord{Node: "n1", Boot: "b1", Started: time.Date(2025, 11, 26, 18, 32, 0, 123456789, time.UTC)}
		assert.True(t, want.Started.Equal(rec.Started))
		assert.Equal(t, want.Node, rec.Node)
		assert.Equal(t, want.Boot, rec.Boot)
		assert.Zero(t, rec.V, "v0.1.0 wrote no version: the same format")
		assert.Nil(t, rec.Sessions)
		// This release writes the version, and the session count when it
		// knows it; v0.1.0 ignores both (unknown members).
		sessions := 7
		b, err := json.Marshal(leaseRecord{V: leaseVersion, Node: "n1", Boot: "b1", Started: want.Started, Sessions: &sessions})
		require.NoError(t, err)
		assert.Equal(t, `{"v":1,"node":"n1","boot":"b1","started":"2025-11-26T18:32:00.123456789Z","sessions":7}`, string(b))
	})
}
