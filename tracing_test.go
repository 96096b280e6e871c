package mcpactors_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/messages"
)

// The client's trace: the parent every span of its request joins.
const (
	clientTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	clientSpan  = "00f067aa0ba902b7"
	traceparent = "00-" + clientTrace + "-" + clientSpan + "-01"
)

// spanIndex finds the spans of one trace by name.
type spanIndex map[string]tracetest.SpanStub

func indexSpans(spans tracetest.SpanStubs, traceID string) spanIndex {
	idx := spanIndex{}
	for _, s := range spans {
		if s.SpanContext.TraceID().String() == traceID {
			idx[s.Name] = s
		}
	}
	return idx
}

func nodeOf(s tracetest.SpanStub) string {
	for _, a := range s.Attributes {
		if a.Key == attribute.Key("mcp.node") {
			return a.Value.AsString()
		}
	}
	return ""
}

// requireChild checks that child's parent is parent.
func requireChild(t *testing.T, idx spanIndex, child, parent string) {
	t.Helper()
	c, ok := idx[child]
	require.True(t, ok, "no span %q (have %v)", child, names(idx))
	p, ok := idx[parent]
	require.True(t, ok, "no span %q (have %v)", parent, names(idx))
	assert.Equal(t, p.SpanContext.SpanID(), c.Parent.SpanID(), "%s is a child of %s", child, parent)
}

func names(idx spanIndex) []string {
	var out []string
	for n := range idx {
		out = append(out, n)
	}
	return out
}

// TestTracesAcrossNodes: three nodes share one in-memory exporter. A
// session owned by n1 gets, on n2, a tools/call whose traceparent header
// names the client's trace, and an elicitation whose answer goes to n3:
// every span joins that trace, with its node, and each has the parent the
// request's path gives it — n2's request span, its hop, n1's delivery, the
// handler, and the handler's server-to-client call.
func TestTracesAcrossNodes(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	c := startHTTPClusterWith(t, 3, "traces", sizeCatalog, nil, &mcpactors.Options{TracerProvider: tp})
	n1, n2, n3 := 0, 1, 2
	sid := openSession(t, c.urls[n1], `{"elicitation":{}}`)

	// A call on n2 with the client's traceparent header.
	ctx, cancel := context.WithTimeout(context.Background(), httpWait)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.urls[n2], bytes.NewReader(toolCall(1, "echo", `{"text":"traced"}`, "")))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", messages.Version20251125)
	req.Header.Set("traceparent", traceparent)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)

	var idx spanIndex
	require.Eventually(t, func() bool { // the hop's spans end on their nodes' goroutines
		idx = indexSpans(exp.GetSpans(), clientTrace)
		return len(idx) >= 4
	}, httpWait, 10*time.Millisecond, "spans of the client's trace")
	request := idx["mcp.request tools/call"]
	assert.Equal(t, clientSpan, request.Parent.SpanID().String(), "the request's span is the client's span's child")
	assert.Equal(t, trace.SpanKindServer, request.SpanKind)
	requireChild(t, idx, "mcp.route", "mcp.request tools/call")
	requireChild(t, idx, "mcp.deliver", "mcp.route")
	requireChild(t, idx, "mcp.handle tools/call", "mcp.deliver")
	for name, node := range map[string]string{"mcp.request tools/call": "n2", "mcp.route": "n2", "mcp.deliver": "n1", "mcp.handle tools/call": "n1"} {
		assert.Equal(t, node, nodeOf(idx[name]), "the node of %s", name)
	}

	// An elicitation on n2, its trace named in _meta, answered on n3.
	exp.Reset()
	call := startCall(t, c.urls[n2], sid, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"elicit","arguments":{},"_meta":{"traceparent":"`+traceparent+`"}}}`))
	require.Equal(t, http.StatusOK, <-call.status)
	ask := decoded(t, call.next())
	require.Equal(t, messages.MethodElicit, ask.Method)
	answer := `{"jsonrpc":"2.0","id":` + string(ask.ID.Raw()) + `,"result":{"action":"accept","content":{"text":"hello"}}}`
	ans := send(t, ctx, c.urls[n3], sid, []byte(answer))
	_, _ = io.Copy(io.Discard, ans.Body)
	require.Equal(t, http.StatusAccepted, ans.StatusCode)
	res := callResult(t, decoded(t, call.next()))
	require.False(t, res.IsError, "%s", firstText(t, res))
	require.Eventually(t, func() bool {
		idx = indexSpans(exp.GetSpans(), clientTrace)
		_, ok := idx["mcp.request tools/call"]
		return ok && len(idx) >= 5
	}, httpWait, 10*time.Millisecond, "spans of the elicitation's trace")
	requireChild(t, idx, "mcp.client_call elicitation/create", "mcp.handle tools/call")
	assert.Equal(t, trace.SpanKindClient, idx["mcp.client_call elicitation/create"].SpanKind)
	assert.Equal(t, "n1", nodeOf(idx["mcp.client_call elicitation/create"]), "the call's node: the owner's")
	requireChild(t, idx, "mcp.handle tools/call", "mcp.deliver")
}
