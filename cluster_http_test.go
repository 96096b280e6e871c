package mcpactors_test

import (
	"bytes"
	"context"
	json "encoding/json/v2"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/cluster"
	"github.com/mcp-actors/mcp-actors/internal/access"
	"github.com/mcp-actors/mcp-actors/internal/sse"
	"github.com/mcp-actors/mcp-actors/messages"
	"github.com/mcp-actors/mcp-actors/metrics"
)

// httpWait bounds each wait of the cluster tests for an answer over HTTP
// (real I/O): running out of it is a hang, and fails the test.
const httpWait = 30 * time.Second

// httpCluster is an in-process cluster for a test: nodes started with
// cluster.StartLocal (real embedded NATS servers routed on loopback
// ports), a server on each with the same catalog, and each server's HTTP
// handler on a loopback listener. Everything stops when the test ends.
type httpCluster struct {
	t        *testing.T
	dir      string
	base     cluster.Options
	catalog  func(*mcpactors.Server)
	httpOpts *mcpactors.HTTPOptions
	srvOpts  *mcpactors.Options // each node's server's (nil: the defaults)
	routes   []string

	nodes   []*cluster.Node
	servers []*mcpactors.Server
	https   []*httptest.Server
	urls    []string // each node's MCP endpoint
}

// startHTTPCluster starts n nodes named "n1" … "nN"; catalog registers the
// tools on each node's server, and httpOpts (nil for the defaults)
// configures each HTTP handler.
func startHTTPCluster(t *testing.T, n int, name string, catalog func(*mcpactors.Server), httpOpts *mcpactors.HTTPOptions) *httpCluster {
	t.Helper()
	return startHTTPClusterWith(t, n, name, catalog, httpOpts, nil)
}

// startHTTPClusterWith is startHTTPCluster with srvOpts for each node's
// server.
func startHTTPClusterWith(t *testing.T, n int, name string, catalog func(*mcpactors.Server), httpOpts *mcpactors.HTTPOptions, srvOpts *mcpactors.Options) *httpCluster {
	t.Helper()
	return startHTTPClusterOn(t, n, cluster.Options{ClusterName: name}, catalog, httpOpts, srvOpts)
}

// startHTTPClusterOn is startHTTPClusterWith with the nodes' options base
// (its logger and secret are the tests').
func startHTTPClusterOn(t *testing.T, n int, base cluster.Options, catalog func(*mcpactors.Server), httpOpts *mcpactors.HTTPOptions, srvOpts *mcpactors.Options) *httpCluster {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	base.Logger, base.Secret = quietLogger(), "http-cluster-secret"
	c := &httpCluster{t: t, dir: t.TempDir(), catalog: catalog, httpOpts: httpOpts, srvOpts: srvOpts, base: base}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	nodes, err := cluster.StartLocal(ctx, n, c.dir, c.base)
	require.NoError(t, err)
	c.nodes = nodes
	c.servers = make([]*mcpactors.Server, n)
	c.https = make([]*httptest.Server, n)
	c.urls = make([]string, n)
	t.Cleanup(c.stop)
	for i, nd := range nodes {
		c.routes = append(c.routes, nd.RouteURL())
		c.serve(i)
	}
	return c
}

// quietLogger logs warnings and worse, as a test's log would drown in the
// nodes' info lines.
func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// serve starts a server on node i and its HTTP handler.
func (c *httpCluster) serve(i int) {
	c.t.Helper()
	srv := newServer(c.srvOpts)
	c.catalog(srv)
	require.NoError(c.t, srv.JoinCluster(c.nodes[i]))
	h, err := srv.HTTPHandler(c.httpOpts)
	require.NoError(c.t, err)
	c.servers[i], c.https[i] = srv, httptest.NewServer(h) // on 127.0.0.1
	c.urls[i] = c.https[i].URL + "/mcp"
}

// crash stops node i as a crash would: its NATS server and connection go
// first, so nothing it holds tells the sessions of other nodes anything
// (its transports' last messages find no route); then its HTTP server
// and its server.
func (c *httpCluster) crash(i int) {
	c.t.Helper()
	c.nodes[i].Kill()
	c.https[i].CloseClientConnections()
	c.https[i].Close()
	ctx, cancel := context.WithTimeout(context.Background(), httpWait)
	defer cancel()
	require.NoError(c.t, c.servers[i].Close(ctx))
}

// restart starts node i again after crash, under the same ID, route
// address and store, with a new server and HTTP handler.
func (c *httpCluster) restart(i int) {
	c.t.Helper()
	o := c.base
	o.NodeID = fmt.Sprintf("n%d", i+1)
	o.DataDir = filepath.Join(c.dir, o.NodeID)
	o.ClusterListen = strings.TrimPrefix(c.routes[i], "nats-route://")
	o.Routes = c.routes
	o.Replicas = min(3, len(c.nodes))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	nd, err := cluster.Start(ctx, o)
	require.NoError(c.t, err)
	c.nodes[i] = nd
	require.NoError(c.t, nd.WaitReady(ctx))
	c.serve(i)
}

// stop closes the HTTP servers and the servers, then the nodes.
func (c *httpCluster) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), httpWait)
	defer cancel()
	for i, srv := range c.servers {
		if c.https[i] != nil {
			c.https[i].CloseClientConnections()
			c.https[i].Close()
		}
		if srv != nil {
			if err := srv.Close(ctx); err != nil {
				c.t.Errorf("closing the server of n%d: %v", i+1, err)
			}
		}
	}
	for _, nd := range c.nodes {
		nd.Close()
	}
}

// stats returns node i's routing counters.
func (c *httpCluster) stats(i int) metrics.ClusterStats {
	c.t.Helper()
	rt, ok := access.Router(c.servers[i]).(interface{ Stats() metrics.ClusterStats })
	require.True(c.t, ok, "the router of a cluster node is a %T", access.Router(c.servers[i]))
	return rt.Stats()
}

// send POSTs body (a JSON-RPC message) to url for session sid ("" for
// none) and returns the response, whose body the test's end closes.
func send(t *testing.T, ctx context.Context, url, sid string, body []byte) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", messages.Version20251125)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

// openSession initializes a session through url, declaring the client
// capabilities caps (a JSON object), and returns its ID.
func openSession(t *testing.T, url, caps string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), httpWait)
	defer cancel()
	resp := send(t, ctx, url, "", []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":`+
		caps+`,"clientInfo":{"name":"cluster-test","version":"1"}}}`))
	_, _ = io.Copy(io.Discard, resp.Body)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	sid := resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, sid)
	resp = send(t, ctx, url, sid, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
	return sid
}

// sseEvent is one event of an SSE response.
type sseEvent struct {
	id   string
	data string
}

// call is a POST whose response the test reads event by event: the JSON
// body of a plain answer is one event without an ID.
type call struct {
	t      *testing.T
	events chan sseEvent // closed when the response ends
	status chan int      // the response's status, once its head is in
	cancel context.CancelFunc
	done   chan struct{} // closed once the reading goroutine is done
}

// startCall POSTs body to url for session sid and reads the response on a
// goroutine of its own: the head of an SSE response comes with its first
// event, which may wait for the test. The test's end stops it.
func startCall(t *testing.T, url, sid string, body []byte) *call {
	ctx, cancel := context.WithCancel(context.Background())
	c := &call{t: t, events: make(chan sseEvent, 1024), status: make(chan int, 1), cancel: cancel, done: make(chan struct{})}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", messages.Version20251125)
	go func() {
		defer close(c.done)
		defer close(c.events)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			c.status <- 0
			return
		}
		defer resp.Body.Close()
		c.status <- resp.StatusCode
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			b, _ := io.ReadAll(resp.Body)
			c.events <- sseEvent{data: string(b)}
			return
		}
		readSSE(resp.Body, c.events)
	}()
	t.Cleanup(c.stop)
	return c
}

// stop ends the call and waits for its goroutine.
func (c *call) stop() {
	c.cancel()
	<-c.done
}

// next returns the call's next event with data (priming events carry
// none), failing the test if the response ends or nothing comes in time.
func (c *call) next() sseEvent {
	c.t.Helper()
	t := time.NewTimer(httpWait)
	defer t.Stop()
	for {
		select {
		case ev, ok := <-c.events:
			require.True(c.t, ok, "the response ended")
			if ev.data != "" {
				return ev
			}
		case <-t.C:
			require.FailNow(c.t, "no event in time")
		}
	}
}

// rest returns the call's events with data until its response ends.
func (c *call) rest() []sseEvent {
	c.t.Helper()
	var evs []sseEvent
	t := time.NewTimer(httpWait)
	defer t.Stop()
	for {
		select {
		case ev, ok := <-c.events:
			if !ok {
				return evs
			}
			if ev.data != "" {
				evs = append(evs, ev)
			}
		case <-t.C:
			require.FailNow(c.t, "the response did not end in time")
		}
	}
}

// readSSE reads the events of an SSE body into out until it ends.
func readSSE(body io.Reader, out chan<- sseEvent) {
	_ = sse.Each(body, func(ev sse.Event) {
		if ev.HasID || ev.HasData {
			out <- sseEvent{id: ev.ID, data: string(ev.Data)}
		}
	})
}

// toolCall is the body of a tools/call of tool name with args (a JSON
// object) and, when token is not empty, a progress token.
func toolCall(id int, name, args, token string) []byte {
	meta := ""
	if token != "" {
		meta = `,"_meta":{"progressToken":"` + token + `"}`
	}
	return []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s%s}}`, id, name, args, meta))
}

// decoded is the JSON-RPC message an event carries.
func decoded(t *testing.T, ev sseEvent) *messages.Message {
	t.Helper()
	m, derr := messages.Decode([]byte(ev.data))
	require.Nil(t, derr, "%.200s", ev.data)
	return m
}

// progressMessage returns the message of a progress notification.
func progressMessage(t *testing.T, ev sseEvent) string {
	t.Helper()
	m := decoded(t, ev)
	require.Equal(t, messages.MethodProgress, m.Method, "%.200s", ev.data)
	var p messages.ProgressParams
	require.NoError(t, json.Unmarshal(m.Params, &p))
	return p.Message
}
