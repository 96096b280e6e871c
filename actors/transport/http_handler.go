package transport

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcp-actors/mcp-actors/actors/router"
	"github.com/mcp-actors/mcp-actors/internal/tracing"
	"github.com/mcp-actors/mcp-actors/messages"
)

// Header names of the Streamable HTTP transport.
const (
	HeaderSessionID       = "Mcp-Session-Id"
	HeaderProtocolVersion = "Mcp-Protocol-Version"
	headerLastEventID     = "Last-Event-ID"
)

// HTTPHandler is the Streamable HTTP endpoint as a net/http Handler: it
// translates requests into session messages, delivered through a Router,
// and what the sessions send back into answers. It holds no session state
// and no session: a session is named by its ID, and the streams that
// carry its frames (a POST's answer, a GET's event stream) are registered
// with the node's stream registry under IDs of their own.
//
//	POST initialize ──▶ Router.Open ──HandleRequest──▶ session ──frames──▶ JSON, Mcp-Session-Id
//	POST request    ──▶ HandleRequest{stream} ──▶ first frame final? JSON : SSE (primed, resumable)
//	POST notification / response ──▶ HandleNotification / DeliverResponse ──▶ 202
//	GET [Last-Event-ID] ──▶ AttachStream{stream} ──▶ replay, then live, with keep-alive comments
//	DELETE ──▶ DeleteSession ──▶ 204
//
// Every request and stream is served on the goroutine net/http gives it;
// handlers never run there (they run on the session's node, off its
// mailbox). docs/http.md has the rules and bounds.
type HTTPHandler struct {
	router router.Router
	opts   HTTPOptions
	policy originPolicy
	log    *slog.Logger
	retry  string
	tracer *tracing.Tracer // nil: no spans (SetTracer)
	modern ModernServer    // nil: the legacy era only (SetModern)
	// shutdowns maps each *http.Server that has served a GET stream to a
	// channel closed when it begins to shut down (see shuttingDown).
	shutdowns sync.Map
}

// NewHTTPHandler returns the endpoint for the sessions r reaches. opts may
// be nil.
// SetTracer makes the handler start a span for each client request it
// hands a session (internal/tracing); nil, none. Call it before serving.
func (h *HTTPHandler) SetTracer(t *tracing.Tracer) { h.tracer = t }

func NewHTTPHandler(r router.Router, opts *HTTPOptions) *HTTPHandler {
	o := opts.withDefaults()
	return &HTTPHandler{
		router: r,
		opts:   o,
		policy: newOriginPolicy(&o),
		log:    o.Logger,
		retry:  strconv.FormatInt(o.Retry.Milliseconds(), 10),
	}
}

// exchange is one HTTP request on the endpoint and what the access log
// reports about it.
type exchange struct {
	w         http.ResponseWriter
	r         *http.Request
	principal string
	session   string // the Mcp-Session-Id it names, or the one it created
	mcpMethod string // the JSON-RPC method of a POSTed request or notification
	status    int
	streamed  bool // answered with an event stream
	start     time.Time
}

// ServeHTTP implements http.Handler.
func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	x := &exchange{w: w, r: r, status: http.StatusOK, start: start}
	h.serve(x)
	if obs := h.opts.Observer; obs != nil {
		obs.HTTPRequest(r.Method, x.status, time.Since(start))
	}
	if h.log.Enabled(r.Context(), slog.LevelDebug) {
		h.log.LogAttrs(r.Context(), slog.LevelDebug, "http request",
			slog.String("method", r.Method), slog.String("mcp_method", x.mcpMethod),
			slog.String("session", x.session), slog.Int("status", x.status),
			slog.Duration("duration", time.Since(start)), slog.Bool("stream", x.streamed))
	}
}

// serve answers one exchange.
func (h *HTTPHandler) serve(x *exchange) {
	if !h.policy.hostAllowed(x.r.Host) {
		h.fail(x, http.StatusForbidden, "forbidden: Host header not allowed")
		return
	}
	if !h.policy.originAllowed(x.r.Header.Get("Origin"), x.r.Host) {
		h.fail(x, http.StatusForbidden, "forbidden: Origin header not allowed")
		return
	}
	if a := h.opts.Authenticator; a != nil {
		p, err := a.Authenticate(x.r.Context(), headerView(x.r.Header))
		if err != nil {
			challenge := "Bearer"
			if x.r.Header.Get("Authorization") != "" {
				challenge = `Bearer error="invalid_token"` // RFC 6750 §3.1: no error code without credentials
			}
			x.w.Header().Set("WWW-Authenticate", challenge)
			h.fail(x, http.StatusUnauthorized, "unauthorized: "+publicAuthError(err))
			return
		}
		x.principal = p
	}
	switch x.r.Method {
	case http.MethodPost:
		h.post(x)
	case http.MethodGet:
		h.get(x)
	case http.MethodDelete:
		h.remove(x)
	default:
		x.w.Header().Set("Allow", "GET, POST, DELETE")
		h.fail(x, http.StatusMethodNotAllowed, "method not allowed: use POST, GET or DELETE")
	}
}

// session finds the session an exchange names, answering 400 or 404 itself
// when it cannot. A session opened by another principal is reported as
// not found, exactly as an unknown one.
func (h *HTTPHandler) session(x *exchange) bool {
	id := x.r.Header.Get(HeaderSessionID)
	if id == "" {
		h.fail(x, http.StatusBadRequest, "bad request: the Mcp-Session-Id header is required")
		return false
	}
	x.session = id
	if err := h.router.Check(x.r.Context(), id); err != nil {
		h.routeFailed(x, err)
		return false
	}
	return true
}

// notFound answers 404 for the session the exchange names.
func (h *HTTPHandler) notFound(x *exchange) {
	h.fail(x, http.StatusNotFound, "session not found")
}

// routeFailed answers a router's failure to reach the exchange's session:
// 404 when there is no such session, 413 for a message too large to reach
// it, 503 with Retry-After when it exists
// but cannot be reached right now (its node is being replaced), so that
// the client tries again rather than give the session up.
func (h *HTTPHandler) routeFailed(x *exchange, err error) {
	if errors.Is(err, router.ErrSessionNotFound) {
		h.notFound(x)
		return
	}
	if errors.Is(err, router.ErrMessageTooLarge) {
		h.fail(x, http.StatusRequestEntityTooLarge, "request body too large: it cannot reach the session's node")
		return
	}
	h.log.Debug("a session could not be reached", "session", x.session, "err", err)
	x.w.Header().Set("Retry-After", "1")
	h.fail(x, http.StatusServiceUnavailable, "service unavailable: the session cannot be reached right now, retry")
}

// unwrapReason is the reason an ErrUnavailable gives, without its prefix.
func unwrapReason(err error) string {
	return strings.TrimPrefix(err.Error(), router.ErrUnavailable.Error()+": ")
}

// modernNotAllowed answers 405 for a GET or DELETE without
// Mcp-Session-Id whose MCP-Protocol-Version is of the modern era
// (2026-07-28 and later), whose only method is POST (streamable-http.mdx,
// "Earlier Streamable HTTP Revisions"); why says what the revision lacks.
// One that names a session is the legacy era's, refused as such.
func (h *HTTPHandler) modernNotAllowed(x *exchange, why string) bool {
	v := x.r.Header.Get(HeaderProtocolVersion)
	if !messages.LooksModern(v) || x.r.Header.Get(HeaderSessionID) != "" {
		return false
	}
	x.w.Header().Set("Allow", http.MethodPost)
	h.fail(x, http.StatusMethodNotAllowed, "method not allowed: protocol "+quote(v)+" "+why+"; use POST")
	return true
}

// version answers 400 for an MCP-Protocol-Version we do not speak. A
// missing header means 2025-03-26.
func (h *HTTPHandler) version(x *exchange) (string, bool) {
	v := x.r.Header.Get(HeaderProtocolVersion)
	if v == "" {
		return messages.Version20250326, true
	}
	if !messages.IsSupportedVersion(v) {
		h.fail(x, http.StatusBadRequest, "bad request: unsupported MCP-Protocol-Version "+quote(v))
		return "", false
	}
	return v, true
}

// remove ends a session (DELETE). Once the session has been told, it is
// refused to everyone (404), and the client gets 204.
func (h *HTTPHandler) remove(x *exchange) {
	if h.modernNotAllowed(x, "has no sessions to end") {
		return
	}
	if _, ok := h.version(x); !ok {
		return
	}
	if !h.session(x) {
		return
	}
	if err := h.router.Deliver(x.r.Context(), x.session, &messages.DeleteSession{Principal: x.principal}); err != nil {
		h.routeFailed(x, err)
		return
	}
	h.reply(x, http.StatusNoContent, nil)
}

// reply answers with status and, when body is not nil, a JSON body.
func (h *HTTPHandler) reply(x *exchange, status int, body []byte) {
	x.status = status
	if body != nil {
		x.w.Header()["Content-Type"] = ctJSON
	}
	x.w.WriteHeader(status)
	if body != nil {
		_, _ = x.w.Write(body)
	}
}

// ctJSON is the Content-Type of JSON answers, shared: net/http only reads
// it.
var ctJSON = []string{"application/json"}

// fail answers with status and a JSON-RPC error body without an ID, and
// logs the refusal at debug level.
func (h *HTTPHandler) fail(x *exchange, status int, msg string) {
	code := int64(messages.CodeInvalidRequest)
	if status >= 500 {
		code = messages.CodeInternalError
	}
	h.refuse(x, status, messages.ID{}, &messages.Error{Code: code, Message: msg})
}

// refuse answers with status and the JSON-RPC error e for id, and logs
// the refusal at debug level.
func (h *HTTPHandler) refuse(x *exchange, status int, id messages.ID, e *messages.Error) {
	msg := e.Message
	if h.log.Enabled(x.r.Context(), slog.LevelDebug) {
		h.log.LogAttrs(x.r.Context(), slog.LevelDebug, "http request refused",
			slog.Int("status", status), slog.String("reason", msg),
			slog.String("method", x.r.Method), slog.String("path", x.r.URL.Path),
			slog.String("session", x.session), slog.String("remote", x.r.RemoteAddr))
	}
	h.reply(x, status, messages.EncodeError(id, e))
}

// acceptance says whether the Accept header admits the two media types
// the endpoint answers with (exactly, by type/*, or by */*), in one pass
// over its values.
func acceptance(r *http.Request) (json, sse bool) {
	for _, v := range r.Header.Values("Accept") {
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
func prefersSSE(r *http.Request) bool {
	var sseQ, jsonQ float64 = -1, -1
	sseFirst := false
	for _, v := range r.Header.Values("Accept") {
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

// headerView shows a request's headers to an Authenticator.
type headerView http.Header

func (h headerView) Header(name string) string { return http.Header(h).Get(name) }

// idOf returns the ID of a message that failed to decode, when readable.
func idOf(m *messages.Message) messages.ID {
	if m == nil {
		return messages.ID{}
	}
	return m.ID
}
