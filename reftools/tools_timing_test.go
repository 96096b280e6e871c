package reftools_test

import (
	"context"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/harness"
	"github.com/mcp-actors/mcp-actors/messages"
)

// callResult decodes a response's tools/call result.
func callResult(t *testing.T, r *harness.Received) *toolCall {
	t.Helper()
	require.Nil(t, r.Msg.Error)
	var res toolCall
	require.NoError(t, json.Unmarshal(r.Msg.Result, &res))
	return &res
}

func TestToolWithLogging(t *testing.T) {
	c := newHarness(t).Connect()
	require.NoError(t, c.CallResult(context.Background(), messages.MethodSetLevel, &messages.SetLevelParams{Level: messages.LevelDebug}, nil))

	id := messages.StringID("log-1")
	start := time.Now()
	require.NoError(t, c.SendRequest(id, messages.MethodCallTool, callParams("test_tool_with_logging", map[string]any{}, nil)))
	resp := responseTo(t, c, id)
	elapsed := time.Since(start)

	res := callResult(t, resp)
	assert.False(t, res.IsError)
	assert.Equal(t, "Tool with logging executed successfully", res.Content[0].Text)
	assert.GreaterOrEqual(t, elapsed, 100*time.Millisecond, "two ~50 ms pauses")

	logs := sentOn(c, id, messages.MethodLogMessage)
	require.Len(t, logs, 3, "on the call's own stream")
	for i, want := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
		var p messages.LoggingMessageParams
		require.NoError(t, json.Unmarshal(logs[i].Msg.Params, &p))
		assert.Equal(t, messages.LevelInfo, p.Level)
		assert.JSONEq(t, `"`+want+`"`, string(p.Data))
		assert.Less(t, logs[i].Seq, resp.Seq, "before the result")
	}
}

func TestToolWithLoggingFiltered(t *testing.T) {
	c := newHarness(t).Connect()
	require.NoError(t, c.CallResult(context.Background(), messages.MethodSetLevel, &messages.SetLevelParams{Level: messages.LevelWarning}, nil))
	id := messages.StringID("log-filtered")
	require.NoError(t, c.SendRequest(id, messages.MethodCallTool, callParams("test_tool_with_logging", nil, nil)))
	responseTo(t, c, id)
	assert.Empty(t, c.Notifications(messages.MethodLogMessage), "info is below warning")
}

func TestToolWithProgress(t *testing.T) {
	for _, token := range []string{`7`, `"progress-test-1"`} {
		t.Run(token, func(t *testing.T) {
			c := newHarness(t).Connect()
			id := messages.StringID("call-" + t.Name())
			require.NoError(t, c.SendRequest(id, messages.MethodCallTool,
				callParams("test_tool_with_progress", map[string]any{}, jsontext.Value(token))))
			resp := responseTo(t, c, id)
			res := callResult(t, resp)
			assert.False(t, res.IsError)
			assert.Equal(t, "Tool with progress executed successfully", res.Content[0].Text)

			progress := progressOn(t, c, id)
			require.Len(t, progress, 3)
			for i, want := range []float64{0, 50, 100} {
				p := progress[i]
				assert.Equal(t, token, p.ProgressToken.Raw(), "the token comes back unchanged")
				assert.Equal(t, want, p.Progress)
				require.NotNil(t, p.Total)
				assert.Equal(t, 100.0, *p.Total)
			}
			for _, r := range sentOn(c, id, messages.MethodProgress) {
				assert.Less(t, r.Seq, resp.Seq, "before the result")
			}
		})
	}
}

func TestToolWithProgressWithoutToken(t *testing.T) {
	c := newHarness(t).Connect()
	assert.Equal(t, "Tool with progress executed successfully", callText(t, c, "test_tool_with_progress", nil))
	assert.Empty(t, c.Notifications(messages.MethodProgress))
}

// progressOn decodes the progress notifications on request id's stream.
func progressOn(t *testing.T, c *harness.Client, id messages.ID) []*messages.ProgressParams {
	t.Helper()
	var out []*messages.ProgressParams
	for _, r := range sentOn(c, id, messages.MethodProgress) {
		var p messages.ProgressParams
		require.NoError(t, json.Unmarshal(r.Msg.Params, &p))
		out = append(out, &p)
	}
	return out
}

func TestSlow(t *testing.T) {
	tests := []struct {
		name    string
		args    map[string]any
		want    int // progress notifications
		atLeast time.Duration
	}{
		{"half a second", map[string]any{"seconds": 0.5}, 5, 500 * time.Millisecond},
		{"0.3 s keeps its third tick", map[string]any{"seconds": 0.3}, 3, 300 * time.Millisecond},
		{"zero", map[string]any{"seconds": 0}, 0, 0},
		{"steps back to back", map[string]any{"seconds": 0, "steps": 4}, 4, 0},
		{"steps spread", map[string]any{"seconds": 0.2, "steps": 2}, 2, 200 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newHarness(t).Connect()
			id := messages.StringID("call-" + t.Name())
			start := time.Now()
			require.NoError(t, c.SendRequest(id, messages.MethodCallTool, callParams("test_slow", tt.args, jsontext.Value(`"slow"`))))
			resp := responseTo(t, c, id)
			assert.GreaterOrEqual(t, time.Since(start), tt.atLeast)

			res := callResult(t, resp)
			require.False(t, res.IsError, "%+v", res.Content)
			assert.Equal(t, "done", res.Content[0].Text)

			progress := progressOn(t, c, id)
			require.Len(t, progress, tt.want)
			for i, p := range progress {
				assert.Equal(t, float64(i+1), p.Progress, "increasing by one")
				require.NotNil(t, p.Total)
				assert.Equal(t, float64(tt.want), *p.Total)
				assert.Equal(t, `"slow"`, p.ProgressToken.Raw())
			}
		})
	}
}

func TestSlowWithoutToken(t *testing.T) {
	c := newHarness(t).Connect()
	assert.Equal(t, "done", callText(t, c, "test_slow", map[string]any{"seconds": 0.2}))
	assert.Empty(t, c.Notifications(messages.MethodProgress))
}

func TestSlowRejectsBadArguments(t *testing.T) {
	c := newHarness(t).Connect()
	for _, args := range []map[string]any{
		{"seconds": -1},
		{"seconds": 3600.5},
		{"seconds": "1"},
		{"seconds": 0, "steps": -1},
		{"seconds": 0, "steps": 1.5},
	} {
		res := call(t, c, "test_slow", args)
		assert.True(t, res.IsError, "%v", args)
	}
}

func TestSlowCancelled(t *testing.T) {
	c := newHarness(t).Connect()
	id := messages.StringID("slow-cancelled")
	require.NoError(t, c.SendRequest(id, messages.MethodCallTool,
		callParams("test_slow", map[string]any{"seconds": 30}, jsontext.Value(`1`))))

	// Two ticks prove the call is running.
	var seen int
	for seen < 2 {
		r, err := c.WaitNotification(context.Background(), messages.MethodProgress, seen)
		require.NoError(t, err)
		seen = r.Seq + 1
	}
	c.Cancel(id, "test")
	atCancel := len(sentOn(c, id, messages.MethodProgress))

	// No response ever comes for a cancelled request, and progress stops
	// (one report may already be on its way).
	never := func() bool {
		for _, r := range c.Received() {
			if r.Msg != nil && r.Msg.Kind() != messages.KindNotification && r.Msg.Kind() != messages.KindRequest && r.Msg.ID == id {
				return true
			}
		}
		return len(sentOn(c, id, messages.MethodProgress)) > atCancel+1
	}
	require.Never(t, never, 600*time.Millisecond, 20*time.Millisecond)

	// The handler has returned: the request ID is free again.
	from := len(c.Received())
	require.NoError(t, c.SendRequest(id, messages.MethodCallTool, callParams("test_echo", map[string]any{"text": "again"}, nil)))
	r, err := c.WaitResponse(context.Background(), id, from)
	require.NoError(t, err)
	res := callResult(t, r)
	assert.Equal(t, "again", res.Content[0].Text)
}
