package interop_test

import (
	"context"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tools that report while they run, and cancellation.

// progressClient returns client options whose progress handler passes every
// notification on to the returned channel.
func progressClient(t *testing.T) (*mcp.ClientOptions, <-chan *mcp.ProgressNotificationParams) {
	ch := make(chan *mcp.ProgressNotificationParams, 1024)
	return &mcp.ClientOptions{
		ProgressNotificationHandler: func(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
			send(t.Context(), ch, req.Params)
		},
	}, ch
}

// progressNote is a notifications/progress as it is on the wire.
type progressNote struct {
	ProgressToken jsontext.Value `json:"progressToken"`
	Progress      float64        `json:"progress"`
	Total         float64        `json:"total"`
}

// progressDuring returns the progress notifications of the last call of
// tool that came between its request and its response.
func progressDuring(t *testing.T, p *peer, tool string) []progressNote {
	t.Helper()
	var notes []progressNote
	for _, raw := range p.toolCall(tool).during("notifications/progress") {
		var n progressNote
		require.NoError(t, json.Unmarshal(raw, &n), "progress %s", raw)
		notes = append(notes, n)
	}
	return notes
}

func testProgress(t *testing.T, start starter) {
	opts, progress := progressClient(t)
	p := start(t, opts)

	// A string token.
	res := p.callTool(&mcp.CallToolParams{Name: "test_tool_with_progress", Meta: mcp.Meta{"progressToken": "progress-1"}})
	assert.False(t, res.IsError)
	for _, want := range []float64{0, 50, 100} {
		n := recv(p, progress, "progress")
		assert.Equal(t, "progress-1", n.ProgressToken)
		assert.Equal(t, want, n.Progress)
		assert.Equal(t, float64(100), n.Total)
	}
	notes := progressDuring(t, p, "test_tool_with_progress")
	require.Len(t, notes, 3, "progress notifications before the result")
	for i, want := range []float64{0, 50, 100} {
		assert.JSONEq(t, `"progress-1"`, string(notes[i].ProgressToken))
		assert.Equal(t, want, notes[i].Progress)
		assert.Equal(t, float64(100), notes[i].Total)
	}

	// A number token, echoed unchanged; seconds 0.5 gives exactly 5.
	res = p.callTool(&mcp.CallToolParams{
		Name:      "test_slow",
		Arguments: map[string]any{"seconds": 0.5},
		Meta:      mcp.Meta{"progressToken": 7},
	})
	assert.False(t, res.IsError)
	assert.Equal(t, "done", textOf(t, res))
	for i := 1; i <= 5; i++ {
		n := recv(p, progress, "test_slow progress")
		assert.EqualValues(t, 7, n.ProgressToken)
		assert.Equal(t, float64(i), n.Progress)
	}
	notes = progressDuring(t, p, "test_slow")
	require.Len(t, notes, 5, "test_slow seconds 0.5: progress notifications before the result")
	for i, n := range notes {
		assert.Equal(t, "7", string(n.ProgressToken), "the token, byte for byte")
		assert.Equal(t, float64(i+1), n.Progress)
		assert.Equal(t, float64(5), n.Total)
	}

	// Nothing after the results: a round trip later, the wire holds no
	// more progress than those eight.
	ping(t, p)
	assert.Equal(t, 8, p.wire.count("notifications/progress"))
	assert.Empty(t, progress)
}

func testLogging(t *testing.T, start starter) {
	logs := make(chan *mcp.LoggingMessageParams, 64)
	p := start(t, &mcp.ClientOptions{
		LoggingMessageHandler: func(ctx context.Context, req *mcp.LoggingMessageRequest) {
			send(t.Context(), logs, req.Params)
		},
	})

	ctx, cancel := p.wait()
	defer cancel()
	require.NoError(t, p.cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}))
	assertEmptyResult(t, p, "logging/setLevel")

	want := []string{"Tool execution started", "Tool processing data", "Tool execution completed"}
	res := p.call("test_tool_with_logging", nil)
	assert.False(t, res.IsError)
	for _, text := range want {
		msg := recv(p, logs, "notifications/message")
		assert.Equal(t, mcp.LoggingLevel("info"), msg.Level)
		assert.Equal(t, text, msg.Data)
	}
	notes := p.toolCall("test_tool_with_logging").during("notifications/message")
	require.Len(t, notes, 3, "log messages before the result")
	for i, raw := range notes {
		var n struct {
			Level string `json:"level"`
			Data  string `json:"data"`
		}
		require.NoError(t, json.Unmarshal(raw, &n), "notifications/message %s", raw)
		assert.Equal(t, "info", n.Level)
		assert.Equal(t, want[i], n.Data)
	}

	// Above the messages' level, the same call logs nothing.
	require.NoError(t, p.cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "error"}))
	assertEmptyResult(t, p, "logging/setLevel")
	res = p.call("test_tool_with_logging", nil)
	assert.False(t, res.IsError)
	assert.Empty(t, p.toolCall("test_tool_with_logging").during("notifications/message"), "info messages at level error")
	ping(t, p)
	assert.Equal(t, 3, p.wire.count("notifications/message"))
}

func testCancellation(t *testing.T, start starter) {
	opts, progress := progressClient(t)
	p := start(t, opts)

	callCtx, cancelCall := context.WithCancel(p.ctx)
	defer cancelCall()
	done := make(chan error, 1)
	go func() {
		_, err := p.cs.CallTool(callCtx, &mcp.CallToolParams{
			Name:      "test_slow",
			Arguments: map[string]any{"seconds": 30},
			Meta:      mcp.Meta{"progressToken": "cancel-me"},
		})
		done <- err
	}()

	first := recv(p, progress, "the first progress of test_slow")
	assert.Equal(t, "cancel-me", first.ProgressToken)
	assert.Equal(t, float64(1), first.Progress)
	assert.Equal(t, float64(300), first.Total)

	cancelledAt := time.Now()
	cancelCall()
	err := recv(p, done, "CallTool to return after its context was cancelled")
	assert.ErrorIs(t, err, context.Canceled)
	assert.Less(t, time.Since(cancelledAt), time.Second, "CallTool returned late")

	// The SDK tells the server.
	slow, ok := p.wire.lastCall("test_slow")
	require.True(t, ok)
	id, err := json.Marshal(slow.id.Raw())
	require.NoError(t, err)
	ctx, cancel := p.wait()
	defer cancel()
	cancelMsg, err := p.wire.waitFor(ctx, func(m wireMsg) bool {
		r := m.request("notifications/cancelled")
		if r == nil || !m.sent {
			return false
		}
		var params struct {
			RequestID jsontext.Value `json:"requestId"`
		}
		return json.Unmarshal(r.Params, &params) == nil && string(params.RequestID) == string(id)
	})
	require.NoError(t, err, "waiting for notifications/cancelled for request %s", id)

	// The session still serves calls.
	assert.Equal(t, "still serving", textOf(t, p.call("test_echo", map[string]any{"text": "still serving"})))
	// test_slow 0.5 runs at least 500 ms after the cancellation was sent:
	// long enough for the cancelled call to have stopped reporting.
	res := p.callTool(&mcp.CallToolParams{
		Name:      "test_slow",
		Arguments: map[string]any{"seconds": 0.5},
		Meta:      mcp.Meta{"progressToken": "after-cancel"},
	})
	assert.Equal(t, "done", textOf(t, res))
	notes := progressDuring(t, p, "test_slow")
	assert.Len(t, notes, 5, "progress during the second test_slow")
	for _, n := range notes {
		assert.Equal(t, `"after-cancel"`, string(n.ProgressToken), "progress during the second test_slow")
	}

	// No response for the cancelled request, and its progress stopped
	// within 0.5 s of the cancellation.
	stopBy := cancelMsg.at.Add(500 * time.Millisecond)
	for _, m := range p.wire.snapshot() {
		if m.sent {
			continue
		}
		assert.Nil(t, m.response(slow.id), "a response to the cancelled request: %s", m.raw)
		if r := m.request("notifications/progress"); r != nil {
			var n progressNote
			require.NoError(t, json.Unmarshal(r.Params, &n))
			if string(n.ProgressToken) == `"cancel-me"` {
				assert.False(t, m.at.After(stopBy), "progress of the cancelled call %v after the cancellation: %s", m.at.Sub(cancelMsg.at), m.raw)
			}
		}
	}
}

// ping makes a round trip: whatever the server sent before its answer has
// been read.
func ping(t *testing.T, p *peer) {
	t.Helper()
	ctx, cancel := p.wait()
	defer cancel()
	require.NoError(t, p.cs.Ping(ctx, nil))
}
