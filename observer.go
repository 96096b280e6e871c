package mcpactors

import (
	"time"

	"github.com/mcp-actors/mcp-actors/actors/session"
	"github.com/mcp-actors/mcp-actors/actors/transport"
)

// sessionObserver is what the sessions report to: Options.Metrics and
// Options.Observer, either or both.
func (s *Server) sessionObserver() session.Observer {
	switch {
	case s.metrics == nil && s.opts.Observer == nil:
		return nil
	case s.metrics == nil:
		return s.opts.Observer
	case s.opts.Observer == nil:
		return s.metrics
	}
	return teeObserver{s.metrics, s.opts.Observer}
}

// httpObserver is what the HTTP transport reports to: Options.Metrics,
// and Options.Observer when it observes HTTP too.
func (s *Server) httpObserver() transport.HTTPObserver {
	other, _ := s.opts.Observer.(transport.HTTPObserver)
	switch {
	case s.metrics == nil:
		return other // nil when the Observer does not observe HTTP
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
