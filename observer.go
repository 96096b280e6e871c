package mcpactors

import (
	"time"

	"github.com/mcp-actors/mcp-actors/actors/session"
	"github.com/mcp-actors/mcp-actors/actors/transport"
)

// Observer is told what sessions do (Options.Observer). Its methods are
// called from session actors and handler goroutines, concurrently, and
// must not block.
type Observer interface {
	// RequestHandled reports a client request answered (or cancelled). It
	// is called before the answer is sent, so a client that has the
	// answer finds the request counted.
	RequestHandled(r RequestReport)
	// PendingCalls reports a change in the number of server-to-client
	// calls waiting for their client, across sessions.
	PendingCalls(delta int)
	// EventsReplayed reports stream events sent again after a client
	// resumed a stream (Last-Event-ID).
	EventsReplayed(n int)
}

// HTTPObserver is told what the Streamable HTTP endpoint does: an
// Options.Observer that is one too is told both. Its methods must not
// block.
type HTTPObserver interface {
	// HTTPRequest reports one finished HTTP request: its method, status
	// and duration.
	HTTPRequest(method string, status int, d time.Duration)
	// StreamEvent reports an SSE event written; replayed is true for
	// events sent again after Last-Event-ID.
	StreamEvent(replayed bool)
}

// RequestReport is what an Observer is told of one client request.
type RequestReport struct {
	Method string
	// Tool is the tool name of a tools/call, as the client sent it (so
	// possibly one the server does not have); empty for other methods.
	Tool    string
	Outcome Outcome
	// Duration runs from the request reaching its session to its answer
	// (for a cancelled request, to the handler's return).
	Duration time.Duration
}

// Outcome is how a request ended.
type Outcome string

// The outcomes of a request.
const (
	OutcomeOK        Outcome = "ok"        // a result
	OutcomeError     Outcome = "error"     // a JSON-RPC error, or a tool result with isError true
	OutcomeCancelled Outcome = "cancelled" // cancelled by the client: no response
)

// sessionObserver is what the sessions report to: Options.Metrics and
// Options.Observer, either or both.
func (s *Server) sessionObserver() session.Observer {
	switch {
	case s.metrics == nil && s.opts.Observer == nil:
		return nil
	case s.metrics == nil:
		return observed{s.opts.Observer}
	case s.opts.Observer == nil:
		return s.metrics
	}
	return teeObserver{s.metrics, observed{s.opts.Observer}}
}

// observed tells an embedder's Observer what the sessions report.
type observed struct{ o Observer }

func (o observed) RequestHandled(r session.RequestReport) {
	o.o.RequestHandled(RequestReport{Method: r.Method, Tool: r.Tool, Outcome: Outcome(r.Outcome), Duration: r.Duration})
}
func (o observed) PendingCalls(delta int) { o.o.PendingCalls(delta) }
func (o observed) EventsReplayed(n int)   { o.o.EventsReplayed(n) }

// httpObserver is what the HTTP transport reports to: Options.Metrics,
// and Options.Observer when it observes HTTP too.
func (s *Server) httpObserver() transport.HTTPObserver {
	other, _ := s.opts.Observer.(HTTPObserver)
	switch {
	case s.metrics == nil && other == nil:
		return nil
	case s.metrics == nil:
		return other
	case other == nil:
		return s.metrics
	}
	return teeHTTP{s.metrics, other}
}

// teeObserver reports to two session observers.
type teeObserver [2]session.Observer

func (t teeObserver) RequestHandled(r session.RequestReport) {
	t[0].RequestHandled(r)
	t[1].RequestHandled(r)
}
func (t teeObserver) PendingCalls(delta int) { t[0].PendingCalls(delta); t[1].PendingCalls(delta) }
func (t teeObserver) EventsReplayed(n int)   { t[0].EventsReplayed(n); t[1].EventsReplayed(n) }

// teeHTTP reports to two HTTP observers.
type teeHTTP [2]transport.HTTPObserver

func (t teeHTTP) HTTPRequest(m string, status int, d time.Duration) {
	t[0].HTTPRequest(m, status, d)
	t[1].HTTPRequest(m, status, d)
}
func (t teeHTTP) StreamEvent(replayed bool) { t[0].StreamEvent(replayed); t[1].StreamEvent(replayed) }
