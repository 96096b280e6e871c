package session_test

import (
	"context"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/actors/session"
	"github.com/mcp-actors/mcp-actors/harness"
	"github.com/mcp-actors/mcp-actors/messages"
)

func TestLogLevel(t *testing.T) {
	ctx := context.Background()
	srv := newServer(t, func(ctx context.Context, s *mcpactors.Session, req *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
		for _, l := range []messages.LoggingLevel{messages.LevelDebug, messages.LevelInfo, messages.LevelWarning, messages.LevelError} {
			if err := s.Log(ctx, l, "test", map[string]string{"level": string(l)}); err != nil {
				return nil, err
			}
		}
		return text("logged"), nil
	})

	h := harness.New(t, srv)
	t.Run("everything is sent before setLevel", func(t *testing.T) {
		c := h.Connect()
		require.Equal(t, "logged", callRun(t, c, nil))
		assert.Len(t, c.Notifications(messages.MethodLogMessage), 4)
	})

	t.Run("messages below the level are dropped", func(t *testing.T) {
		c := h.Connect()
		var res jsontext.Value
		require.NoError(t, c.CallResult(ctx, messages.MethodSetLevel, &messages.SetLevelParams{Level: messages.LevelWarning}, &res))
		assert.Equal(t, `{}`, string(res))
		require.Equal(t, "logged", callRun(t, c, nil))
		logs := c.Notifications(messages.MethodLogMessage)
		require.Len(t, logs, 2)
		var p messages.LoggingMessageParams
		require.NoError(t, json.Unmarshal(logs[0].Params, &p))
		assert.Equal(t, messages.LevelWarning, p.Level)
		assert.Equal(t, "test", p.Logger)
		assert.JSONEq(t, `{"level":"warning"}`, string(p.Data))
	})

	t.Run("an unknown level gets -32602", func(t *testing.T) {
		c := h.Connect()
		err := c.CallResult(ctx, messages.MethodSetLevel, map[string]string{"level": "loud"}, nil)
		require.ErrorIs(t, err, messages.ErrInvalidParams)
	})

	t.Run("logs travel on the request's own stream", func(t *testing.T) {
		c := h.Connect()
		callRun(t, c, nil)
		for _, r := range c.Received() {
			if r.Msg.Method == messages.MethodLogMessage {
				assert.NotEmpty(t, r.Stream, "a log of a request must not go to the standalone stream")
			}
		}
	})
}

func TestProgress(t *testing.T) {
	var errs = make(chan error, 1)
	srv := newServer(t, func(ctx context.Context, s *mcpactors.Session, req *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
		for i := 1; i <= 3; i++ {
			if err := s.Progress(ctx, float64(i), 3, "step"); err != nil {
				return nil, err
			}
		}
		errs <- s.Progress(ctx, 2, 3, "backwards")
		return text("done"), nil
	})

	h := harness.New(t, srv)
	for _, token := range []any{7, "tok-1"} {
		t.Run("token "+string(mustJSON(t, token)), func(t *testing.T) {
			c := h.Connect()
			callRun(t, c, nil) // without a token: no-op
			assert.Empty(t, c.Notifications(messages.MethodProgress))
			require.NoError(t, <-errs)

			var res messages.CallToolResult
			require.NoError(t, c.CallResult(context.Background(), messages.MethodCallTool, map[string]any{
				"name": "run", "_meta": map[string]any{"progressToken": token},
			}, &res))
			notes := c.Notifications(messages.MethodProgress)
			require.Len(t, notes, 3)
			for i, n := range notes {
				var p struct {
					Token    jsontext.Value `json:"progressToken"`
					Progress float64        `json:"progress"`
					Total    float64        `json:"total"`
				}
				require.NoError(t, json.Unmarshal(n.Params, &p))
				assert.JSONEq(t, string(mustJSON(t, token)), string(p.Token), "the token is echoed unchanged")
				assert.Equal(t, float64(i+1), p.Progress)
				assert.Equal(t, float64(3), p.Total)
			}
			require.ErrorIs(t, <-errs, session.ErrProgressNotIncreasing)
		})
	}
}

func TestResourceSubscriptions(t *testing.T) {
	ctx := context.Background()
	h := harness.New(t, nil)
	sub := h.Connect()
	other := h.Connect()

	var res jsontext.Value
	require.NoError(t, sub.CallResult(ctx, messages.MethodSubscribe, &messages.SubscribeParams{URI: "test://a"}, &res))
	assert.Equal(t, `{}`, string(res))
	err := sub.CallResult(ctx, messages.MethodSubscribe, map[string]string{}, nil)
	require.ErrorIs(t, err, messages.ErrInvalidParams)

	h.Server.NotifyResourceUpdated("test://a")
	h.Server.NotifyResourceUpdated("test://b")
	r, err := sub.WaitNotification(ctx, messages.MethodResourceUpdated, 0)
	require.NoError(t, err)
	assert.JSONEq(t, `{"uri":"test://a"}`, string(r.Msg.Params))
	assert.Empty(t, r.Stream, "unsolicited traffic goes to the standalone stream")

	// A ping round trip on the other session orders it after the broadcast.
	_, err = other.Call(ctx, messages.MethodPing, nil)
	require.NoError(t, err)
	assert.Empty(t, other.Notifications(messages.MethodResourceUpdated))

	require.NoError(t, sub.CallResult(ctx, messages.MethodUnsubscribe, &messages.UnsubscribeParams{URI: "test://a"}, &res))
	assert.Equal(t, `{}`, string(res))
	h.Server.NotifyResourceUpdated("test://a")
	_, err = sub.Call(ctx, messages.MethodPing, nil)
	require.NoError(t, err)
	assert.Len(t, sub.Notifications(messages.MethodResourceUpdated), 1)
}

func TestListChangedReachesOpenSessions(t *testing.T) {
	ctx := context.Background()
	h := harness.New(t, nil)
	a, b := h.Connect(), h.Connect()
	pending := h.Open() // not initialized: gets nothing

	require.NoError(t, h.Server.AddTool(&messages.Tool{Name: "late", Description: "added at runtime"},
		func(context.Context, *mcpactors.Session, *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			return text("late"), nil
		}))
	for _, c := range []*harness.Client{a, b} {
		_, err := c.WaitNotification(ctx, messages.MethodToolsListChanged, 0)
		require.NoError(t, err)
		var list messages.ListToolsResult
		require.NoError(t, c.CallResult(ctx, messages.MethodListTools, nil, &list))
		require.Len(t, list.Tools, 1)
		assert.Equal(t, "late", list.Tools[0].Name)
	}
	_, err := pending.Call(ctx, messages.MethodPing, nil)
	require.NoError(t, err)
	assert.Empty(t, pending.Notifications(""))

	h.Server.RemoveTools("late")
	h.Server.RemoveTools("late") // nothing left to remove: no second notification
	_, err = a.WaitNotification(ctx, messages.MethodToolsListChanged, 1)
	require.NoError(t, err)
	_, err = a.Call(ctx, messages.MethodPing, nil)
	require.NoError(t, err)
	assert.Len(t, a.Notifications(messages.MethodToolsListChanged), 2)
}
