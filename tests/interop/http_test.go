package interop_test

import (
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/internal/sse"
)

// TestHTTPReferenceTools runs the reference cases over Streamable HTTP:
// `mcp-actors serve` per subtest, the SDK's StreamableClientTransport.
func TestHTTPReferenceTools(t *testing.T) {
	for _, tc := range referenceCases {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, startHTTP) })
	}
}

// TestHTTPResumption drops the response stream of a running tools/call
// right after its first progress event. The SDK must resume it with GET
// and Last-Event-ID, and get every later progress and the result exactly
// once.
func TestHTTPResumption(t *testing.T) {
	srv := startServer(t)
	var cutter *streamCutter
	opts, progress := progressClient(t)
	p, log := connectHTTP(t, srv, func(rt http.RoundTripper) http.RoundTripper {
		cutter = newStreamCutter(rt, isToolCall("test_slow"))
		return cutter
	}, opts)

	// 2 s: the progress reported while the client waits to reconnect (the
	// server's retry is 1 s) is replayed, the rest arrives live.
	const steps = 20
	res := p.callTool(&mcp.CallToolParams{
		Name:      "test_slow",
		Arguments: map[string]any{"seconds": 2},
		Meta:      mcp.Meta{"progressToken": "resume-me"},
	})
	assert.False(t, res.IsError)
	assert.Equal(t, "done", textOf(t, res))
	cut, cutAfter := cutter.result()
	require.True(t, cut, "the stream of test_slow was never cut")
	require.NotEmpty(t, cutAfter, "the first progress event has no id: the stream cannot be resumed")

	// Each progress exactly once, in order, before the result.
	notes := progressDuring(t, p, "test_slow")
	var got []float64
	for _, n := range notes {
		got = append(got, n.Progress)
		assert.Equal(t, `"resume-me"`, string(n.ProgressToken))
		assert.Equal(t, float64(steps), n.Total)
	}
	assert.Equal(t, wantProgress(steps), got, "progress on the wire")
	for i := 1; i <= steps; i++ {
		n := recv(p, progress, "progress of test_slow")
		assert.Equal(t, float64(i), n.Progress, "progress seen by the handler")
	}
	ping(t, p)
	assert.Equal(t, steps, p.wire.count("notifications/progress"))
	assert.Empty(t, progress, "progress seen twice by the handler")

	// On HTTP: the POST stream broke after progress 1, and one GET with
	// Last-Event-ID of that event carried progress 2… and the result.
	call, ok := p.wire.lastCall("test_slow")
	require.True(t, ok)
	post := exchangeOf(t, log, isToolCall("test_slow"))
	assert.ErrorIs(t, post.err, errStreamCut)
	assert.Equal(t, []float64{1}, progressIn(t, post), "progress on the POST stream")
	assert.False(t, answers(post, call.id), "the POST stream carried the result")

	resumed := resumptions(log, cutAfter)
	require.Len(t, resumed, 1, "GET requests with Last-Event-ID %q", cutAfter)
	get := resumed[0]
	assert.Equal(t, http.StatusOK, get.status)
	assert.Equal(t, "text/event-stream", get.contentType)
	assert.Equal(t, wantProgress(steps)[1:], progressIn(t, get), "progress on the resumed stream")
	assert.True(t, answers(get, call.id), "the resumed stream did not carry the result")

	// With --keepalive 1s, the standalone stream, open for the 2 s of the
	// call, had keep-alive comments, which the SDK read past.
	keptAlive := false
	for _, x := range log.snapshot() {
		if x.method == http.MethodGet && x.lastEventID == "" && strings.Contains(x.resp.String(), ": keepalive\n\n") {
			keptAlive = true
		}
	}
	assert.True(t, keptAlive, "no keep-alive comment on the standalone stream")
}

// TestHTTPReconnection calls test_reconnection: the server primes the POST
// stream, closes it before the result, and the SDK gets the result with a
// GET that resumes after the priming event.
func TestHTTPReconnection(t *testing.T) {
	srv := startServer(t)
	p, log := connectHTTP(t, srv, nil, nil)

	res := p.call("test_reconnection", nil)
	assert.False(t, res.IsError)
	assert.Equal(t, "Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure.", textOf(t, res))

	call, ok := p.wire.lastCall("test_reconnection")
	require.True(t, ok)
	post := exchangeOf(t, log, isToolCall("test_reconnection"))
	assert.Equal(t, http.StatusOK, post.status)
	assert.Equal(t, "text/event-stream", post.contentType)
	assert.ErrorIs(t, post.err, io.EOF, "the server must close the POST stream")
	events := sse.Parse(post.resp.Bytes())
	require.NotEmpty(t, events, "the POST stream has no event")
	priming := events[0]
	assert.NotEmpty(t, priming.ID, "the priming event's id")
	assert.NotEmpty(t, priming.Retry, "the priming event's retry")
	assert.True(t, priming.HasData && len(priming.Data) == 0, "the priming event's data must be empty: %+v", priming)
	assert.False(t, answers(post, call.id), "the POST stream carried the result")

	var last string
	for _, ev := range events {
		if ev.HasID {
			last = ev.ID
		}
	}
	resumed := resumptions(log, last)
	require.Len(t, resumed, 1, "GET requests with Last-Event-ID %q", last)
	assert.Equal(t, http.StatusOK, resumed[0].status)
	assert.True(t, answers(resumed[0], call.id), "the resumed stream did not carry the result")
}

// wantProgress is 1, 2, … n.
func wantProgress(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(i + 1)
	}
	return out
}

// exchangeOf returns the one POST whose body matches.
func exchangeOf(t *testing.T, log *httpLog, match func(body []byte) bool) exchange {
	t.Helper()
	var found []exchange
	for _, x := range log.snapshot() {
		if x.method == http.MethodPost && match(x.body) {
			found = append(found, x)
		}
	}
	require.Len(t, found, 1, "matching POST requests")
	return found[0]
}

// resumptions returns the GET requests that resumed after event id.
func resumptions(log *httpLog, id string) []exchange {
	var out []exchange
	for _, x := range log.snapshot() {
		if x.method == http.MethodGet && x.lastEventID == id {
			out = append(out, x)
		}
	}
	return out
}

// progressIn returns the progress values in x's response stream.
func progressIn(t *testing.T, x exchange) []float64 {
	t.Helper()
	var out []float64
	for _, ev := range sse.Parse(x.resp.Bytes()) {
		if !isProgress(string(ev.Data)) {
			continue
		}
		var n struct {
			Params progressNote `json:"params"`
		}
		require.NoError(t, json.Unmarshal(ev.Data, &n), "progress event %q", ev.Data)
		out = append(out, n.Params.Progress)
	}
	return out
}

// answers reports whether x's response stream carries the response to
// the request id.
func answers(x exchange, id jsonrpc.ID) bool {
	want, err := json.Marshal(id.Raw())
	if err != nil {
		return false
	}
	for _, ev := range sse.Parse(x.resp.Bytes()) {
		var m struct {
			ID     jsontext.Value `json:"id"`
			Method string         `json:"method"`
			Result jsontext.Value `json:"result"`
			Error  jsontext.Value `json:"error"`
		}
		if json.Unmarshal(ev.Data, &m) != nil || m.Method != "" {
			continue
		}
		if string(m.ID) == string(want) && (m.Result != nil || m.Error != nil) {
			return true
		}
	}
	return false
}
