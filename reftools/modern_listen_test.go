package reftools_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/internal/sse"
	"github.com/mcp-actors/mcp-actors/messages"
	"github.com/mcp-actors/mcp-actors/reftools"
)

// listenStream opens subscriptions/listen with filter on url and returns
// a function that reads the stream's next message (its data line).
func listenStream(t *testing.T, url string, id int, filter string) func() string {
	t.Helper()
	next, _ := listenStreamOf(t, url, id, filter)
	return next
}

// listenStreamOf is listenStream that also returns a function reporting
// whether a message is waiting, without waiting.
func listenStreamOf(t *testing.T, url string, id int, filter string) (func() string, func() bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	c := wireCall{method: messages.MethodSubscriptionsListen, params: `{"notifications":` + filter + `}`}
	resp := openPost(t, ctx, url, id, c)
	t.Cleanup(func() { resp.Body.Close() })
	require.Equal(t, 200, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		_ = sse.Each(resp.Body, func(ev sse.Event) {
			if ev.HasData {
				lines <- string(ev.Data)
			}
		})
	}()
	next := func() string {
		select {
		case l, ok := <-lines:
			if !ok {
				return ""
			}
			return l
		case <-time.After(10 * time.Second):
			t.Fatal("no message on the listen stream")
			return ""
		}
	}
	return next, func() bool { return len(lines) > 0 }
}

// TestModernListen: the acknowledgement first, with the filter honoured and
// the subscription's ID; then only the opted-in notifications, each tagged.
func TestModernListen(t *testing.T) {
	url := wireServer(t, false)
	next := listenStream(t, url, 41, `{"toolsListChanged":true,"resourceSubscriptions":["test://watched-resource"]}`)
	ack := next()
	assert.Contains(t, ack, `"method":"notifications/subscriptions/acknowledged"`)
	assert.Contains(t, ack, `"io.modelcontextprotocol/subscriptionId":41`)
	assert.Contains(t, ack, `"toolsListChanged":true`)
	assert.Contains(t, ack, `"resourceSubscriptions":["test://watched-resource"]`)
	// A second listen that wants nothing of this.
	other, otherWaiting := listenStreamOf(t, url, 42, `{"promptsListChanged":true}`)
	assert.Contains(t, other(), `"io.modelcontextprotocol/subscriptionId":42`)

	touch := send(t, url, 1, wireCall{method: "tools/call", name: "test_touch_watched", params: `{"name":"test_touch_watched"}`})
	require.Equal(t, 200, touch.status, touch.raw)
	updated := next()
	assert.Contains(t, updated, `"method":"notifications/resources/updated"`)
	assert.Contains(t, updated, `"uri":"test://watched-resource"`)
	assert.Contains(t, updated, `"io.modelcontextprotocol/subscriptionId":41`)

	toggle := send(t, url, 2, wireCall{method: "tools/call", name: "test_toggle_tool", params: `{"name":"test_toggle_tool"}`})
	require.Equal(t, 200, toggle.status, toggle.raw)
	changed := next()
	assert.Contains(t, changed, `"method":"notifications/tools/list_changed"`)
	assert.Contains(t, changed, `"io.modelcontextprotocol/subscriptionId":41`)
	// The tool list changed after the resource: a listen that opted in to
	// neither has been sent neither by the time the first has both.
	assert.False(t, otherWaiting(), "a listen got what it did not opt in to")
}

// TestModernListenDrain: a draining server ends each listen with its
// result, tagged with the subscription, and the stream ends.
func TestModernListenDrain(t *testing.T) {
	url, srv := wireServerOf(t, nil, nil, false)
	next := listenStream(t, url, 77, `{"toolsListChanged":true}`)
	assert.Contains(t, next(), `"method":"notifications/subscriptions/acknowledged"`)
	srv.Drain()
	end := next()
	assert.Contains(t, end, `"id":77`)
	assert.Contains(t, end, `"resultType":"complete"`)
	assert.Contains(t, end, `"io.modelcontextprotocol/subscriptionId":77`)
	assert.Empty(t, next(), "the stream ended")
	again := send(t, url, 78, wireCall{method: messages.MethodSubscriptionsListen, params: `{"notifications":{}}`})
	assert.NotZero(t, again.code(), "a draining node takes no new listen: %s", again.raw)
}

// TestModernListenKeepAlive: a quiet listen stream carries keep-alive
// comments.
func TestModernListenKeepAlive(t *testing.T) {
	srv := mcpactors.NewServer(messages.Implementation{Name: "keepalive", Version: "1"}, nil)
	require.NoError(t, reftools.Register(srv))
	h, err := srv.HTTPHandler(&mcpactors.HTTPOptions{KeepAlive: 10 * time.Millisecond})
	require.NoError(t, err)
	hs := httptest.NewServer(h)
	defer hs.Close()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Close(ctx)
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	c := wireCall{method: messages.MethodSubscriptionsListen, params: `{"notifications":{"toolsListChanged":true}}`}
	resp := openPost(t, ctx, hs.URL+"/mcp", 1, c)
	defer resp.Body.Close()
	rd := sse.NewReader(resp.Body)
	comments := 0
	var rerr error
	for comments < 2 && rerr == nil {
		var ev sse.Event
		ev, rerr = rd.Next()
		comments += len(ev.Comments)
	}
	assert.Equal(t, 2, comments, "keep-alive comments on a quiet listen (%v)", rerr)
}
