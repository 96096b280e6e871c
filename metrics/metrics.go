// Package metrics exports what mcp-actors sessions and transports do as
// Prometheus metrics. A *Metrics is both a session.Observer (pass it in
// mcpactors.Options) and a transport.Observer (pass it in
// transport.HTTPOptions):
//
//	session actors ──RequestHandled / PendingCalls / EventsReplayed──▶ Metrics ──▶ /metrics
//	HTTP transport ──HTTPRequest / StreamEvent────────────────────────▶
package metrics

import (
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcp-actors/mcp-actors/actors/session"
	"github.com/mcp-actors/mcp-actors/messages"
)

// Metrics holds the collectors. Create it with New.
type Metrics struct {
	requests       *prometheus.CounterVec
	latency        *prometheus.HistogramVec
	pending        prometheus.Gauge
	eventsSent     prometheus.Counter
	eventsReplayed prometheus.Counter
	httpRequests   *prometheus.CounterVec
	httpLatency    *prometheus.HistogramVec
	sessionsOpen   prometheus.GaugeFunc
	sessionsLive   prometheus.GaugeFunc

	// byMethod caches the children of the per-method metrics (method →
	// *methodMetrics), so that the hot path does no label hashing. A
	// method's series appear once it is first seen.
	byMethod sync.Map
	byHTTP   sync.Map // httpKey → *httpMetrics
}

// methodMetrics are one method's children of the request metrics.
type methodMetrics struct {
	ok, err, cancelled prometheus.Counter
	latency            prometheus.Observer
}

// Sessions reports session counts for the gauges.
type Sessions interface {
	OpenSessions() int
	LiveSessions() int
}

// New registers the collectors with reg. sessions may be nil (no session
// gauges) and set later only by creating a new Metrics.
func New(reg prometheus.Registerer, sessions Sessions) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcp_requests_total",
			Help: "Client requests handled, by JSON-RPC method and outcome (ok, error, cancelled).",
		}, []string{"method", "outcome"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mcp_request_duration_seconds",
			Help:    "Time from a client request reaching its session to its answer, by method.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"method"}),
		pending: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mcp_pending_outbound_calls",
			Help: "Server-to-client requests (sampling, elicitation, roots) waiting for the client.",
		}),
		eventsSent: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mcp_stream_events_sent_total",
			Help: "SSE events written to clients.",
		}),
		eventsReplayed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mcp_stream_events_replayed_total",
			Help: "SSE events resent to clients that resumed with Last-Event-ID.",
		}),
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcp_http_requests_total",
			Help: "HTTP requests on the MCP endpoint, by HTTP method and status code.",
		}, []string{"method", "code"}),
		httpLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mcp_http_request_duration_seconds",
			Help:    "Duration of HTTP requests on the MCP endpoint (a GET stream counts until it closes).",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 12),
		}, []string{"method"}),
	}
	reg.MustRegister(m.requests, m.latency, m.pending, m.eventsSent, m.eventsReplayed, m.httpRequests, m.httpLatency)

	if sessions != nil {
		m.sessionsOpen = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "mcp_sessions_open",
			Help: "Sessions that completed initialization and have not closed.",
		}, func() float64 { return float64(sessions.OpenSessions()) })
		m.sessionsLive = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "mcp_sessions_live",
			Help: "Sessions not yet closed, initialized or not.",
		}, func() float64 { return float64(sessions.LiveSessions()) })
		reg.MustRegister(m.sessionsOpen, m.sessionsLive)
	}
	return m
}

// forMethod returns the cached children for method ("other" when unknown).
func (m *Metrics) forMethod(method string) *methodMetrics {
	if !knownMethods[method] {
		method = "other"
	}
	if mm, ok := m.byMethod.Load(method); ok {
		return mm.(*methodMetrics)
	}
	mm := &methodMetrics{latency: m.latency.WithLabelValues(method)}
	mm.ok = m.requests.WithLabelValues(method, string(session.OutcomeOK))
	mm.err = m.requests.WithLabelValues(method, string(session.OutcomeError))
	mm.cancelled = m.requests.WithLabelValues(method, string(session.OutcomeCancelled))
	actual, _ := m.byMethod.LoadOrStore(method, mm)
	return actual.(*methodMetrics)
}

// RequestHandled implements session.Observer.
func (m *Metrics) RequestHandled(method string, outcome session.Outcome, d time.Duration) {
	mm := m.forMethod(method)
	switch outcome {
	case session.OutcomeOK:
		mm.ok.Inc()
	case session.OutcomeError:
		mm.err.Inc()
	case session.OutcomeCancelled:
		mm.cancelled.Inc()
		return
	}
	mm.latency.Observe(d.Seconds())
}

// PendingCalls implements session.Observer.
func (m *Metrics) PendingCalls(delta int) { m.pending.Add(float64(delta)) }

// EventsReplayed implements session.Observer.
func (m *Metrics) EventsReplayed(n int) { m.eventsReplayed.Add(float64(n)) }

// HTTPRequest implements transport.Observer.
func (m *Metrics) HTTPRequest(method string, status int, d time.Duration) {
	switch method {
	case "GET", "POST", "DELETE":
	default:
		method = "other" // clients choose methods: keep the label set small
	}
	key := httpKey{method, status}
	hm, ok := m.byHTTP.Load(key)
	if !ok {
		hm, _ = m.byHTTP.LoadOrStore(key, &httpMetrics{
			requests: m.httpRequests.WithLabelValues(method, strconv.Itoa(status)),
			latency:  m.httpLatency.WithLabelValues(method),
		})
	}
	h := hm.(*httpMetrics)
	h.requests.Inc()
	h.latency.Observe(d.Seconds())
}

// httpKey and httpMetrics cache the children of the HTTP metrics. Methods
// and status codes come from a small set (the server answers only GET,
// POST and DELETE, and 405 for the rest).
type httpKey struct {
	method string
	status int
}

type httpMetrics struct {
	requests prometheus.Counter
	latency  prometheus.Observer
}

// StreamEvent implements transport.Observer.
func (m *Metrics) StreamEvent(bool) { m.eventsSent.Inc() }

// knownMethods are the method labels kept as they are; anything else a
// client sends is counted as "other", so that clients cannot grow the
// label set.
var knownMethods = map[string]bool{
	messages.MethodInitialize: true, messages.MethodPing: true, messages.MethodSetLevel: true,
	messages.MethodComplete: true, messages.MethodListTools: true, messages.MethodCallTool: true,
	messages.MethodListResources: true, messages.MethodListResourceTemplates: true,
	messages.MethodReadResource: true, messages.MethodSubscribe: true, messages.MethodUnsubscribe: true,
	messages.MethodListPrompts: true, messages.MethodGetPrompt: true,
	messages.MethodGetTask: true, messages.MethodGetTaskPayload: true, messages.MethodListTasks: true,
	messages.MethodCancelTask: true,
}
