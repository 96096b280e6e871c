package dispatcher_test

import (
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/actors/dispatcher"
	"github.com/mcp-actors/mcp-actors/messages"
)

// progressAt builds the update for call id (its token is its ID).
func progressAt(id messages.ID, progress float64) *messages.ProgressParams {
	return &messages.ProgressParams{ProgressToken: id, Progress: progress}
}

// progressLog records updates; it is written by the callback on the
// caller's goroutine and read by the script after Call has returned.
type progressLog struct {
	progress []float64
	gids     []uint64
}

func (l *progressLog) record(p *messages.ProgressParams) {
	l.progress = append(l.progress, p.Progress)
	l.gids = append(l.gids, goroutineID())
}

func TestProgressToken(t *testing.T) {
	tests := []struct {
		name       string
		params     any
		wantParams string // the only call's token is its ID, 1
	}{
		{"no params", nil, `{"_meta":{"progressToken":1}}`},
		{"struct params", &messages.ElicitParams{Message: "go?"}, `{"message":"go?","_meta":{"progressToken":1}}`},
		{
			"merged with existing _meta keys",
			jsontext.Value(`{"message":"go?","_meta":{"io.example/trace":"abc","n":2}}`),
			`{"message":"go?","_meta":{"io.example/trace":"abc","n":2,"progressToken":1}}`,
		},
		{
			"caller's own token replaced by the table's",
			jsontext.Value(`{"_meta":{"progressToken":"mine"}}`),
			`{"_meta":{"progressToken":1}}`,
		},
		{"null _meta", jsontext.Value(`{"_meta":null}`), `{"_meta":{"progressToken":1}}`},
	}
	for _, tt := range tests {
		bubble(t, tt.name, func(t *testing.T) {
			a := newTestActor(t, actorConfig{})
			out, f := a.call(t.Context(), messages.MethodElicit, tt.params,
				dispatcher.WithProgress(func(*messages.ProgressParams) {}))
			assert.JSONEq(t, tt.wantParams, string(f.Msg.Params))

			var p struct {
				Meta messages.Meta `json:"_meta"`
			}
			require.NoError(t, json.Unmarshal(f.Msg.Params, &p))
			token, ok := p.Meta.ProgressToken()
			require.True(t, ok)
			assert.Equal(t, f.Msg.ID, token, "the token is the request ID")

			require.True(t, a.respondResult(f.Msg.ID, `{}`))
			require.NoError(t, await(t, out, "the call to return").Err)
		})
	}

	bubble(t, "no token without WithProgress", func(t *testing.T) {
		a := newTestActor(t, actorConfig{})
		out, f := a.call(t.Context(), messages.MethodElicit, jsontext.Value(`{"_meta":{"k":1}}`))
		assert.JSONEq(t, `{"_meta":{"k":1}}`, string(f.Msg.Params))
		require.True(t, a.respondResult(f.Msg.ID, `{}`))
		require.NoError(t, await(t, out, "the call to return").Err)
	})
}

func TestProgress(t *testing.T) {
	bubble(t, "callback runs on the caller's goroutine, in order", func(t *testing.T) {
		a := newTestActor(t, actorConfig{})
		var log progressLog
		out, f := a.call(t.Context(), messages.MethodCreateMessage, nil, dispatcher.WithProgress(log.record))
		for i := 1; i <= 5; i++ {
			require.True(t, a.progress(progressAt(f.Msg.ID, float64(i))))
		}
		require.True(t, a.respondResult(f.Msg.ID, `{}`))

		r := await(t, out, "the call to return")
		require.NoError(t, r.Err)
		assert.Equal(t, []float64{1, 2, 3, 4, 5}, log.progress, "every update, in order, before Call returned")
		for _, gid := range log.gids {
			assert.Equal(t, r.GID, gid, "the callback ran on the caller's goroutine")
		}
		assert.Equal(t, tableState{Stats: dispatcher.Stats{Sent: 1, Completed: 1, ProgressReceived: 5}}, a.state())
	})

	unknown := []struct {
		name  string
		token func(callID messages.ID) messages.ProgressToken
	}{
		{"token never issued", func(messages.ID) messages.ProgressToken { return messages.IntID(99) }},
		{"string form of the token", func(id messages.ID) messages.ProgressToken { return messages.StringID(id.String()) }},
		{"zero token", func(messages.ID) messages.ProgressToken { return messages.ID{} }},
		{"token of a call without WithProgress", func(messages.ID) messages.ProgressToken { return messages.IntID(2) }},
		{"token of an answered call", func(messages.ID) messages.ProgressToken { return messages.IntID(3) }},
	}
	for _, tt := range unknown {
		bubble(t, "ignored: "+tt.name, func(t *testing.T) {
			a := newTestActor(t, actorConfig{})
			var log progressLog
			// Call 1 wants progress; call 2 does not; call 3 is answered.
			withProgress, f1 := a.call(t.Context(), messages.MethodCreateMessage, nil, dispatcher.WithProgress(log.record))
			plain, f2 := a.call(t.Context(), messages.MethodCreateMessage, nil)
			answered, f3 := a.call(t.Context(), messages.MethodCreateMessage, nil, dispatcher.WithProgress(func(*messages.ProgressParams) {
				t.Error("progress reached an answered call")
			}))
			require.True(t, a.respondResult(f3.Msg.ID, `{}`))
			require.NoError(t, await(t, answered, "call 3").Err)

			assert.False(t, a.progress(&messages.ProgressParams{ProgressToken: tt.token(f1.Msg.ID), Progress: 1}))
			assert.Equal(t, tableState{Stats: dispatcher.Stats{Sent: 3, Completed: 1}, Pending: 2}, a.state(), "nothing counted")

			require.True(t, a.respondResult(f1.Msg.ID, `{}`))
			require.True(t, a.respondResult(f2.Msg.ID, `{}`))
			require.NoError(t, await(t, withProgress, "call 1").Err)
			require.NoError(t, await(t, plain, "call 2").Err)
			assert.Empty(t, log.progress)
		})
	}

	bubble(t, "a lagging callback drops updates beyond the buffer", func(t *testing.T) {
		const extra = 3
		a := newTestActor(t, actorConfig{})
		entered, gate := make(chan struct{}), make(chan struct{})
		var got []float64
		out, f := a.call(t.Context(), messages.MethodCreateMessage, nil, dispatcher.WithProgress(func(p *messages.ProgressParams) {
			got = append(got, p.Progress)
			if len(got) == 1 {
				close(entered)
				<-gate // lag: the actor must not wait for us
			}
		}))

		require.True(t, a.progress(progressAt(f.Msg.ID, 1)))
		await(t, entered, "the callback to start")
		// The caller has taken update 1: the buffer is empty again.
		last := 1 + dispatcher.ProgressBuffer + extra
		for i := 2; i <= last; i++ {
			assert.True(t, a.progress(progressAt(f.Msg.ID, float64(i))), "a dropped update still names a caller")
		}
		assert.Equal(t, tableState{
			Stats:   dispatcher.Stats{Sent: 1, ProgressReceived: 1 + dispatcher.ProgressBuffer, DroppedProgress: extra},
			Pending: 1,
		}, a.state())

		close(gate)
		require.True(t, a.respondResult(f.Msg.ID, `{}`))
		require.NoError(t, await(t, out, "the call to return").Err)
		want := make([]float64, 0, 1+dispatcher.ProgressBuffer)
		for i := 1; i <= 1+dispatcher.ProgressBuffer; i++ {
			want = append(want, float64(i))
		}
		assert.Equal(t, want, got, "the queued updates, in order; the newest were dropped")
	})

	// Updates the client sent before its response are routed before the
	// call finishes, so the caller sees all of them even when the response
	// is already waiting when its callback returns. Repeated, because Call's
	// select picks at random among ready cases.
	bubble(t, "updates queued before the response are not lost", func(t *testing.T) {
		for range 20 {
			a := newTestActor(t, actorConfig{})
			entered, gate := make(chan struct{}), make(chan struct{})
			var got []float64
			out, f := a.call(t.Context(), messages.MethodCreateMessage, nil, dispatcher.WithProgress(func(p *messages.ProgressParams) {
				got = append(got, p.Progress)
				if len(got) == 1 {
					close(entered)
					<-gate
				}
			}))
			require.True(t, a.progress(progressAt(f.Msg.ID, 1)))
			await(t, entered, "the callback to start")
			require.True(t, a.progress(progressAt(f.Msg.ID, 2)))
			require.True(t, a.progress(progressAt(f.Msg.ID, 3)))
			require.True(t, a.respondResult(f.Msg.ID, `{"done":true}`))
			close(gate) // now both the updates and the result are ready

			r := await(t, out, "the call to return")
			require.NoError(t, r.Err)
			assert.JSONEq(t, `{"done":true}`, string(r.Raw))
			require.Equal(t, []float64{1, 2, 3}, got)
		}
	})
}
