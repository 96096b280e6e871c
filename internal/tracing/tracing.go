// Package tracing makes the runtime's OpenTelemetry spans: a span for each
// client request an HTTP endpoint receives, each routing hop between
// nodes, each handler run and each server-to-client call, all in the
// trace the client's request names (W3C trace context, from the
// traceparent header or from the request's _meta). A nil *Tracer makes
// none and costs nothing: tracing is off unless the server was given a
// TracerProvider.
//
//	client ──POST (traceparent)──▶ n2: mcp.request tools/call
//	                                  └─ mcp.route ──NATS (envelope fields 16, 17)──▶ n1: mcp.deliver
//	                                                                                      └─ mcp.handle tools/call
//	                                                                                           └─ mcp.client_call elicitation/create
package tracing

import (
	"context"
	json "encoding/json/v2"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-actors/mcp-actors/messages"
)

// scope names the runtime's instrumentation.
const scope = "github.com/mcp-actors/mcp-actors"

// Span attributes.
const (
	AttrNode    = attribute.Key("mcp.node")       // the node that made the span
	AttrMethod  = attribute.Key("mcp.method")     // the JSON-RPC method
	AttrSession = attribute.Key("mcp.session")    // the session's log ID (a hash, never the ID)
	AttrTarget  = attribute.Key("mcp.route.to")   // the node a hop goes to
	AttrFrom    = attribute.Key("mcp.route.from") // the node a hop comes from
)

// Tracer makes the runtime's spans on one node.
type Tracer struct {
	t    trace.Tracer
	node attribute.KeyValue
}

// New returns the tracer of node on tp; nil when tp is nil (tracing off).
func New(tp trace.TracerProvider, node string) *Tracer {
	if tp == nil {
		return nil
	}
	return &Tracer{t: tp.Tracer(scope), node: AttrNode.String(node)}
}

var propagator = propagation.TraceContext{}

// Start starts a span named name, child of ctx's span, with the node's
// attribute and attrs.
func (t *Tracer) Start(ctx context.Context, name string, kind trace.SpanKind, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	ctx, span := t.t.Start(ctx, name, trace.WithSpanKind(kind), trace.WithAttributes(append(attrs, t.node)...))
	return context.WithValue(ctx, nodeKey{}, t.node), span
}

// nodeKey is the context key of the node attribute of the span a context
// carries (Start), for ChildOf's spans.
type nodeKey struct{}

// FromClient returns ctx with the remote span the client named as its
// request's parent: the traceparent header, else traceparent in the
// request's params._meta (as MCP carries trace context), else none.
func FromClient(ctx context.Context, h http.Header, msg *messages.Message) context.Context {
	if h.Get("traceparent") != "" {
		return propagator.Extract(ctx, propagation.HeaderCarrier(h))
	}
	if msg == nil || len(msg.Params) == 0 {
		return ctx
	}
	var p struct {
		Meta struct {
			Parent string `json:"traceparent"`
			State  string `json:"tracestate"`
		} `json:"_meta"`
	}
	if json.Unmarshal(msg.Params, &p) != nil || p.Meta.Parent == "" {
		return ctx
	}
	return Extract(ctx, messages.Trace{Parent: p.Meta.Parent, State: p.Meta.State})
}

// Inject returns the trace context of ctx's span, to carry with a message.
func Inject(ctx context.Context) messages.Trace {
	var c carrier
	propagator.Inject(ctx, &c)
	return c.t
}

// Extract returns ctx with the remote span tr names as its parent.
func Extract(ctx context.Context, tr messages.Trace) context.Context {
	if tr.Parent == "" {
		return ctx
	}
	return propagator.Extract(ctx, &carrier{t: tr})
}

// EndError ends span, marking it failed with err when err is not nil.
func EndError(span trace.Span, err error) {
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// carrier carries a messages.Trace as W3C trace context.
type carrier struct{ t messages.Trace }

func (c *carrier) Get(key string) string {
	switch key {
	case "traceparent":
		return c.t.Parent
	case "tracestate":
		return c.t.State
	}
	return ""
}

func (c *carrier) Set(key, value string) {
	switch key {
	case "traceparent":
		c.t.Parent = value
	case "tracestate":
		c.t.State = value
	}
}

func (c *carrier) Keys() []string { return []string{"traceparent", "tracestate"} }

// ChildOf starts a span named name as a child of ctx's span when that span
// is recording, with the same tracer provider and node; otherwise it
// returns ctx and a span that does nothing. For the spans of a handler's
// calls (server-to-client requests), which have its context and no
// Tracer; the node is the one of the span Start made.
func ChildOf(ctx context.Context, name string, kind trace.SpanKind, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return ctx, parent
	}
	if node, ok := ctx.Value(nodeKey{}).(attribute.KeyValue); ok {
		attrs = append(attrs, node)
	}
	return parent.TracerProvider().Tracer(scope).Start(ctx, name, trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
}
