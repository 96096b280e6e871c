package dispatcher_test

import (
	"context"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"errors"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/actors/dispatcher"
	"github.com/mcp-actors/mcp-actors/messages"
)

func TestCallHappyPath(t *testing.T) {
	tests := []struct {
		name       string
		method     string
		params     any
		wantParams string // "" when the frame must carry no params
		result     string
	}{
		{
			name:   "no params",
			method: messages.MethodListRoots,
			result: `{"roots":[]}`,
		},
		{
			name:       "struct params",
			method:     messages.MethodElicit,
			params:     &messages.ElicitParams{Message: "Proceed?"},
			wantParams: `{"message":"Proceed?"}`,
			result:     `{"action":"accept","content":{"ok":true}}`,
		},
		{
			name:       "raw params kept as they are",
			method:     messages.MethodCreateMessage,
			params:     jsontext.Value(`{"messages":[],"maxTokens":5}`),
			wantParams: `{"messages":[],"maxTokens":5}`,
			result:     `{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}`,
		},
		{
			name:       "no HTML escaping",
			method:     messages.MethodElicit,
			params:     map[string]string{"message": "<a & b>"},
			wantParams: `{"message":"<a & b>"}`,
			result:     `{}`,
		},
	}
	for _, tt := range tests {
		bubble(t, tt.name, func(t *testing.T) {
			a := newTestActor(t, actorConfig{})
			out, f := a.call(t.Context(), tt.method, tt.params)

			var wire map[string]jsontext.Value
			require.NoError(t, json.Unmarshal(f.Raw, &wire))
			assert.JSONEq(t, `"2.0"`, string(wire["jsonrpc"]))
			assert.Equal(t, `1`, string(wire["id"]), "the first ID is the integer 1")
			assert.JSONEq(t, `"`+tt.method+`"`, string(wire["method"]))
			members := 3
			if tt.wantParams == "" {
				assert.NotContains(t, wire, "params")
			} else {
				assert.JSONEq(t, tt.wantParams, string(wire["params"]))
				members++
			}
			assert.Len(t, wire, members, "no other members: %s", f.Raw)

			require.True(t, a.respondResult(f.Msg.ID, tt.result))
			r := await(t, out, "the call to return")
			require.NoError(t, r.Err)
			assert.Equal(t, tt.result, string(r.Raw), "the raw result, byte for byte")
			assert.Equal(t, tableState{Stats: dispatcher.Stats{Sent: 1, Completed: 1}}, a.state())
		})
	}

	bubble(t, "IDs are monotonic integers, never reused", func(t *testing.T) {
		a := newTestActor(t, actorConfig{})
		for want := int64(1); want <= 5; want++ {
			ctx, cancel := context.WithCancel(t.Context())
			out, f := a.call(ctx, messages.MethodPing, nil)
			require.Equal(t, want, intID(t, f))
			switch want % 3 { // end the calls in different ways
			case 0:
				cancel()
				a.nextCancelled()
			case 1:
				require.True(t, a.respondResult(f.Msg.ID, `{}`))
			case 2:
				require.True(t, a.cancelled(&messages.CancelledParams{RequestID: f.Msg.ID}))
			}
			await(t, out, "the call to return")
			cancel()
		}
	})

	bubble(t, "route reaches the sender", func(t *testing.T) {
		a := newTestActor(t, actorConfig{})
		route := messages.StringID("inbound-7")
		out, f := a.call(t.Context(), messages.MethodListRoots, nil, dispatcher.WithRoute(route))
		assert.Equal(t, route, f.Route)
		require.True(t, a.respondResult(f.Msg.ID, `{"roots":[]}`))
		require.NoError(t, await(t, out, "the call to return").Err)
	})

	bubble(t, "unencodable params fail before anything is posted", func(t *testing.T) {
		a := newTestActor(t, actorConfig{})
		_, err := a.client.Call(t.Context(), messages.MethodElicit, map[string]any{"ch": make(chan int)})
		require.Error(t, err)
		assert.ErrorContains(t, err, `calling "elicitation/create": encoding params`)
		assert.ErrorContains(t, err, "chan int", "the error names what cannot be encoded")
		a.assertNoFrames()
		assert.Equal(t, tableState{}, a.state())
	})
}

func TestConcurrentCalls(t *testing.T) {
	reverse := slices.Reverse[[]int]
	shuffle := func(ids []int) {
		r := rand.New(rand.NewPCG(1, 2)) // fixed seed: the same order every run
		r.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	}
	tests := []struct {
		name  string
		n     int
		order func([]int) // reorders the callers before they are answered
	}{
		{"two answered in reverse", 2, reverse},
		{"100 answered in reverse", 100, reverse},
		{"100 answered shuffled", 100, shuffle},
	}
	for _, tt := range tests {
		bubble(t, tt.name, func(t *testing.T) {
			a := newTestActor(t, actorConfig{})
			outs := make([]<-chan callResult, tt.n)
			for i := range tt.n {
				outs[i] = a.goCall(t.Context(), messages.MethodCreateMessage, map[string]int{"caller": i})
			}

			// Map each request back to its caller through its params.
			idOf := make([]messages.ID, tt.n)
			seen := map[int64]bool{}
			for range tt.n {
				f := a.nextRequest(messages.MethodCreateMessage)
				var p struct {
					Caller int `json:"caller"`
				}
				require.NoError(t, json.Unmarshal(f.Msg.Params, &p))
				idOf[p.Caller] = f.Msg.ID
				seen[intID(t, f)] = true
			}
			for id := int64(1); id <= int64(tt.n); id++ {
				assert.True(t, seen[id], "ID %d was issued", id)
			}

			callers := make([]int, tt.n)
			for i := range callers {
				callers[i] = i
			}
			tt.order(callers)
			for _, i := range callers {
				require.True(t, a.respondResult(idOf[i], `{"caller":`+strconv.Itoa(i)+`}`))
			}
			for i, out := range outs {
				r := await(t, out, "caller "+strconv.Itoa(i))
				require.NoError(t, r.Err)
				assert.JSONEq(t, `{"caller":`+strconv.Itoa(i)+`}`, string(r.Raw), "caller %d got its own result", i)
			}
			n := uint64(tt.n)
			assert.Equal(t, tableState{Stats: dispatcher.Stats{Sent: n, Completed: n}}, a.state())
		})
	}
}

func TestCallErrorResponse(t *testing.T) {
	tests := []struct {
		name    string
		wire    *messages.Error
		is      error // a sentinel the error must match
		isNot   error
		wantMsg string
	}{
		{
			name:    "invalid params",
			wire:    messages.Errorf(messages.CodeInvalidParams, "maxTokens must be positive"),
			is:      messages.ErrInvalidParams,
			isNot:   messages.ErrInternal,
			wantMsg: `calling "sampling/createMessage": jsonrpc error -32602: maxTokens must be positive`,
		},
		{
			name:    "method not found",
			wire:    messages.Errorf(messages.CodeMethodNotFound, "no sampling here"),
			is:      messages.ErrMethodNotFound,
			isNot:   messages.ErrInvalidParams,
			wantMsg: `calling "sampling/createMessage": jsonrpc error -32601: no sampling here`,
		},
		{
			name:    "user rejected, with data",
			wire:    messages.Errorf(-1, "User rejected sampling request").WithData(map[string]string{"why": "busy"}),
			is:      &messages.Error{Code: -1},
			isNot:   messages.ErrInternal,
			wantMsg: `calling "sampling/createMessage": jsonrpc error -1: User rejected sampling request`,
		},
	}
	for _, tt := range tests {
		bubble(t, tt.name, func(t *testing.T) {
			a := newTestActor(t, actorConfig{})
			out, f := a.call(t.Context(), messages.MethodCreateMessage, nil)
			require.True(t, a.respondError(f.Msg.ID, tt.wire))

			r := await(t, out, "the call to return")
			require.Error(t, r.Err)
			assert.Nil(t, r.Raw)
			assert.ErrorIs(t, r.Err, tt.is)
			assert.NotErrorIs(t, r.Err, tt.isNot)
			assert.EqualError(t, r.Err, tt.wantMsg)
			var wire *messages.Error
			assert.False(t, errors.As(r.Err, &wire), "a client's refusal is not the handler's own JSON-RPC error")
			var ce *dispatcher.ClientError
			require.ErrorAs(t, r.Err, &ce)
			assert.Same(t, tt.wire, ce.Wire, "the client's error object, unchanged")
			assert.Equal(t, tableState{Stats: dispatcher.Stats{Sent: 1, Completed: 1}}, a.state())
		})
	}
}

func TestCallContextEndsWhilePending(t *testing.T) {
	tests := []struct {
		name string
		// start returns the call's context and the step that ends it.
		start      func(t *testing.T) (context.Context, func())
		want       error
		wantReason string
	}{
		{
			name: "cancelled",
			start: func(t *testing.T) (context.Context, func()) {
				return context.WithCancel(t.Context())
			},
			want:       context.Canceled,
			wantReason: "context canceled",
		},
		{
			name: "cancelled with a cause",
			start: func(t *testing.T) (context.Context, func()) {
				ctx, cancel := context.WithCancelCause(t.Context())
				return ctx, func() { cancel(errors.New("handler gave up")) }
			},
			want:       context.Canceled, // ctx.Err(), not the cause
			wantReason: "context canceled",
		},
		{
			name: "deadline",
			start: func(t *testing.T) (context.Context, func()) {
				ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
				t.Cleanup(cancel)
				return ctx, func() {} // the fake clock reaches the deadline once all wait
			},
			want:       context.DeadlineExceeded,
			wantReason: "context deadline exceeded",
		},
	}
	for _, tt := range tests {
		bubble(t, tt.name, func(t *testing.T) {
			a := newTestActor(t, actorConfig{})
			ctx, end := tt.start(t)
			began := time.Now()
			out, f := a.call(ctx, messages.MethodCreateMessage, nil)
			assert.Equal(t, tableState{Stats: dispatcher.Stats{Sent: 1}, Pending: 1}, a.state())

			end()
			r := await(t, out, "the call to return")
			require.Equal(t, tt.want, r.Err, "exactly ctx.Err(), unwrapped")
			assert.Nil(t, r.Raw)
			if tt.want == context.DeadlineExceeded {
				assert.Equal(t, 5*time.Second, time.Since(began), "returned at the deadline")
			}

			p := a.nextCancelled()
			assert.Equal(t, f.Msg.ID, p.RequestID)
			assert.Equal(t, tt.wantReason, p.Reason)
			assert.Equal(t, tableState{Stats: dispatcher.Stats{Sent: 1, Cancelled: 1}}, a.state())

			// The client answers anyway: the late response is a duplicate.
			assert.False(t, a.respondResult(f.Msg.ID, `{}`))
			assert.Equal(t, tableState{Stats: dispatcher.Stats{Sent: 1, Cancelled: 1, Duplicate: 1}}, a.state())
			a.assertNoFrames()
		})
	}
}

func TestCallContextDoneBeforeCall(t *testing.T) {
	tests := []struct {
		name   string
		ctx    func(t *testing.T) context.Context
		params any
		want   error
	}{
		{
			name: "cancelled",
			ctx: func(t *testing.T) context.Context {
				ctx, cancel := context.WithCancel(t.Context())
				cancel()
				return ctx
			},
			want: context.Canceled,
		},
		{
			name: "deadline passed",
			ctx: func(t *testing.T) context.Context {
				ctx, cancel := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
				t.Cleanup(cancel)
				return ctx
			},
			want: context.DeadlineExceeded,
		},
		{
			name: "cancelled wins over unencodable params",
			ctx: func(t *testing.T) context.Context {
				ctx, cancel := context.WithCancel(t.Context())
				cancel()
				return ctx
			},
			params: make(chan int),
			want:   context.Canceled,
		},
	}
	for _, tt := range tests {
		bubble(t, tt.name, func(t *testing.T) {
			a := newTestActor(t, actorConfig{})
			raw, err := a.client.Call(tt.ctx(t), messages.MethodCreateMessage, tt.params)
			require.Equal(t, tt.want, err)
			assert.Nil(t, raw)
			a.assertNoFrames()
			assert.Equal(t, tableState{}, a.state(), "the table never saw the call")
		})
	}
}

// TestNewCallParams checks what NewCall makes of params: typed values are
// encoded, raw JSON is taken as it is once it is valid, and neither an
// unencodable value nor broken raw JSON becomes a call.
func TestNewCallParams(t *testing.T) {
	c, err := dispatcher.NewCall("roots/list", nil)
	require.NoError(t, err)
	assert.Nil(t, c.Params)

	c, err = dispatcher.NewCall("elicitation/create", &messages.ElicitParams{Message: "name?"})
	require.NoError(t, err)
	assert.JSONEq(t, `{"message":"name?"}`, string(c.Params))

	c, err = dispatcher.NewCall("x/y", jsontext.Value(`{"a": [1, 2]}`))
	require.NoError(t, err)
	assert.JSONEq(t, `{"a":[1,2]}`, string(c.Params))

	_, err = dispatcher.NewCall("x/y", jsontext.Value(`{"a":`))
	assert.Error(t, err, "broken raw JSON")
	_, err = dispatcher.NewCall("x/y", make(chan int))
	assert.Error(t, err, "a value JSON cannot hold")
}
