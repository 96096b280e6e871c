package mcpactors_test

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	mcpactors "github.com/mcp-actors/mcp-actors"
)

// Parameters of TestTenThousandIdleGETStreams.
const (
	idleSessions   = 10000            // sessions, each with a GET stream
	idleWorkers    = 64               // sessions opened at once
	idleMaxStreams = 1000             // the server's HTTP/2 streams per connection
	idleOpenBound  = 5 * time.Minute  // for opening every session and stream
	idleStepBound  = 60 * time.Second // for one request's answer
	idleEndBound   = 2 * time.Minute  // for each shutdown, and for the streams to end after it
	idleFailures   = 10               // failures kept for the report
	idleInitBody   = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	idleNotifyBody = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
)

// TestTenThousandIdleGETStreams opens 10,000 sessions on one server, each
// an initialize POST, its notifications/initialized and a GET stream that
// stays open and idle, then shuts down: Server.Shutdown ends every session
// and with it every stream (each reader sees its body end, cleanly), the
// http.Server's Shutdown then returns, and no goroutine is left.
//
// The server is HTTPHandler in NewHTTPServer speaking h2c, as an embedder
// would mount it, with 1,000 streams per connection; the client is one
// net/http Transport speaking h2c, which opens another connection when
// those it has are full. The streams thus share about ten connections
// (the client dials more while they fill, and closes those it does not
// need), so the test needs no more file descriptors than any other.
//
// It takes about 5 s and 0.6 GB of memory (resident), and under -race
// 25 to 35 s and 3.5 GB, on two cores; the heap is about 26 KiB per
// session, client and server together, with three goroutines.
func TestTenThousandIdleGETStreams(t *testing.T) {
	if testing.Short() {
		t.Skipf("opens %d sessions, each with a GET stream", idleSessions)
	}
	leaks := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, leaks) }) // runs last, after every cleanup below

	srv := newServer(nil)
	t.Cleanup(func() { _ = srv.Close(context.Background()) })
	h, err := srv.HTTPHandler(nil)
	require.NoError(t, err)
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var conns atomic.Int64
	ln := countingListener{inner, &conns}
	hs := newH2CServer(h)
	var live atomic.Int64 // connections open now; the client closes those it dialed and does not need
	hs.ConnState = func(_ net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			live.Add(1)
		case http.StateClosed, http.StateHijacked:
			live.Add(-1)
		}
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	var serveErr error
	serving := true
	t.Cleanup(func() { // on failure: cut everything off
		if serving {
			_ = hs.Close()
			serveErr = <-served
		}
	})
	url := "http://" + ln.Addr().String() + "/mcp"

	tr := &http.Transport{ResponseHeaderTimeout: idleStepBound, DisableCompression: true}
	tr.Protocols = new(http.Protocols)
	tr.Protocols.SetUnencryptedHTTP2(true)
	t.Cleanup(tr.CloseIdleConnections)
	hc := &http.Client{Transport: tr}

	// The readers: one per open stream, reading it to its end.
	streamsCtx, cancelStreams := context.WithCancel(context.Background())
	var (
		readers      sync.WaitGroup
		ended, clean atomic.Int64
		endMu        sync.Mutex
		endErrs      []string // the first few streams that did not end cleanly
	)
	allEnded := make(chan struct{}) // closed when the last stream has ended
	t.Cleanup(func() {              // on failure: the streams end with their requests
		cancelStreams()
		readers.Wait()
	})
	read := func(i int, body io.ReadCloser) {
		readers.Go(func() {
			_, err := io.Copy(io.Discard, body)
			_ = body.Close()
			if err == nil {
				clean.Add(1)
			} else {
				endMu.Lock()
				if len(endErrs) < idleFailures {
					endErrs = append(endErrs, fmt.Sprintf("stream %d: %v", i, err))
				}
				endMu.Unlock()
			}
			if ended.Add(1) == idleSessions {
				close(allEnded)
			}
		})
	}

	// Open the sessions and their streams, idleWorkers at a time.
	var (
		next, opened atomic.Int64
		failed       atomic.Bool
		failMu       sync.Mutex
		failures     []string
	)
	fail := func(format string, args ...any) {
		failed.Store(true)
		failMu.Lock()
		defer failMu.Unlock()
		if len(failures) < idleFailures {
			failures = append(failures, fmt.Sprintf(format, args...))
		}
	}
	openDeadline := time.Now().Add(idleOpenBound)
	open := func(i int) {
		post := func(sid, body string) (*http.Response, []byte, error) {
			ctx, cancel := context.WithTimeout(context.Background(), idleStepBound)
			defer cancel()
			resp, err := hc.Do(mcpRequest(ctx, http.MethodPost, url, sid, body))
			if err != nil {
				return nil, nil, err
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			return resp, b, err
		}
		resp, b, err := post("", idleInitBody)
		if err != nil {
			fail("session %d: initialize: %v", i, err)
			return
		}
		sid := resp.Header.Get("Mcp-Session-Id")
		if resp.StatusCode != http.StatusOK || sid == "" {
			fail("session %d: initialize: %d (session %q) %q", i, resp.StatusCode, sid, b)
			return
		}
		if resp, b, err = post(sid, idleNotifyBody); err != nil || resp.StatusCode != http.StatusAccepted {
			fail("session %d: notifications/initialized: %v %q", i, statusOr(resp, err), b)
			return
		}
		get, err := hc.Do(mcpRequest(streamsCtx, http.MethodGet, url, sid, ""))
		if err != nil {
			fail("session %d: GET: %v", i, err)
			return
		}
		ct, _, _ := mime.ParseMediaType(get.Header.Get("Content-Type"))
		if get.StatusCode != http.StatusOK || ct != "text/event-stream" || get.ProtoMajor != 2 {
			b, _ := io.ReadAll(io.LimitReader(get.Body, 1<<10))
			_ = get.Body.Close()
			fail("session %d: GET: %d %q over %s: %q", i, get.StatusCode, ct, get.Proto, b)
			return
		}
		opened.Add(1)
		read(i, get.Body)
	}
	start := time.Now()
	var workers sync.WaitGroup
	for range idleWorkers {
		workers.Go(func() {
			for !failed.Load() && time.Now().Before(openDeadline) {
				i := int(next.Add(1))
				if i > idleSessions {
					return
				}
				open(i)
			}
		})
	}
	workers.Wait() // each request is bounded, and no worker starts one past openDeadline
	openTime := time.Since(start)
	failMu.Lock()
	require.Empty(t, failures, "opening the sessions")
	failMu.Unlock()
	require.EqualValues(t, idleSessions, opened.Load(), "streams opened within %v", idleOpenBound)
	assert.Equal(t, idleSessions, srv.LiveSessions(), "live sessions")
	assert.Zero(t, ended.Load(), "streams ended before the shutdown")

	runtime.GC()
	var mem runtime.MemStats
	runtime.ReadMemStats(&mem)
	t.Logf("opened %d sessions with a GET stream each in %v (%d workers, h2c, %d connections accepted, %d open, %d streams per connection at most); "+
		"then, client and server together: heap %.1f KiB per session, %.1f goroutines per session",
		idleSessions, openTime.Round(time.Millisecond), idleWorkers, conns.Load(), live.Load(), idleMaxStreams,
		float64(mem.HeapAlloc)/idleSessions/1024, float64(runtime.NumGoroutine())/idleSessions)

	// Server.Shutdown ends every session, and each session its stream.
	ctx, cancel := context.WithTimeout(context.Background(), idleEndBound)
	defer cancel()
	start = time.Now()
	require.NoError(t, srv.Shutdown(ctx), "Server.Shutdown")
	sessionsClosed := time.Since(start)
	select {
	case <-allEnded:
	case <-time.After(idleEndBound):
		require.FailNowf(t, "the streams did not all end", "%d of %d ended within %v of Server.Shutdown's return",
			ended.Load(), idleSessions, idleEndBound)
	}
	streamsEnded := time.Since(start)
	endMu.Lock()
	assert.Empty(t, endErrs, "streams that did not end cleanly")
	endMu.Unlock()
	assert.EqualValues(t, idleSessions, clean.Load(), "streams that ended cleanly")
	assert.Zero(t, srv.LiveSessions(), "live sessions after Server.Shutdown")

	// Then the http.Server's, with nothing left to wait for.
	ctx, cancel = context.WithTimeout(context.Background(), idleEndBound)
	defer cancel()
	require.NoError(t, hs.Shutdown(ctx), "http.Server.Shutdown")
	serving = false
	select {
	case serveErr = <-served:
	case <-time.After(idleEndBound):
		require.FailNow(t, "Serve did not return after Shutdown")
	}
	require.ErrorIs(t, serveErr, http.ErrServerClosed)
	t.Logf("Server.Shutdown returned in %v, the streams had all ended %v after it began, http.Server.Shutdown took %v more",
		sessionsClosed.Round(time.Millisecond), streamsEnded.Round(time.Millisecond), (time.Since(start) - streamsEnded).Round(time.Millisecond))
	readers.Wait() // every reader has counted its stream's end
	tr.CloseIdleConnections()
	// The cleanups only repeat what is done; goleak.VerifyNone then runs.
}

// newH2CServer returns NewHTTPServer's server for h speaking HTTP/1.1 and
// h2c, with idleMaxStreams streams per HTTP/2 connection.
func newH2CServer(h http.Handler) *http.Server {
	hs := mcpactors.NewHTTPServer(h, nil)
	hs.Protocols = new(http.Protocols)
	hs.Protocols.SetHTTP1(true)
	hs.Protocols.SetUnencryptedHTTP2(true)
	hs.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: idleMaxStreams}
	return hs
}

// mcpRequest is a request to the MCP endpoint at url, for session sid
// when set.
func mcpRequest(ctx context.Context, method, url, sid, body string) *http.Request {
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		panic(err) // the method and URL are the test's own
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	return req
}

// statusOr describes an answer: its status, or the error that came
// instead.
func statusOr(resp *http.Response, err error) string {
	if err != nil {
		return err.Error()
	}
	return resp.Status
}
