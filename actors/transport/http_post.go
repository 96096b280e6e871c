package transport

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"time"

	"github.com/mcp-actors/mcp-actors/actors/session"
	"github.com/mcp-actors/mcp-actors/messages"
)

// servePost handles one client message (or, on 2025-03-26, a batch).
func (h *HTTPHandler) servePost(w http.ResponseWriter, r *http.Request, principal string) {
	if ct, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || ct != "application/json" {
		httpError(w, http.StatusUnsupportedMediaType, "unsupported media type: Content-Type must be application/json")
		return
	}
	if !accepts(r, "application/json") || !accepts(r, "text/event-stream") {
		httpError(w, http.StatusNotAcceptable, "not acceptable: the Accept header must list application/json and text/event-stream")
		return
	}
	version, ok := checkVersion(w, r)
	if !ok {
		return
	}
	// A client that trickles its body is cut off (slow loris).
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(h.opts.WriteTimeout))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			httpError(w, http.StatusRequestEntityTooLarge, "request body too large")
			return
		}
		httpError(w, http.StatusBadRequest, "bad request: could not read the body")
		return
	}
	if messages.IsBatch(body) {
		h.serveBatch(w, r, principal, version, body)
		return
	}
	msg, derr := messages.Decode(body)
	if derr != nil {
		writeJSON(w, http.StatusBadRequest, messages.EncodeError(idOf(msg), derr))
		return
	}
	if msg.Kind() == messages.KindRequest && msg.Method == messages.MethodInitialize {
		h.initialize(w, r, principal, msg)
		return
	}
	ref, ok := h.session(w, r, principal)
	if !ok {
		return
	}
	switch msg.Kind() {
	case messages.KindRequest:
		sink := newHTTPSink(h.opts.StreamQueue)
		ref.Send(&messages.HandleRequest{Msg: msg, Sink: sink})
		h.respond(w, r, ref, sink)
	case messages.KindNotification:
		ref.Send(&messages.HandleNotification{Msg: msg})
		w.WriteHeader(http.StatusAccepted)
	default:
		ref.Send(&messages.DeliverResponse{Msg: msg})
		w.WriteHeader(http.StatusAccepted)
	}
}

// initialize spawns a session for an initialize request and answers with
// its Mcp-Session-Id. A failed initialize leaves no session behind.
func (h *HTTPHandler) initialize(w http.ResponseWriter, r *http.Request, principal string, msg *messages.Message) {
	if r.Header.Get(HeaderSessionID) != "" {
		httpError(w, http.StatusBadRequest, "bad request: initialize must not carry an Mcp-Session-Id header")
		return
	}
	if h.draining.Load() || h.host.LiveSessions() >= h.opts.MaxSessions {
		w.Header().Set("Retry-After", "5")
		httpError(w, http.StatusServiceUnavailable, "service unavailable: too many sessions, retry later")
		return
	}
	ref, err := h.host.NewSessionWith(session.SpawnOptions{Principal: principal, Resumable: true})
	if err != nil {
		w.Header().Set("Retry-After", "5")
		httpError(w, http.StatusServiceUnavailable, "service unavailable: cannot start a session")
		return
	}
	sink := newHTTPSink(h.opts.StreamQueue)
	ref.Send(&messages.HandleRequest{Msg: msg, Sink: sink})
	frames, _, ok := sink.wait(r.Context())
	if !ok || len(frames) == 0 {
		ref.Send(&messages.CloseSession{Reason: "initialize not answered"})
		if ok {
			httpError(w, http.StatusInternalServerError, "internal error")
		}
		return
	}
	if m, derr := messages.Decode(frames[0].Data); derr != nil || m.Error != nil {
		ref.Send(&messages.CloseSession{Reason: "initialize failed"})
	} else {
		w.Header().Set(HeaderSessionID, ref.ID())
	}
	writeJSON(w, http.StatusOK, frames[0].Data)
}

// respond writes what the session sends for one request: a JSON body when
// the response is all there is, an SSE stream otherwise. When the client
// goes away the stream is only detached: the request goes on, and the
// client may resume it with Last-Event-ID.
func (h *HTTPHandler) respond(w http.ResponseWriter, r *http.Request, ref *session.Ref, sink *httpSink) {
	ctx := r.Context()
	frames, closed, ok := sink.wait(ctx)
	if !ok {
		ref.Send(&messages.DetachStream{Sink: sink})
		return
	}
	if len(frames) == 0 { // closed before anything was sent
		if ref.Closed() {
			httpError(w, http.StatusNotFound, "session not found")
			return
		}
		// The client cancelled the request, so there is no response to
		// send; 404 would tell it that its session is gone. (A session
		// closing at this very moment may land here too; an event stream
		// that ends is a fine answer for that as well.)
		_ = newSSEWriter(w, &h.opts).start(w.Header())
		return
	}
	if f := frames[0]; f.End && f.EventID == "" && !prefersSSE(r) {
		writeJSON(w, http.StatusOK, f.Data)
		return
	}
	sse := newSSEWriter(w, &h.opts)
	if err := sse.start(w.Header()); err != nil {
		ref.Send(&messages.DetachStream{Sink: sink})
		return
	}
	for {
		end, err := sse.write(frames)
		if err != nil {
			ref.Send(&messages.DetachStream{Sink: sink})
			return
		}
		if end || closed {
			return
		}
		if frames, closed, ok = sink.wait(ctx); !ok {
			ref.Send(&messages.DetachStream{Sink: sink})
			return
		}
	}
}

// idOf returns the ID of a message that failed to decode, when readable.
func idOf(m *messages.Message) messages.ID {
	if m == nil {
		return messages.ID{}
	}
	return m.ID
}
