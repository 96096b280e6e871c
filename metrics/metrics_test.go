package metrics_test

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/actors/session"
	"github.com/mcp-actors/mcp-actors/metrics"
)

type sessions struct{ open, live int }

func (s sessions) OpenSessions() int { return s.open }
func (s sessions) LiveSessions() int { return s.live }

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, sessions{open: 2, live: 3})
	m.RequestHandled("tools/call", session.OutcomeOK, 2*time.Millisecond)
	m.RequestHandled("tools/call", session.OutcomeError, time.Millisecond)
	m.RequestHandled("tools/call", session.OutcomeCancelled, time.Second)
	m.RequestHandled("made/up", session.OutcomeOK, time.Millisecond)
	m.PendingCalls(3)
	m.PendingCalls(-1)
	m.EventsReplayed(4)
	m.HTTPRequest("POST", 200, time.Millisecond)
	m.StreamEvent(false)

	expected := `
# HELP mcp_requests_total Client requests handled, by JSON-RPC method and outcome (ok, error, cancelled).
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
