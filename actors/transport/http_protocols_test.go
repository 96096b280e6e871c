package transport_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/mcp-actors/mcp-actors/actors/transport"
	"github.com/mcp-actors/mcp-actors/messages"
)

// TestGETStreamOverEveryProtocol runs the same GET-stream script over
// HTTP/1.1, HTTP/2 over TLS and h2c, and checks that each gives the same
// transcript: a GET stream is one net/http handler, with no branch of its
// own for any protocol. The script: the stream opens with a priming
// event; an event reaches it; a quiet stream carries keep-alive comments;
// a client that hangs up is noticed (and the session takes a new GET);
// the new GET resumes from a Last-Event-ID, replaying what was sent while
// no stream was open, then goes on live; deleting the session ends the
// stream cleanly; the http.Server's own Shutdown ends an open stream
// cleanly and returns in time. No goroutine is left.
func TestGETStreamOverEveryProtocol(t *testing.T) {
	want := []string{
		"opened: 200 text/event-stream",
		"priming event",
		"event: " + messages.MethodToolsListChanged,
		"keep-alive comment",
		"client hung up: the server noticed",
		"resumed: " + messages.MethodToolsListChanged + " (sent while no stream was open)",
		"live: " + messages.MethodToolsListChanged,
		"session deleted: the stream ended cleanly",
		"http.Server.Shutdown: returned, the stream ended cleanly",
	}
	for _, tc := range []struct {
		proto string
		major int
	}{
		{protoHTTP1, 1},
		{protoH2, 2},
		{protoH2C, 2},
	} {
		t.Run(tc.proto, func(t *testing.T) {
			leaks := goleak.IgnoreCurrent()
			t.Cleanup(func() { goleak.VerifyNone(t, leaks) }) // runs last
			f := newHTTPFixture(t, &httpSetup{Protocol: tc.proto, HTTP: transport.HTTPOptions{KeepAlive: 20 * time.Millisecond}})
			assert.Equal(t, want, scriptGETStream(t, f, tc.major))
		})
	}
}

// scriptGETStream runs TestGETStreamOverEveryProtocol's script on f and
// returns what it saw. Each response must come over HTTP/major.
func scriptGETStream(t *testing.T, f *httpFixture, major int) []string {
	var seen []string
	see := func(s string) { seen = append(seen, s) }
	c := f.client(t)
	c.initialize(messages.LatestVersion, messages.ClientCapabilities{})

	get := c.get("")
	require.Equal(t, major, get.resp.ProtoMajor, "the protocol spoken")
	see(fmt.Sprintf("opened: %d %s", get.resp.StatusCode, get.resp.Header.Get("Content-Type")))
	if ev := get.nextEvent(); ev.isPriming() {
		see("priming event")
	}
	c.callTool("test_toggle_tool", nil)
	m, first := get.nextMessage()
	see("event: " + m.Method)
	for {
		ev, ok := get.next(watchdog)
		require.True(t, ok, "the stream ended: %v", get.err)
		if ev.comment && ev.Comment == "keepalive" {
			see("keep-alive comment")
			break
		}
	}

	done := f.obs.count(http.MethodGet)
	get.close()
	f.obs.waitCount(t, http.MethodGet, done+1)
	see("client hung up: the server noticed")
	c.callTool("test_toggle_tool", nil) // while no stream is open
	resumed := c.get(first.ID)
	m, ev := resumed.nextMessage()
	if ev.ID != first.ID {
		see("resumed: " + m.Method + " (sent while no stream was open)")
	}
	c.callTool("test_toggle_tool", nil)
	m, _ = resumed.nextMessage()
	see("live: " + m.Method)

	require.Equal(t, http.StatusNoContent, c.do(http.MethodDelete, nil, nil).status)
	if err := resumed.endedWithSession(); err == nil {
		see("session deleted: the stream ended cleanly")
	} else {
		see("session deleted: " + err.Error())
	}

	// A new session's stream is open when the server shuts down.
	c.sid = ""
	c.initialize(messages.LatestVersion, messages.ClientCapabilities{})
	open := c.get("")
	_ = open.nextEvent() // the stream is being served
	ctx, cancel := context.WithTimeout(context.Background(), watchdog)
	defer cancel()
	err := f.shutdown(ctx)
	switch serr := open.ended(); {
	case err != nil:
		see("http.Server.Shutdown: " + err.Error())
	case serr != nil:
		see("http.Server.Shutdown: returned, the stream ended with " + serr.Error())
	default:
		see("http.Server.Shutdown: returned, the stream ended cleanly")
	}
	return seen
}
