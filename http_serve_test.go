package mcpactors_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// TestServeKeepsGETStreamConnections checks Serve over plain HTTP: the
// head of a GET stream does not say Connection: close, and once the
// session's DELETE has ended the stream, the client's next request goes
// on the stream's connection. Serve then shuts down with a stream open.
func TestServeKeepsGETStreamConnections(t *testing.T) {
	srv := newServer(nil)
	t.Cleanup(func() { _ = srv.Close(context.Background()) })
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var accepted atomic.Int64
	ln := countingListener{inner, &accepted}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln, nil, nil) }()
	url := "http://" + inner.Addr().String() + "/mcp"

	newClient := func() *http.Client {
		tr := &http.Transport{MaxConnsPerHost: 1, ResponseHeaderTimeout: 10 * time.Second}
		t.Cleanup(tr.CloseIdleConnections)
		return &http.Client{Transport: tr}
	}
	send := func(hc *http.Client, ctx context.Context, method, sid, body string) *http.Response {
		return sendMCP(t, hc, ctx, url, method, sid, body)
	}
	open := func(hc *http.Client) string {
		resp := send(hc, context.Background(), http.MethodPost, "",
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
		_, _ = io.Copy(io.Discard, resp.Body)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		sid := resp.Header.Get("Mcp-Session-Id")
		resp = send(hc, context.Background(), http.MethodPost, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		require.Equal(t, http.StatusAccepted, resp.StatusCode)
		return sid
	}

	posts, streams := newClient(), newClient()
	sid := open(posts)
	get := send(streams, context.Background(), http.MethodGet, sid, "")
	require.Equal(t, http.StatusOK, get.StatusCode)
	assert.False(t, get.Close, "the head keeps the connection alive")
	require.Equal(t, http.StatusNoContent, send(posts, context.Background(), http.MethodDelete, sid, "").StatusCode)
	_, err = io.Copy(io.Discard, get.Body)
	require.NoError(t, err, "the stream ends cleanly")

	before := accepted.Load()
	var reused bool
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused }}
	sid = open(streams) // initialize on the stream's connection
	resp := send(streams, httptrace.WithClientTrace(context.Background(), trace), http.MethodPost, sid, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	_, _ = io.Copy(io.Discard, resp.Body)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.True(t, reused, "the connection was reused")
	assert.Equal(t, before, accepted.Load(), "no new connection after the stream")

	get = send(streams, context.Background(), http.MethodGet, sid, "")
	require.Equal(t, http.StatusOK, get.StatusCode)
	start := time.Now()
	cancel()
	_, err = io.Copy(io.Discard, get.Body)
	require.NoError(t, err, "the shutdown ends the stream cleanly")
	select {
	case err := <-served:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		require.Fail(t, "Serve did not return")
	}
	t.Logf("Serve shut down in %v", time.Since(start))
}

// TestOwnServerShutdownEndsGETStreams checks HTTPHandler in an embedder's
// own http.Server, over HTTP/1.1: its Shutdown, called while GET streams
// are open and without Server.Shutdown before it, ends every stream
// cleanly and returns well within its context. No goroutine is left.
func TestOwnServerShutdownEndsGETStreams(t *testing.T) {
	leaks := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, leaks) }) // runs last
	srv := newServer(nil)
	t.Cleanup(func() { _ = srv.Close(context.Background()) })
	h, err := srv.HTTPHandler(nil)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	hs := &http.Server{Handler: h}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	url := "http://" + ln.Addr().String() + "/mcp"
	tr := &http.Transport{ResponseHeaderTimeout: 10 * time.Second}
	t.Cleanup(tr.CloseIdleConnections)
	hc := &http.Client{Transport: tr}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	send := func(method, sid, body string) *http.Response {
		return sendMCP(t, hc, ctx, url, method, sid, body)
	}

	var streams []*http.Response
	for range 3 {
		resp := send(http.MethodPost, "",
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
		_, _ = io.Copy(io.Discard, resp.Body)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		sid := resp.Header.Get("Mcp-Session-Id")
		require.Equal(t, http.StatusAccepted, send(http.MethodPost, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).StatusCode)
		get := send(http.MethodGet, sid, "")
		require.Equal(t, http.StatusOK, get.StatusCode)
		streams = append(streams, get)
	}

	shutdownCtx, cancelShutdown := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancelShutdown()
	start := time.Now()
	require.NoError(t, hs.Shutdown(shutdownCtx), "Shutdown waited for the GET streams")
	for i, get := range streams {
		_, err := io.Copy(io.Discard, get.Body)
		assert.NoError(t, err, "stream %d ends cleanly", i)
	}
	require.ErrorIs(t, <-served, http.ErrServerClosed)
	t.Logf("Shutdown returned in %v", time.Since(start))
}

// countingListener counts the connections it accepts.
type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// sendMCP sends one HTTP request to the MCP endpoint at url, for session
// sid when set; the response's body is closed at the end of t.
func sendMCP(t *testing.T, hc *http.Client, ctx context.Context, url, method, sid, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	resp, err := hc.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}
