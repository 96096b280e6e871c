package transport

import (
	"errors"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/mcp-actors/mcp-actors/actors/session"
	"github.com/mcp-actors/mcp-actors/internal/workpool"
	"github.com/mcp-actors/mcp-actors/messages"
)

// Header names of the Streamable HTTP transport.
const (
	HeaderSessionID       = "Mcp-Session-Id"
	HeaderProtocolVersion = "Mcp-Protocol-Version"
	headerLastEventID     = "Last-Event-ID"
)

// endpoint is the Streamable HTTP endpoint, independent of the HTTP server
// that carries it: it translates exchanges into session messages and frames
// back into answers. HTTPHandler (net/http) and FastServer (fasthttp) wrap
// it.
//
//	POST initialize ──▶ spawn session ──HandleRequest──▶ actor ──frames──▶ JSON, Mcp-Session-Id
//	POST request    ──▶ HandleRequest{sink} ──▶ first frame final? JSON : SSE (primed, resumable)
//	POST notification / response ──▶ HandleNotification / DeliverResponse ──▶ 202
//	GET [Last-Event-ID] ──▶ AttachStream{connStream} ──▶ connection taken over; replay, then live
//	DELETE ──▶ CloseSession ──▶ 204
type endpoint struct {
	host     SessionHost
	opts     HTTPOptions
	policy   originPolicy
	retry    string
	pool     *workpool.Pool
	hub      *streamHub
	watcher  *closeWatcher
	draining atomic.Bool
}

func newEndpoint(host SessionHost, opts *HTTPOptions) *endpoint {
	o := opts.withDefaults()
	return &endpoint{
		host:    host,
		opts:    o,
		policy:  newOriginPolicy(&o),
		retry:   strconv.FormatInt(o.Retry.Milliseconds(), 10),
		pool:    workpool.New(16),
		hub:     newStreamHub(o.KeepAlive),
		watcher: newCloseWatcher(),
	}
}

// close stops the endpoint's goroutines (streams already taken over are
// closed by their sessions).
func (e *endpoint) close() {
	e.hub.close()
	e.watcher.close()
	e.pool.Close()
}

// serve answers one exchange.
func (e *endpoint) serve(x exchange) {
	if !e.policy.hostAllowed(x.host()) {
		e.fail(x, 403, "forbidden: Host header not allowed")
		return
	}
	if !e.policy.originAllowed(x.header("Origin"), x.host()) {
		e.fail(x, 403, "forbidden: Origin header not allowed")
		return
	}
	principal := ""
	if a := e.opts.Authenticator; a != nil {
		p, err := a.Authenticate(x.context(), headerView{x})
		if err != nil {
			challenge := "Bearer"
			if x.header("Authorization") != "" {
				challenge = `Bearer error="invalid_token"` // RFC 6750 §3.1: no error code without credentials
			}
			x.setHeader("WWW-Authenticate", challenge)
			e.fail(x, 401, "unauthorized: "+publicAuthError(err))
			return
		}
		principal = p
	}
	switch x.method() {
	case "POST":
		e.post(x, principal)
	case "GET":
		e.get(x, principal)
	case "DELETE":
		e.remove(x, principal)
	default:
		x.setHeader("Allow", "GET, POST, DELETE")
		e.fail(x, 405, "method not allowed: use POST, GET or DELETE")
	}
}

// session finds the session an exchange names, answering 400 or 404 itself
// when it cannot. A session created by another principal is reported as
// not found, exactly as an unknown one.
func (e *endpoint) session(x exchange, principal string) (*session.Ref, bool) {
	id := x.header(HeaderSessionID)
	if id == "" {
		e.fail(x, 400, "bad request: the Mcp-Session-Id header is required")
		return nil, false
	}
	ref, ok := e.host.Session(id)
	if !ok || ref.Principal() != principal || ref.Retired() {
		e.fail(x, 404, "session not found")
		return nil, false
	}
	return ref, true
}

// version answers 400 for an MCP-Protocol-Version we do not speak. A
// missing header means 2025-03-26.
func (e *endpoint) version(x exchange) (string, bool) {
	v := x.header(HeaderProtocolVersion)
	if v == "" {
		return messages.Version20250326, true
	}
	if !messages.IsSupportedVersion(v) {
		e.fail(x, 400, "bad request: unsupported MCP-Protocol-Version "+quote(v))
		return "", false
	}
	return v, true
}

// remove ends a session (DELETE). The session is retired first, so that
// any request for it from now on gets 404, then the answer goes out, and
// only then does the session close: its GET stream ends after the client
// has its answer, so that the client takes the GET's connection back into
// its pool rather than opening a new one for its next session (Go's
// client keeps two idle connections per host).
func (e *endpoint) remove(x exchange, principal string) {
	if _, ok := e.version(x); !ok {
		return
	}
	ref, ok := e.session(x, principal)
	if !ok {
		return
	}
	ref.Retire()
	x.reply(204, nil)
	ref.Send(&messages.CloseSession{Reason: "deleted by the client"})
}

// fail answers with status and a JSON-RPC error body without an ID.
func (e *endpoint) fail(x exchange, status int, msg string) {
	code := int64(messages.CodeInvalidRequest)
	if status >= 500 {
		code = messages.CodeInternalError
	}
	x.reply(status, messages.EncodeError(messages.ID{}, &messages.Error{Code: code, Message: msg}))
}

// acceptance says whether the Accept header admits the two media types
// the endpoint answers with (exactly, by type/*, or by */*), in one pass
// over its values.
func acceptance(x exchange) (json, sse bool) {
	for _, v := range x.headerValues("Accept") {
		eachMediaType(v, func(t string, _ float64) bool {
			switch {
			case t == "*/*":
				json, sse = true, true
			case strings.EqualFold(t, "application/json"), strings.EqualFold(t, "application/*"):
				json = true
			case strings.EqualFold(t, "text/event-stream"), strings.EqualFold(t, "text/*"):
				sse = true
			}
			return !json || !sse
		})
	}
	return json, sse
}

// prefersSSE reports whether the client ranks text/event-stream above
// application/json: a higher q-value, or the same one and listed first. Such
// a client gets even a lone response as an event stream.
func prefersSSE(x exchange) bool {
	var sseQ, jsonQ float64 = -1, -1
	sseFirst := false
	for _, v := range x.headerValues("Accept") {
		eachMediaType(v, func(t string, q float64) bool {
			switch {
			case strings.EqualFold(t, "text/event-stream"):
				if sseQ < 0 {
					sseQ, sseFirst = q, jsonQ < 0
				}
			case strings.EqualFold(t, "application/json"):
				if jsonQ < 0 {
					jsonQ = q
				}
			}
			return true
		})
	}
	return sseQ > jsonQ || (sseQ == jsonQ && sseFirst && sseQ > 0)
}

// eachMediaType calls fn with each media range of an Accept header value
// and its q-value, until fn returns false. It allocates nothing.
func eachMediaType(v string, fn func(t string, q float64) bool) {
	for v != "" {
		var part string
		part, v, _ = strings.Cut(v, ",")
		t, params, _ := strings.Cut(part, ";")
		q := 1.0
		for params != "" {
			var p string
			p, params, _ = strings.Cut(params, ";")
			if k, val, ok := strings.Cut(strings.TrimSpace(p), "="); ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				if f, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
					q = f
				}
			}
		}
		if !fn(strings.TrimSpace(t), q) {
			return
		}
	}
}

// isJSON reports whether a Content-Type is application/json.
func isJSON(ct string) bool {
	t, _, _ := strings.Cut(ct, ";")
	return strings.EqualFold(strings.TrimSpace(t), "application/json")
}

// publicAuthError keeps authenticator internals out of responses.
func publicAuthError(err error) string {
	var pe interface{ Public() string }
	if errors.As(err, &pe) {
		return pe.Public()
	}
	return "invalid or missing credentials"
}

func quote(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return `"` + strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '"' {
			return '?'
		}
		return r
	}, s) + `"`
}

// headerView shows an exchange's headers to an Authenticator.
type headerView struct{ x exchange }

func (h headerView) Header(name string) string { return h.x.header(name) }

// idOf returns the ID of a message that failed to decode, when readable.
func idOf(m *messages.Message) messages.ID {
	if m == nil {
		return messages.ID{}
	}
	return m.ID
}
