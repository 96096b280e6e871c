package dispatcher_test

import (
	"encoding/json/jsontext"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/actors/dispatcher"
	"github.com/mcp-actors/mcp-actors/messages"
)

func TestRemoteCancelled(t *testing.T) {
	tests := []struct {
		name    string
		reason  string
		wantMsg string
	}{
		{
			name:    "with a reason",
			reason:  "user closed the dialog",
			wantMsg: `calling "elicitation/create": outbound: cancelled by the client: user closed the dialog`,
		},
		{
			name:    "without a reason",
			wantMsg: `calling "elicitation/create": outbound: cancelled by the client`,
		},
	}
	for _, tt := range tests {
		bubble(t, tt.name, func(t *testing.T) {
			a := newTestActor(t, actorConfig{})
			out, f := a.call(t.Context(), messages.MethodElicit, nil)
			require.True(t, a.cancelled(&messages.CancelledParams{RequestID: f.Msg.ID, Reason: tt.reason}))

			r := await(t, out, "the call to return")
			require.ErrorIs(t, r.Err, dispatcher.ErrRemoteCancelled)
			assert.EqualError(t, r.Err, tt.wantMsg)
			assert.Nil(t, r.Raw)
			assert.Equal(t, tableState{Stats: dispatcher.Stats{Sent: 1, RemoteCancelled: 1}}, a.state())

			// Nothing goes back to the client, and a late answer is a duplicate.
			a.assertNoFrames()
			assert.False(t, a.respondResult(f.Msg.ID, `{}`))
			assert.False(t, a.cancelled(&messages.CancelledParams{RequestID: f.Msg.ID}), "a second cancel names no pending call")
			assert.Equal(t, tableState{Stats: dispatcher.Stats{Sent: 1, RemoteCancelled: 1, Duplicate: 1}}, a.state())
		})
	}

	unknown := []struct {
		name string
		id   messages.ID
	}{
		{"never issued", messages.IntID(42)},
		{"string form of a pending ID", messages.StringID("2")},
		{"already answered", messages.IntID(1)},
		{"zero", messages.ID{}},
	}
	for _, tt := range unknown {
		bubble(t, "unknown ID: "+tt.name, func(t *testing.T) {
			a := newTestActor(t, actorConfig{})
			answered, f1 := a.call(t.Context(), messages.MethodPing, nil)
			require.True(t, a.respondResult(f1.Msg.ID, `{}`))
			require.NoError(t, await(t, answered, "call 1").Err)
			pending, f2 := a.call(t.Context(), messages.MethodPing, nil)

			assert.False(t, a.cancelled(&messages.CancelledParams{RequestID: tt.id, Reason: "x"}))
			assert.Equal(t, tableState{Stats: dispatcher.Stats{Sent: 2, Completed: 1}, Pending: 1}, a.state(),
				"nothing counted, call 2 still pending")

			require.True(t, a.respondResult(f2.Msg.ID, `{"n":2}`))
			r := await(t, pending, "call 2")
			require.NoError(t, r.Err)
			assert.JSONEq(t, `{"n":2}`, string(r.Raw))
		})
	}
}

func TestStrayAndDuplicateResponses(t *testing.T) {
	fractional, err := messages.ParseID([]byte("2.0"))
	require.NoError(t, err)
	tests := []struct {
		name      string
		msg       *messages.Message
		stray     uint64
		duplicate uint64
	}{
		{"ID beyond the last issued", &messages.Message{ID: messages.IntID(3), Result: jsontext.Value(`{}`)}, 1, 0},
		{"ID zero", &messages.Message{ID: messages.IntID(0), Result: jsontext.Value(`{}`)}, 1, 0},
		{"negative ID", &messages.Message{ID: messages.IntID(-1), Result: jsontext.Value(`{}`)}, 1, 0},
		{"string form of a pending ID", &messages.Message{ID: messages.StringID("2"), Result: jsontext.Value(`{}`)}, 1, 0},
		{"fractional form of a pending ID", &messages.Message{ID: fractional, Result: jsontext.Value(`{}`)}, 1, 0},
		{"error with a null ID", &messages.Message{Error: messages.Errorf(messages.CodeParseError, "parse error")}, 1, 0},
		{"already answered", &messages.Message{ID: messages.IntID(1), Result: jsontext.Value(`{"again":true}`)}, 0, 1},
		{"error for an answered ID", &messages.Message{ID: messages.IntID(1), Error: messages.ErrInternal}, 0, 1},
	}
	for _, tt := range tests {
		bubble(t, tt.name, func(t *testing.T) {
			// Call 1 is answered, call 2 is pending.
			a := newTestActor(t, actorConfig{})
			answered, f1 := a.call(t.Context(), messages.MethodListRoots, nil)
			require.True(t, a.respondResult(f1.Msg.ID, `{"n":1}`))
			r1 := await(t, answered, "call 1")
			require.NoError(t, r1.Err)
			pending, f2 := a.call(t.Context(), messages.MethodListRoots, nil)
			require.Equal(t, int64(2), intID(t, f2))

			assert.False(t, a.respond(tt.msg), "HandleResponse reports it ignored the response")
			assert.False(t, a.respond(tt.msg), "and again")
			assert.Equal(t, tableState{
				Stats:   dispatcher.Stats{Sent: 2, Completed: 1, Stray: 2 * tt.stray, Duplicate: 2 * tt.duplicate},
				Pending: 1,
			}, a.state())
			a.assertNoFrames()
			assert.JSONEq(t, `{"n":1}`, string(r1.Raw), "the first answer stands")

			// Call 2 is untouched and still takes its own answer.
			require.True(t, a.respondResult(f2.Msg.ID, `{"n":2}`))
			r2 := await(t, pending, "call 2")
			require.NoError(t, r2.Err)
			assert.JSONEq(t, `{"n":2}`, string(r2.Raw))
		})
	}
}
