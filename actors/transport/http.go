package transport

import (
	"errors"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcp-actors/mcp-actors/actors/session"
	"github.com/mcp-actors/mcp-actors/messages"
)

// Header names of the Streamable HTTP transport.
const (
	HeaderSessionID       = "Mcp-Session-Id"
	HeaderProtocolVersion = "Mcp-Protocol-Version"
	headerLastEventID     = "Last-Event-ID"
)

// HTTPHandler serves the Streamable HTTP transport on one endpoint: POST
// carries client messages, GET opens or resumes an SSE stream, DELETE ends
// a session. It translates HTTP into session messages and frames back into
// HTTP; sessions themselves live in their actors.
//
//	POST initialize ──▶ spawn session ──HandleRequest──▶ actor ──frames──▶ JSON, Mcp-Session-Id
//	POST request    ──▶ HandleRequest{sink} ──▶ first frame final? JSON : SSE (primed, resumable)
//	POST notification / response ──▶ HandleNotification / DeliverResponse ──▶ 202
//	GET [Last-Event-ID] ──▶ AttachStream{sink} ──▶ SSE (replay, then live; keep-alive comments)
//	DELETE ──▶ CloseSession ──▶ 204
type HTTPHandler struct {
	host     SessionHost
	opts     HTTPOptions
	policy   originPolicy
	draining atomic.Bool
}

// NewHTTPHandler returns the transport for host's sessions. opts may be
// nil.
func NewHTTPHandler(host SessionHost, opts *HTTPOptions) *HTTPHandler {
	o := opts.withDefaults()
	return &HTTPHandler{host: host, opts: o, policy: newOriginPolicy(&o)}
}

// StartDrain makes the handler refuse new sessions (503) while existing
// ones finish; see mcpactors.Server.Shutdown.
func (h *HTTPHandler) StartDrain() { h.draining.Store(true) }

// ServeHTTP implements http.Handler.
func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if obs := h.opts.Observer; obs != nil {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		defer func() { obs.HTTPRequest(r.Method, sw.status, time.Since(start)) }()
		w = sw
	}
	if !h.policy.hostAllowed(r.Host) {
		httpError(w, http.StatusForbidden, "forbidden: Host header not allowed")
		return
	}
	if !h.policy.originAllowed(r.Header.Get("Origin"), r.Host) {
		httpError(w, http.StatusForbidden, "forbidden: Origin header not allowed")
		return
	}
	principal := ""
	if a := h.opts.Authenticator; a != nil {
		p, err := a.Authenticate(r)
		if err != nil {
			challenge := "Bearer"
			if r.Header.Get("Authorization") != "" {
				challenge = `Bearer error="invalid_token"` // RFC 6750 §3.1: no error code without credentials
			}
			w.Header().Set("WWW-Authenticate", challenge)
			httpError(w, http.StatusUnauthorized, "unauthorized: "+publicAuthError(err))
			return
		}
		principal = p
	}
	switch r.Method {
	case http.MethodPost:
		h.servePost(w, r, principal)
	case http.MethodGet:
		h.serveGet(w, r, principal)
	case http.MethodDelete:
		h.serveDelete(w, r, principal)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		httpError(w, http.StatusMethodNotAllowed, "method not allowed: use POST, GET or DELETE")
	}
}

// session finds the session a request names, answering 400 or 404 itself
// when it cannot. A session created by another principal is reported as
// not found, exactly as an unknown one.
func (h *HTTPHandler) session(w http.ResponseWriter, r *http.Request, principal string) (*session.Ref, bool) {
	id := r.Header.Get(HeaderSessionID)
	if id == "" {
		httpError(w, http.StatusBadRequest, "bad request: the Mcp-Session-Id header is required")
		return nil, false
	}
	ref, ok := h.host.Session(id)
	if !ok || ref.Principal() != principal || ref.Closed() {
		httpError(w, http.StatusNotFound, "session not found")
		return nil, false
	}
	return ref, true
}

// checkVersion answers 400 for an MCP-Protocol-Version we do not speak. A
// missing header means 2025-03-26.
func checkVersion(w http.ResponseWriter, r *http.Request) (string, bool) {
	v := r.Header.Get(HeaderProtocolVersion)
	if v == "" {
		return messages.Version20250326, true
	}
	if !messages.IsSupportedVersion(v) {
		httpError(w, http.StatusBadRequest, "bad request: unsupported MCP-Protocol-Version "+quote(v))
		return "", false
	}
	return v, true
}

func (h *HTTPHandler) serveDelete(w http.ResponseWriter, r *http.Request, principal string) {
	if _, ok := checkVersion(w, r); !ok {
		return
	}
	ref, ok := h.session(w, r, principal)
	if !ok {
		return
	}
	ref.Send(&messages.CloseSession{Reason: "deleted by the client"})
	select {
	case <-ref.Done():
	case <-r.Context().Done():
	}
	w.WriteHeader(http.StatusNoContent)
}

// accepts reports whether the Accept header admits media type mt.
func accepts(r *http.Request, mt string) bool {
	major, _, _ := strings.Cut(mt, "/")
	for _, v := range r.Header.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			t, _, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			if t == mt || t == "*/*" || t == major+"/*" {
				return true
			}
		}
	}
	return false
}

// prefersSSE reports whether the client ranks text/event-stream above
// application/json: a higher q-value, or the same one and listed first. Such
// a client gets even a lone response as an event stream.
func prefersSSE(r *http.Request) bool {
	var sseQ, jsonQ float64 = -1, -1
	sseFirst := false
	for _, v := range r.Header.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			t, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			q := 1.0
			if s, ok := params["q"]; ok {
				if f, err := strconv.ParseFloat(s, 64); err == nil {
					q = f
				}
			}
			switch t {
			case "text/event-stream":
				if sseQ < 0 {
					sseQ, sseFirst = q, jsonQ < 0
				}
			case "application/json":
				if jsonQ < 0 {
					jsonQ = q
				}
			}
		}
	}
	return sseQ > jsonQ || (sseQ == jsonQ && sseFirst && sseQ > 0)
}

// httpError answers with status and a JSON-RPC error body without an ID.
func httpError(w http.ResponseWriter, status int, msg string) {
	code := int64(messages.CodeInvalidRequest)
	if status >= 500 {
		code = messages.CodeInternalError
	}
	writeJSON(w, status, messages.EncodeError(messages.ID{}, &messages.Error{Code: code, Message: msg}))
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
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

// statusWriter records the status code for the Observer.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the real writer.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
