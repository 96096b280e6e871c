package metrics_test

import (
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/actors/session"
	"github.com/mcp-actors/mcp-actors/messages"
	"github.com/mcp-actors/mcp-actors/metrics"
)

type sessions struct{ open, live int }

func (s sessions) OpenSessions() int { return s.open }
func (s sessions) LiveSessions() int { return s.live }

// report is a session.RequestReport in one line.
func report(method, tool string, o session.Outcome, d time.Duration) session.RequestReport {
	return session.RequestReport{Method: method, Tool: tool, Outcome: o, Duration: d}
}

// known is a KnownTool over a fixed set of names.
func known(names ...string) func(string) bool {
	return func(name string) bool {
		for _, n := range names {
			if n == name {
				return true
			}
		}
		return false
	}
}

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, &metrics.Options{Sessions: sessions{open: 2, live: 3}})
	m.RequestHandled(report("tools/call", "", session.OutcomeOK, 2*time.Millisecond))
	m.RequestHandled(report("tools/call", "", session.OutcomeError, time.Millisecond))
	m.RequestHandled(report("tools/call", "", session.OutcomeCancelled, time.Second))
	m.RequestHandled(report("made/up", "", session.OutcomeOK, time.Millisecond))
	m.PendingCalls(3)
	m.PendingCalls(-1)
	m.EventsReplayed(4)
	m.HTTPRequest("POST", 200, time.Millisecond)
	m.StreamEvent(false)

	expected := `
# HELP mcp_requests_total Client requests handled, by JSON-RPC method and outcome (ok; error: a JSON-RPC error or a tool result with isError; cancelled). Unknown methods are "other".
# TYPE mcp_requests_total counter
mcp_requests_total{method="other",outcome="cancelled"} 0
mcp_requests_total{method="other",outcome="error"} 0
mcp_requests_total{method="other",outcome="ok"} 1
mcp_requests_total{method="tools/call",outcome="cancelled"} 1
mcp_requests_total{method="tools/call",outcome="error"} 1
mcp_requests_total{method="tools/call",outcome="ok"} 1
# HELP mcp_pending_outbound_calls Server-to-client requests (sampling, elicitation, roots) waiting for the client.
# TYPE mcp_pending_outbound_calls gauge
mcp_pending_outbound_calls 2
# HELP mcp_stream_events_replayed_total SSE events resent to clients that resumed with Last-Event-ID.
# TYPE mcp_stream_events_replayed_total counter
mcp_stream_events_replayed_total 4
# HELP mcp_sessions_open Sessions that completed initialization and have not closed.
# TYPE mcp_sessions_open gauge
mcp_sessions_open 2
# HELP mcp_sessions_live Sessions not yet closed, initialized or not.
# TYPE mcp_sessions_live gauge
mcp_sessions_live 3
`
	names := []string{"mcp_requests_total", "mcp_pending_outbound_calls", "mcp_stream_events_replayed_total", "mcp_sessions_open", "mcp_sessions_live"}
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(expected), names...))

	// Only ok and error answers count towards latency: a cancelled request
	// has none. Unknown methods are "other", so clients cannot grow the
	// label set.
	n, err := testutil.GatherAndCount(reg, "mcp_request_duration_seconds")
	require.NoError(t, err)
	assert.Equal(t, 2, n, "two label sets: tools/call and other")
}

// TestNilOptions checks that New takes nil: no session gauges, and every
// tool is "other".
func TestNilOptions(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, nil)
	m.RequestHandled(report(messages.MethodCallTool, "search", session.OutcomeOK, time.Millisecond))

	n, err := testutil.GatherAndCount(reg, "mcp_sessions_open", "mcp_sessions_live")
	require.NoError(t, err)
	assert.Zero(t, n)
	expected := `
# HELP mcp_tool_calls_total The tools/call requests of mcp_requests_total, by tool and outcome. Tools the server does not have, and tools past the first 200 seen, are "other".
# TYPE mcp_tool_calls_total counter
mcp_tool_calls_total{outcome="cancelled",tool="other"} 0
mcp_tool_calls_total{outcome="error",tool="other"} 0
mcp_tool_calls_total{outcome="ok",tool="other"} 1
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(expected), "mcp_tool_calls_total"))
}

// TestToolLabels checks the per-tool metrics: a known tool has its own
// label, a name the server does not have (or none) is "other", a tool
// result with isError (reported as OutcomeError) counts as an error, and
// the tool metrics are only for tools/call.
func TestToolLabels(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, &metrics.Options{KnownTool: known("search", "fetch")})
	m.RequestHandled(report(messages.MethodCallTool, "search", session.OutcomeOK, 2*time.Millisecond))
	m.RequestHandled(report(messages.MethodCallTool, "search", session.OutcomeError, time.Millisecond)) // isError
	m.RequestHandled(report(messages.MethodCallTool, "fetch", session.OutcomeCancelled, time.Second))
	m.RequestHandled(report(messages.MethodCallTool, "rm -rf /", session.OutcomeError, time.Millisecond))
	m.RequestHandled(report(messages.MethodCallTool, "", session.OutcomeError, time.Millisecond))
	m.RequestHandled(report(messages.MethodListTools, "", session.OutcomeOK, time.Millisecond))

	expected := `
# HELP mcp_requests_total Client requests handled, by JSON-RPC method and outcome (ok; error: a JSON-RPC error or a tool result with isError; cancelled). Unknown methods are "other".
# TYPE mcp_requests_total counter
mcp_requests_total{method="tools/call",outcome="cancelled"} 1
mcp_requests_total{method="tools/call",outcome="error"} 3
mcp_requests_total{method="tools/call",outcome="ok"} 1
mcp_requests_total{method="tools/list",outcome="cancelled"} 0
mcp_requests_total{method="tools/list",outcome="error"} 0
mcp_requests_total{method="tools/list",outcome="ok"} 1
# HELP mcp_tool_calls_total The tools/call requests of mcp_requests_total, by tool and outcome. Tools the server does not have, and tools past the first 200 seen, are "other".
# TYPE mcp_tool_calls_total counter
mcp_tool_calls_total{outcome="cancelled",tool="fetch"} 1
mcp_tool_calls_total{outcome="cancelled",tool="other"} 0
mcp_tool_calls_total{outcome="cancelled",tool="search"} 0
mcp_tool_calls_total{outcome="error",tool="fetch"} 0
mcp_tool_calls_total{outcome="error",tool="other"} 2
mcp_tool_calls_total{outcome="error",tool="search"} 1
mcp_tool_calls_total{outcome="ok",tool="fetch"} 0
mcp_tool_calls_total{outcome="ok",tool="other"} 0
mcp_tool_calls_total{outcome="ok",tool="search"} 1
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(expected), "mcp_requests_total", "mcp_tool_calls_total"))

	// Latency per tool: search twice, other twice, fetch never (cancelled).
	families, err := reg.Gather()
	require.NoError(t, err)
	counts := map[string]uint64{}
	for _, f := range families {
		if f.GetName() != "mcp_tool_call_duration_seconds" {
			continue
		}
		for _, metric := range f.GetMetric() {
			counts[metric.GetLabel()[0].GetValue()] = metric.GetHistogram().GetSampleCount()
		}
	}
	assert.Equal(t, map[string]uint64{"search": 2, "other": 2, "fetch": 0}, counts)
}

// TestToolLabelCap checks that only the first MaxTools known tools get a
// label of their own, with the default bound of 200 and with a set one.
func TestToolLabelCap(t *testing.T) {
	all := func(string) bool { return true }
	t.Run("set", func(t *testing.T) {
		reg := prometheus.NewRegistry()
		m := metrics.New(reg, &metrics.Options{KnownTool: all, MaxTools: 2})
		for _, tool := range []string{"a", "b", "c", "a", "d"} {
			m.RequestHandled(report(messages.MethodCallTool, tool, session.OutcomeOK, time.Millisecond))
		}
		expected := `
# HELP mcp_tool_calls_total The tools/call requests of mcp_requests_total, by tool and outcome. Tools the server does not have, and tools past the first 2 seen, are "other".
# TYPE mcp_tool_calls_total counter
mcp_tool_calls_total{outcome="cancelled",tool="a"} 0
mcp_tool_calls_total{outcome="cancelled",tool="b"} 0
mcp_tool_calls_total{outcome="cancelled",tool="other"} 0
mcp_tool_calls_total{outcome="error",tool="a"} 0
mcp_tool_calls_total{outcome="error",tool="b"} 0
mcp_tool_calls_total{outcome="error",tool="other"} 0
mcp_tool_calls_total{outcome="ok",tool="a"} 2
mcp_tool_calls_total{outcome="ok",tool="b"} 1
mcp_tool_calls_total{outcome="ok",tool="other"} 2
`
		require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(expected), "mcp_tool_calls_total"))
	})
	t.Run("default", func(t *testing.T) {
		reg := prometheus.NewRegistry()
		m := metrics.New(reg, &metrics.Options{KnownTool: all})
		// Concurrently, as sessions report: the bound holds under races.
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				for i := range 300 {
					tool := "tool-" + strconv.Itoa((i+g*75)%300)
					m.RequestHandled(report(messages.MethodCallTool, tool, session.OutcomeOK, time.Millisecond))
				}
			})
		}
		wg.Wait()
		n, err := testutil.GatherAndCount(reg, "mcp_tool_call_duration_seconds")
		require.NoError(t, err)
		assert.Equal(t, metrics.DefaultMaxTools+1, n, "200 tools and other")

		var total float64
		families, err := reg.Gather()
		require.NoError(t, err)
		for _, f := range families {
			if f.GetName() == "mcp_tool_calls_total" {
				for _, metric := range f.GetMetric() {
					total += metric.GetCounter().GetValue()
				}
			}
		}
		assert.Equal(t, float64(4*300), total, "every call counted once")
	})
}

// TestBuildInfo checks mcp_build_info.
func TestBuildInfo(t *testing.T) {
	reg := prometheus.NewRegistry()
	metrics.New(reg, &metrics.Options{Version: "1.2.3"})
	expected := `
# HELP mcp_build_info Always 1; labelled with the server's version and the Go version it was built with.
# TYPE mcp_build_info gauge
mcp_build_info{goversion="` + runtime.Version() + `",version="1.2.3"} 1
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(expected), "mcp_build_info"))
}
