// Package metrics exports what mcp-actors sessions and transports do as
// Prometheus metrics. A *Metrics is both a session.Observer (pass it in
// mcpactors.Options) and a transport.HTTPObserver (pass it in
// transport.HTTPOptions):
//
//	session actors ──RequestHandled / PendingCalls / EventsReplayed──▶ Metrics ──▶ /metrics
//	HTTP transport ──HTTPRequest / StreamEvent────────────────────────▶
//
// Every label value a client can choose is bounded: unknown methods, tools
// the server does not have, and tools past Options.MaxTools are all
// "other".
package metrics

import (
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcp-actors/mcp-actors/actors/session"
	"github.com/mcp-actors/mcp-actors/messages"
)

// Metrics holds the collectors. Create it with New.
type Metrics struct {
	requests       *prometheus.CounterVec
	latency        *prometheus.HistogramVec
	toolCalls      *prometheus.CounterVec
	toolLatency    *prometheus.HistogramVec
	buildInfo      *prometheus.GaugeVec
	pending        prometheus.Gauge
	eventsSent     prometheus.Counter
	eventsReplayed prometheus.Counter
	httpRequests   *prometheus.CounterVec
	httpLatency    *prometheus.HistogramVec
	sessionsOpen   prometheus.GaugeFunc
	sessionsLive   prometheus.GaugeFunc

	// byMethod caches the children of the per-method metrics (method →
	// *outcomeMetrics), so that the hot path does no label hashing. A
	// method's series appear once it is first seen.
	byMethod sync.Map
	byHTTP   sync.Map // httpKey → *httpMetrics

	// byTool caches the children of the per-tool metrics (tool name →
	// *outcomeMetrics) for the tools that have a label of their own: at
	// most maxTools names, each one knownTool accepted. Names not in it
	// count as otherTool, and are never stored, so clients cannot grow it.
	byTool    sync.Map
	toolMu    sync.Mutex   // serialises adding to byTool
	toolCount atomic.Int64 // entries in byTool; written under toolMu
	otherTool *outcomeMetrics
	knownTool func(name string) bool // nil: every tool is "other"
	maxTools  int
}

// outcomeMetrics are one label value's children of a pair of request
// metrics: a counter by outcome and a latency histogram.
type outcomeMetrics struct {
	ok, err, cancelled prometheus.Counter
	latency            prometheus.Observer
}

// observe counts one request with outcome o and, unless it was cancelled
// (and so has no answer), its duration d.
func (om *outcomeMetrics) observe(o session.Outcome, d time.Duration) {
	switch o {
	case session.OutcomeOK:
		om.ok.Inc()
	case session.OutcomeError:
		om.err.Inc()
	case session.OutcomeCancelled:
		om.cancelled.Inc()
		return
	}
	om.latency.Observe(d.Seconds())
}

// Sessions reports session counts for the gauges.
type Sessions interface {
	OpenSessions() int
	LiveSessions() int
}

// DefaultMaxTools is the number of distinct tool labels kept when
// Options.MaxTools is zero.
const DefaultMaxTools = 200

// otherLabel is the label value of whatever has no label of its own.
const otherLabel = "other"

// Options configure New. The zero value (or nil) is usable: no session
// gauges, every tool counted as "other", an empty version.
type Options struct {
	// Sessions is the source of the session gauges; nil registers none.
	Sessions Sessions
	// KnownTool reports whether the server has a tool of this name. Only
	// known tools get a tool label of their own; the name in a tools/call
	// is the client's string. Called concurrently, on the hot path of
	// tools/call until the tool has its label; it must be cheap. Nil
	// counts every tool as "other".
	KnownTool func(name string) bool
	// MaxTools bounds the distinct tool labels (default DefaultMaxTools).
	// Tools seen once the bound is reached count as "other", even if known.
	MaxTools int
	// Version is the server's version, the version label of
	// mcp_build_info.
	Version string
	// MaxSessions is the server's session limit, mcp_sessions_max (0: no
	// gauge).
	MaxSessions int
	// Memory, when set, reports the memory the process holds (less what
	// the next collection frees) and its limit (GOMEMLIMIT; 0: none), for
	// mcp_memory_held_bytes and mcp_memory_limit_bytes.
	Memory func() (held, limit uint64)
}

// New registers the collectors with reg. o may be nil.
func New(reg prometheus.Registerer, o *Options) *Metrics {
	var opts Options
	if o != nil {
		opts = *o
	}
	if opts.MaxTools <= 0 {
		opts.MaxTools = DefaultMaxTools
	}
	m := &Metrics{
		knownTool: opts.KnownTool,
		maxTools:  opts.MaxTools,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcp_requests_total",
			Help: "Client requests handled, by JSON-RPC method and outcome (ok; error: a JSON-RPC error or a tool result with isError; cancelled). Unknown methods are \"other\".",
		}, []string{"method", "outcome"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mcp_request_duration_seconds",
			Help:    "Time from a client request reaching its session to its answer, by method (cancelled requests excluded).",
			Buckets: latencyBuckets,
		}, []string{"method"}),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcp_tool_calls_total",
			Help: "The tools/call requests of mcp_requests_total, by tool and outcome. Tools the server does not have, and tools past the first " + strconv.Itoa(opts.MaxTools) + " seen, are \"other\".",
		}, []string{"tool", "outcome"}),
		toolLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mcp_tool_call_duration_seconds",
			Help:    "The tools/call requests of mcp_request_duration_seconds, by tool (\"other\" as in mcp_tool_calls_total).",
			Buckets: latencyBuckets,
		}, []string{"tool"}),
		buildInfo: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "mcp_build_info",
			Help: "Always 1; labelled with the server's version and the Go version it was built with.",
		}, []string{"version", "goversion"}),
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
	m.buildInfo.WithLabelValues(opts.Version, runtime.Version()).Set(1)
	m.otherTool = newOutcomeMetrics(m.toolCalls, m.toolLatency, otherLabel)
	reg.MustRegister(m.requests, m.latency, m.toolCalls, m.toolLatency, m.buildInfo,
		m.pending, m.eventsSent, m.eventsReplayed, m.httpRequests, m.httpLatency)

	if sessions := opts.Sessions; sessions != nil {
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
	if opts.MaxSessions > 0 {
		max := prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mcp_sessions_max",
			Help: "The most live sessions the server holds (--max-sessions); initialize beyond gets 503.",
		})
		max.Set(float64(opts.MaxSessions))
		reg.MustRegister(max)
	}
	if mem := opts.Memory; mem != nil {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "mcp_memory_held_bytes",
			Help: "Memory the Go runtime holds, less what the next collection frees (stacks and fragmentation count).",
		}, func() float64 { held, _ := mem(); return float64(held) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "mcp_memory_limit_bytes",
				Help: "The process's memory limit (GOMEMLIMIT, from the container's by default); 0 without one.",
			}, func() float64 { _, limit := mem(); return float64(limit) }))
	}
	return m
}

// latencyBuckets are the buckets of the request and tool latency
// histograms, in seconds.
var latencyBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// newOutcomeMetrics returns the children of counts and latency for label.
func newOutcomeMetrics(counts *prometheus.CounterVec, latency *prometheus.HistogramVec, label string) *outcomeMetrics {
	return &outcomeMetrics{
		ok:        counts.WithLabelValues(label, string(session.OutcomeOK)),
		err:       counts.WithLabelValues(label, string(session.OutcomeError)),
		cancelled: counts.WithLabelValues(label, string(session.OutcomeCancelled)),
		latency:   latency.WithLabelValues(label),
	}
}

// forMethod returns the cached children for method ("other" when unknown).
func (m *Metrics) forMethod(method string) *outcomeMetrics {
	if !knownMethods[method] {
		method = otherLabel
	}
	if mm, ok := m.byMethod.Load(method); ok {
		return mm.(*outcomeMetrics)
	}
	actual, _ := m.byMethod.LoadOrStore(method, newOutcomeMetrics(m.requests, m.latency, method))
	return actual.(*outcomeMetrics)
}

// forTool returns the cached children for tool: its own if it is known and
// within the bound, otherwise "other".
func (m *Metrics) forTool(tool string) *outcomeMetrics {
	if tm, ok := m.byTool.Load(tool); ok {
		return tm.(*outcomeMetrics)
	}
	if tool == "" || m.knownTool == nil || m.toolCount.Load() >= int64(m.maxTools) || !m.knownTool(tool) {
		return m.otherTool
	}
	m.toolMu.Lock()
	defer m.toolMu.Unlock()
	if tm, ok := m.byTool.Load(tool); ok {
		return tm.(*outcomeMetrics)
	}
	if m.toolCount.Load() >= int64(m.maxTools) {
		return m.otherTool
	}
	tm := newOutcomeMetrics(m.toolCalls, m.toolLatency, tool)
	m.byTool.Store(tool, tm)
	m.toolCount.Add(1)
	return tm
}

// RequestHandled implements session.Observer.
func (m *Metrics) RequestHandled(r session.RequestReport) {
	m.forMethod(r.Method).observe(r.Outcome, r.Duration)
	if r.Method == messages.MethodCallTool {
		m.forTool(r.Tool).observe(r.Outcome, r.Duration)
	}
}

// PendingCalls implements session.Observer.
func (m *Metrics) PendingCalls(delta int) { m.pending.Add(float64(delta)) }

// EventsReplayed implements session.Observer.
func (m *Metrics) EventsReplayed(n int) { m.eventsReplayed.Add(float64(n)) }

// HTTPRequest implements transport.HTTPObserver.
func (m *Metrics) HTTPRequest(method string, status int, d time.Duration) {
	switch method {
	case "GET", "POST", "DELETE":
	default:
		method = otherLabel // clients choose methods: keep the label set small
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

// StreamEvent implements transport.HTTPObserver.
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
