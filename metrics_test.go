package mcpactors_test

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/harness"
	"github.com/mcp-actors/mcp-actors/messages"
)

// TestMetricsThroughServer checks Options.Metrics end to end: a tool result
// with isError reaches the client as a result but counts as an error, a
// catalog tool has its own label and a name the server does not have is
// "other", the requests the session answers itself (initialize, ping) have
// a duration, and mcp_build_info carries the server's version.
func TestMetricsThroughServer(t *testing.T) {
	reg := prometheus.NewRegistry()
	srv := newServer(&mcpactors.Options{Metrics: reg})
	require.NoError(t, srv.AddTool(&messages.Tool{Name: "ok"}, okTool))
	require.NoError(t, srv.AddTool(&messages.Tool{Name: "fail"}, func(context.Context, *mcpactors.Session, *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
		return &messages.CallToolResult{IsError: true, Content: messages.ContentList{&messages.TextContent{Text: "no luck"}}}, nil
	}))
	c := harness.New(t, srv).Connect()

	res := callTool(t, c, map[string]any{"name": "fail"})
	assert.True(t, res.IsError, "sent as a result with isError")
	assert.Equal(t, "no luck", firstText(t, res))
	assert.Equal(t, "ok", firstText(t, callTool(t, c, map[string]any{"name": "ok"})))
	err := c.CallResult(t.Context(), messages.MethodCallTool, map[string]any{"name": "nope"}, nil)
	assert.EqualValues(t, messages.CodeInvalidParams, wireError(t, err).Code)

	// The session reports a request before it sends the answer: what the
	// client has is counted, with no barrier. (Connect pinged once.)
	expected := `
# HELP mcp_requests_total Client requests handled, by JSON-RPC method and outcome (ok; error: a JSON-RPC error or a tool result with isError; cancelled). Unknown methods are "other".
# TYPE mcp_requests_total counter
mcp_requests_total{method="initialize",outcome="cancelled"} 0
mcp_requests_total{method="initialize",outcome="error"} 0
mcp_requests_total{method="initialize",outcome="ok"} 1
mcp_requests_total{method="ping",outcome="cancelled"} 0
mcp_requests_total{method="ping",outcome="error"} 0
mcp_requests_total{method="ping",outcome="ok"} 1
mcp_requests_total{method="tools/call",outcome="cancelled"} 0
mcp_requests_total{method="tools/call",outcome="error"} 2
mcp_requests_total{method="tools/call",outcome="ok"} 1
# HELP mcp_tool_calls_total The tools/call requests of mcp_requests_total, by tool and outcome. Tools the server does not have, and tools past the first 200 seen, are "other".
# TYPE mcp_tool_calls_total counter
mcp_tool_calls_total{outcome="cancelled",tool="fail"} 0
mcp_tool_calls_total{outcome="cancelled",tool="ok"} 0
mcp_tool_calls_total{outcome="cancelled",tool="other"} 0
mcp_tool_calls_total{outcome="error",tool="fail"} 1
mcp_tool_calls_total{outcome="error",tool="ok"} 0
mcp_tool_calls_total{outcome="error",tool="other"} 1
mcp_tool_calls_total{outcome="ok",tool="fail"} 0
mcp_tool_calls_total{outcome="ok",tool="ok"} 1
mcp_tool_calls_total{outcome="ok",tool="other"} 0
# HELP mcp_build_info Always 1; labelled with the server's version and the Go version it was built with.
# TYPE mcp_build_info gauge
mcp_build_info{goversion="` + runtime.Version() + `",version="1.0.0"} 1
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(expected),
		"mcp_requests_total", "mcp_tool_calls_total", "mcp_build_info"))

	latency := histograms(t, reg, "mcp_request_duration_seconds", "method")
	for _, method := range []string{messages.MethodInitialize, messages.MethodPing} {
		require.Containsf(t, latency, method, "a histogram for %s", method)
		assert.EqualValuesf(t, 1, latency[method].count, "%s observed once", method)
		assert.Positivef(t, latency[method].sum, "%s has a duration", method)
	}
	tools := histograms(t, reg, "mcp_tool_call_duration_seconds", "tool")
	for _, tool := range []string{"ok", "fail", "other"} {
		assert.EqualValuesf(t, 1, tools[tool].count, "tool %s observed once", tool)
	}
}

// histogram is the sample count and sum of one histogram.
type histogram struct {
	count uint64
	sum   float64
}

// histograms returns the histograms of the family name in reg, by the value
// of label.
func histograms(t *testing.T, reg *prometheus.Registry, name, label string) map[string]histogram {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	out := map[string]histogram{}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label {
					h := m.GetHistogram()
					out[l.GetValue()] = histogram{h.GetSampleCount(), h.GetSampleSum()}
				}
			}
		}
	}
	return out
}
