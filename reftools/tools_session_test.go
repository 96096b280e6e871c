package reftools_test

import (
	"context"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/harness"
	"github.com/mcp-actors/mcp-actors/messages"
)

func TestCounter(t *testing.T) {
	h := newHarness(t)
	a, b := h.Connect(), h.Connect()
	for i := 1; i <= 3; i++ {
		assert.Equal(t, strconv.Itoa(i), callText(t, a, "test_counter", nil), "session a, call %d", i)
	}
	assert.Equal(t, "1", callText(t, b, "test_counter", nil), "each session counts on its own")
	assert.Equal(t, "4", callText(t, a, "test_counter", map[string]any{}))
}

// TestCounterConcurrent: calls of one session that run at once each get
// their own value.
func TestCounterConcurrent(t *testing.T) {
	c := newHarness(t).Connect()
	const n = 16
	results := make(chan string, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			var res toolCall
			if err := c.CallResult(context.Background(), messages.MethodCallTool, callParams("test_counter", nil, nil), &res); err != nil {
				results <- err.Error()
				return
			}
			results <- res.Content[0].Text
		})
	}
	wg.Wait()
	close(results)
	var got, want []string
	for r := range results {
		got = append(got, r)
	}
	for i := 1; i <= n; i++ {
		want = append(want, strconv.Itoa(i))
	}
	assert.ElementsMatch(t, want, got)
	require.Equal(t, strconv.Itoa(n+1), callText(t, c, "test_counter", nil))
}

// TestCounterGet: test_counter_get reads what test_counter counted, each
// session its own, and changes nothing.
func TestCounterGet(t *testing.T) {
	h := newHarness(t)
	a, b := h.Connect(), h.Connect()
	for i, step := range []struct {
		c    *harness.Client
		tool string
		want string
	}{
		{a, "test_counter_get", "0"},
		{a, "test_counter_get", "0"},
		{a, "test_counter", "1"},
		{a, "test_counter_get", "1"},
		{a, "test_counter", "2"},
		{b, "test_counter_get", "0"},
		{a, "test_counter_get", "2"},
		{a, "test_counter_get", "2"},
		{a, "test_counter", "3"},
		{b, "test_counter", "1"},
		{b, "test_counter_get", "1"},
	} {
		assert.Equal(t, step.want, callText(t, step.c, step.tool, nil), "step %d: %s", i+1, step.tool)
	}
}
