package transport_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/internal/sse"
	"github.com/mcp-actors/mcp-actors/messages"
)

// TestSSEResponseKeepsTheConnection checks that a client which stops
// reading a POST's event stream at the response it waited for, as Go's
// and other SDK clients do, can still reuse the connection. For that the
// end of the chunked body must reach it with that last event (the
// handler writes the response's event unflushed, and net/http sends it
// with the end of the body in one write).
func TestSSEResponseKeepsTheConnection(t *testing.T) {
	f := newHTTPFixture(t, nil)
	c := f.client(t)
	c.initialize(messages.LatestVersion, messages.ClientCapabilities{})

	for range 3 {
		body, _ := c.request(messages.MethodCallTool, toolParams("test_tool_with_logging", nil, nil))
		kept := make(chan error, 1)
		trace := &httptrace.ClientTrace{PutIdleConn: func(err error) { kept <- err }}
		ctx, cancel := context.WithTimeout(httptrace.WithClientTrace(context.Background(), trace), watchdog)
		resp, err := c.hc.Do(c.newRequest(ctx, http.MethodPost, body, nil))
		require.NoError(t, err)
		require.Equal(t, mtSSE, strings.TrimSpace(strings.Split(resp.Header.Get("Content-Type"), ";")[0]))

		rd := sse.NewReader(resp.Body)
		for {
			ev, err := rd.Next()
			require.NoError(t, err, "the stream ended before the response")
			if bytes.Contains(ev.Data, []byte(`"result"`)) {
				break
			}
		}
		require.NoError(t, resp.Body.Close()) // stop at the response, as SDK clients do
		select {
		case err := <-kept:
			require.NoError(t, err, "the connection went back to the pool")
		case <-time.After(watchdog):
			require.Fail(t, "the client closed the connection: the end of the body came after the response")
		}
		cancel()
	}
}
