package reftools_test

import (
	"context"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/harness"
	"github.com/mcp-actors/mcp-actors/messages"
)

func TestToggleTool(t *testing.T) {
	h := newHarness(t)
	caller, other := h.Connect(), h.Connect()
	ctx := context.Background()

	hasDynamic := func(c *harness.Client) bool {
		for _, tl := range listTools(t, c) {
			if tl.Name == "test_dynamic" {
				assert.NotEmpty(t, tl.Description)
				assert.Equal(t, noArgsSchema, string(tl.InputSchema))
				return true
			}
		}
		return false
	}
	require.False(t, hasDynamic(other))
	err := caller.CallResult(ctx, messages.MethodCallTool, callParams("test_dynamic", nil, nil), nil)
	require.ErrorIs(t, err, messages.ErrInvalidParams)

	for _, want := range []string{"added", "removed"} {
		from := len(other.Received())
		assert.Equal(t, want, callText(t, caller, "test_toggle_tool", nil))
		_, err := other.WaitNotification(ctx, messages.MethodToolsListChanged, from)
		require.NoError(t, err, "the other session hears of the change")
		assert.Equal(t, want == "added", hasDynamic(other))
		if want == "added" {
			assert.Equal(t, "dynamic", callText(t, other, "test_dynamic", nil))
		}
	}
	assert.Len(t, caller.Notifications(messages.MethodToolsListChanged), 2)
	assert.Len(t, other.Notifications(messages.MethodToolsListChanged), 2)
}

func TestToggleToolConcurrent(t *testing.T) {
	h := newHarness(t)
	const n = 8
	results := make(chan string, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			c := h.Connect()
			var res toolCall
			if err := c.CallResult(context.Background(), messages.MethodCallTool, callParams("test_toggle_tool", nil, nil), &res); err != nil {
				results <- err.Error()
				return
			}
			results <- res.Content[0].Text
		})
	}
	wg.Wait()
	close(results)
	count := map[string]int{}
	for r := range results {
		count[r]++
	}
	assert.Equal(t, map[string]int{"added": n / 2, "removed": n / 2}, count, "toggles alternate")
	assert.False(t, h.Server.HasTool("test_dynamic"))
}

func TestTouchWatched(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	subscribed, unsubscribed, bystander := h.Connect(), h.Connect(), h.Connect()
	watched := map[string]string{"uri": "test://watched-resource"}

	var empty jsontext.Value
	require.NoError(t, subscribed.CallResult(ctx, messages.MethodSubscribe, watched, &empty))
	assert.JSONEq(t, `{}`, string(empty))
	require.NoError(t, unsubscribed.CallResult(ctx, messages.MethodSubscribe, watched, nil))
	require.NoError(t, unsubscribed.CallResult(ctx, messages.MethodUnsubscribe, watched, &empty))
	assert.JSONEq(t, `{}`, string(empty))

	assert.Equal(t, "Watched resource content", readText(t, bystander, "test://watched-resource"))

	assert.Equal(t, "touched", callText(t, bystander, "test_touch_watched", nil))
	r, err := subscribed.WaitNotification(ctx, messages.MethodResourceUpdated, 0)
	require.NoError(t, err)
	var p messages.ResourceUpdatedParams
	require.NoError(t, json.Unmarshal(r.Msg.Params, &p))
	assert.Equal(t, "test://watched-resource", p.URI)

	// The update was posted to every session before the tool returned, so
	// anything after it in a session's mailbox (here: the tool's own result,
	// and a ping) arrives after the update would have.
	require.NoError(t, unsubscribed.CallResult(ctx, messages.MethodPing, nil, nil))
	assert.Empty(t, unsubscribed.Notifications(messages.MethodResourceUpdated))
	assert.Empty(t, bystander.Notifications(messages.MethodResourceUpdated))

	assert.Equal(t, "Watched resource content (update 1)", readText(t, bystander, "test://watched-resource"))
	assert.Equal(t, "touched", callText(t, bystander, "test_touch_watched", nil))
	_, err = subscribed.WaitNotification(ctx, messages.MethodResourceUpdated, r.Seq+1)
	require.NoError(t, err)
	assert.Len(t, subscribed.Notifications(messages.MethodResourceUpdated), 2)
	assert.Equal(t, "Watched resource content (update 2)", readText(t, subscribed, "test://watched-resource"))
}
