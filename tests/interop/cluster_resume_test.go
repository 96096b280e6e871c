package interop_test

import (
	"bytes"
	"context"
	json "encoding/json/v2"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/internal/sse"
)

// rawClient speaks Streamable HTTP by hand to the nodes of a cluster, a
// request to whichever node the test names, so that a test can hold a
// stream on one node, lose it and resume it on another.
type rawClient struct {
	t       *testing.T
	session string
}

const rawVersion = "2025-11-25"

// rawInitialize opens a session through node n.
func rawInitialize(t *testing.T, n *httpServer) *rawClient {
	t.Helper()
	c := &rawClient{t: t}
	resp := c.post(n, `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"`+rawVersion+
		`","capabilities":{"elicitation":{}},"clientInfo":{"name":"raw","version":"1"}}}`)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "initialize: %s", body)
	c.session = resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, c.session)
	c.accepted(n, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

// do sends an HTTP request for the session to node n, bounded in time.
func (c *rawClient) do(n *httpServer, method, body string, header http.Header) *http.Response {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.t.Context(), time.Minute)
	c.t.Cleanup(cancel)
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, n.url, r)
	require.NoError(c.t, err)
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("MCP-Protocol-Version", rawVersion)
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(c.t, err, "%s to %s", method, n.url)
	return resp
}

func (c *rawClient) post(n *httpServer, body string) *http.Response {
	c.t.Helper()
	return c.do(n, http.MethodPost, body, nil)
}

// accepted posts a notification or a response: 202.
func (c *rawClient) accepted(n *httpServer, body string) {
	c.t.Helper()
	resp := c.post(n, body)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(c.t, http.StatusAccepted, resp.StatusCode, "%s: %s", body, b)
}

// resume opens a GET stream on node n after event lastID.
func (c *rawClient) resume(n *httpServer, lastID string) *eventReader {
	c.t.Helper()
	resp := c.do(n, http.MethodGet, "", http.Header{"Last-Event-Id": {lastID}})
	require.Equal(c.t, http.StatusOK, resp.StatusCode)
	require.Equal(c.t, "text/event-stream", resp.Header.Get("Content-Type"))
	return newEventReader(c.t, resp)
}

// stream posts a request whose answer is an event stream.
func (c *rawClient) stream(n *httpServer, body string) *eventReader {
	c.t.Helper()
	resp := c.post(n, body)
	require.Equal(c.t, http.StatusOK, resp.StatusCode)
	require.Equal(c.t, "text/event-stream", resp.Header.Get("Content-Type"))
	return newEventReader(c.t, resp)
}

// eventReader reads an SSE body event by event.
type eventReader struct {
	t    *testing.T
	resp *http.Response
	r    *sse.Reader
}

func newEventReader(t *testing.T, resp *http.Response) *eventReader {
	t.Cleanup(func() { resp.Body.Close() })
	return &eventReader{t: t, resp: resp, r: sse.NewReader(resp.Body)}
}

// rawEvent is one SSE event with a JSON-RPC message.
type rawEvent struct {
	id  string
	msg map[string]any
}

// next returns the next event with data (priming events and comments are
// skipped), or the error that ended the stream.
func (e *eventReader) next() (rawEvent, error) {
	for {
		ev, err := e.r.Next()
		if err != nil {
			return rawEvent{}, err
		}
		if len(bytes.TrimSpace(ev.Data)) == 0 {
			continue
		}
		out := rawEvent{id: ev.ID}
		if err := json.Unmarshal(ev.Data, &out.msg); err != nil {
			return out, fmt.Errorf("event %q: %w", ev.ID, err)
		}
		return out, nil
	}
}

// must returns the next event, failing the test at the stream's end.
func (e *eventReader) must() rawEvent {
	e.t.Helper()
	ev, err := e.next()
	require.NoError(e.t, err, "the stream ended early")
	return ev
}

func (e *eventReader) close() { e.resp.Body.Close() }

// nodeOf returns the node of the cluster whose ID names session id.
func nodeOf(t *testing.T, nodes []*httpServer, id string) int {
	t.Helper()
	owner, _, ok := strings.Cut(id, ".")
	require.True(t, ok, "session ID %q names no node", id)
	for i := range nodes {
		if owner == fmt.Sprintf("n%d", i+1) { // startCluster's node IDs
			return i
		}
	}
	t.Fatalf("session %s: no node %s", id, owner)
	return -1
}

// TestClusterResumeAfterStreamHolderLoss kills the node holding a client's
// POST stream while the request waits for the client's answer to an
// elicitation. What the client sees: its stream breaks; it resumes it with
// Last-Event-ID on another node, posts its answer to a third, and gets the
// tool's result on the resumed stream. Nothing is lost: the owner, alive,
// kept the events.
func TestClusterResumeAfterStreamHolderLoss(t *testing.T) {
	nodes, c, owner, holder, other := resumeCluster(t)

	post := c.stream(nodes[holder], `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"test_elicitation","arguments":{"message":"who?"}}}`)
	ask := post.must()
	require.Equal(t, "elicitation/create", ask.msg["method"])
	require.NotEmpty(t, ask.id, "the elicitation request has no event ID")
	askID, _ := json.Marshal(ask.msg["id"])

	nodes[holder].kill()
	var err error
	for err == nil {
		_, err = post.r.Next()
	}
	require.NotErrorIs(t, err, io.EOF, "the stream of a killed node ends with an error, not at its end")

	got := c.resume(nodes[other], ask.id)
	c.accepted(nodes[owner], `{"jsonrpc":"2.0","id":`+string(askID)+`,"result":{"action":"accept","content":{"username":"alice","email":"a@example.com"}}}`)
	res := got.must()
	require.Equal(t, float64(7), res.msg["id"], "the tool's result on the resumed stream: %v", res.msg)
	assert.Contains(t, fmt.Sprint(res.msg["result"]), "alice")
	assert.NotEmpty(t, res.id)
}

// TestClusterResumeAfterOwnerLoss loses the node running a session's
// request while the client is away from its stream: the client resumes it
// with Last-Event-ID on another node, which takes the session over from
// the lost node and replays its event log from JetStream. What the client
// sees: every progress event after the one it saw, in order and without a
// gap, up to what the lost node logged, then a JSON-RPC error for the
// request (its handler died with the node); the session goes on.
func TestClusterResumeAfterOwnerLoss(t *testing.T) {
	nodes, c, owner, holder, other := resumeCluster(t)

	post := c.stream(nodes[holder], `{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"test_slow","arguments":{"seconds":60},"_meta":{"progressToken":"p"}}}`)
	var seen rawEvent
	for range 3 {
		seen = post.must()
		require.Equal(t, "notifications/progress", seen.msg["method"])
	}
	post.close() // the client goes away for a while
	last := seen.msg["params"].(map[string]any)["progress"].(float64)
	// A few more progress events are logged while it is away.
	require.Eventually(t, func() bool { return eventsLogged(t, nodes[owner]) >= 6 }, 30*time.Second, 20*time.Millisecond)

	nodes[owner].kill()
	got := c.resume(nodes[other], seen.id)
	var replayed []float64
	for {
		ev := got.must()
		if ev.msg["method"] == "notifications/progress" {
			replayed = append(replayed, ev.msg["params"].(map[string]any)["progress"].(float64))
			continue
		}
		require.Equal(t, "slow", ev.msg["id"], "the request's answer: %v", ev.msg)
		require.Contains(t, ev.msg, "error", "a request whose node was lost ends with an error")
		assert.Contains(t, fmt.Sprint(ev.msg["error"]), "lost before it answered")
		break
	}
	require.NotEmpty(t, replayed, "the progress logged after the event the client saw")
	for i, p := range replayed {
		assert.Equal(t, last+float64(i+1), p, "progress %d of the replay: %v", i, replayed)
	}

	// The session goes on on the node that took it over, through any node.
	for _, n := range []int{holder, other} {
		resp := c.post(nodes[n], `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"test_echo","arguments":{"text":"still here"}}}`)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
		assert.True(t, bytes.Contains(body, []byte("still here")), "%s", body)
	}
}

// eventsLogged reads mcp_cluster_events_logged_total from node n's metrics.
func eventsLogged(t *testing.T, n *httpServer) float64 {
	t.Helper()
	base, _, _ := strings.Cut(n.url, "/mcp")
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "mcp_cluster_events_logged_total "); ok {
			var f float64
			_, _ = fmt.Sscan(strings.TrimSpace(v), &f)
			return f
		}
	}
	return 0
}

// resumeCluster starts three nodes and opens a session on the first; it
// returns the nodes, the session, its owner's index and the two others'.
func resumeCluster(t *testing.T) (nodes []*httpServer, c *rawClient, owner, holder, other int) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	nodes = startCluster(t)
	c = rawInitialize(t, nodes[0])
	owner = nodeOf(t, nodes, c.session)
	return nodes, c, owner, (owner + 1) % 3, (owner + 2) % 3
}
