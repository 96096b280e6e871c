package transport

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-actors/mcp-actors/actors/router"
	"github.com/mcp-actors/mcp-actors/internal/tracing"
	"github.com/mcp-actors/mcp-actors/messages"
)

// ModernServer serves the requests of the modern era (2026-07-28 on),
// which name no session: session.Modern.
type ModernServer interface {
	// Serve serves req, sending its frames to req.Stream; ctx is the
	// client's request (its end before the answer cancels it).
	Serve(ctx context.Context, req *messages.ModernRequest)
}

// SetModern makes the handler serve modern requests with m, beside the
// sessions of the legacy era on the same endpoint (nil: legacy only, and
// a modern request is refused as before). Call it before serving.
func (h *HTTPHandler) SetModern(m ModernServer) { h.modern = m }

// Header names of the modern era's request metadata.
const (
	HeaderMethod      = "Mcp-Method"
	HeaderName        = "Mcp-Name"
	headerParamPrefix = "Mcp-Param-"
)

// isModern reports whether a POSTed message is of the modern era: it
// names no session and says it is modern in its MCP-Protocol-Version
// header (an initialize too, which that era does not have), or, not
// being an initialize, in its params._meta.
func (h *HTTPHandler) isModern(x *exchange, msg *messages.Message, hv string) bool {
	if h.modern == nil || x.r.Header.Get(HeaderSessionID) != "" {
		return false
	}
	if messages.LooksModern(hv) {
		return true // initialize too: the modern era has no such method
	}
	if msg.Kind() == messages.KindRequest && msg.Method == messages.MethodInitialize {
		return false
	}
	if msg.Kind() != messages.KindRequest {
		return false
	}
	_, ok := messages.ModernVersionOf(msg.Params)
	return ok
}

// postModern serves one POSTed message of the modern era: statelessly,
// on this node, its answer on the request's own stream.
func (h *HTTPHandler) postModern(x *exchange, msg *messages.Message, hv string) {
	switch msg.Kind() {
	case messages.KindNotification:
		// Over HTTP a modern client cancels by closing the stream; a
		// notification changes nothing.
		h.reply(x, http.StatusAccepted, nil)
		return
	case messages.KindResponse:
		h.refuse(x, http.StatusBadRequest, messages.ID{}, messages.Errorf(messages.CodeInvalidRequest,
			"invalid request: protocol %s has no server-to-client requests to answer (answer input requests with inputResponses on a retry)", hv))
		return
	}
	meta, perr := messages.ParseRequestMeta(msg.Params)
	if perr != nil {
		h.refuse(x, http.StatusBadRequest, msg.ID, perr)
		return
	}
	if e := checkModernHeaders(x.r.Header, msg, meta, hv); e != nil {
		h.refuse(x, http.StatusBadRequest, msg.ID, e)
		return
	}
	q := router.NewQueue(x.r.Context(), h.opts.StreamQueue, nil)
	sid := h.router.Streams().Register(messages.ModernStreams, q)
	defer h.router.Streams().Unregister(sid)
	ctx := x.r.Context()
	if h.tracer != nil {
		var span trace.Span
		ctx, span = h.tracer.Start(tracing.FromClient(ctx, x.r.Header, msg), "mcp.request "+msg.Method, trace.SpanKindServer,
			tracing.AttrMethod.String(msg.Method))
		defer span.End()
	}
	h.modern.Serve(ctx, &messages.ModernRequest{
		Principal: x.principal, Msg: msg, Meta: meta, Stream: sid, ParamHeaders: paramHeaders(x.r.Header),
	})
	h.respondModern(x, q)
}

// checkModernHeaders checks the headers that mirror a modern request's
// body: MCP-Protocol-Version (then the version itself), Mcp-Method, and
// Mcp-Name for the methods that name something.
func checkModernHeaders(hd http.Header, msg *messages.Message, meta *messages.RequestMeta, hv string) *messages.Error {
	if hv == "" {
		return messages.HeaderMismatchError("the MCP-Protocol-Version header is required")
	}
	if hv != meta.ProtocolVersion {
		return messages.HeaderMismatchError("MCP-Protocol-Version header value %s does not match body value %s", quote(hv), quote(meta.ProtocolVersion))
	}
	if !messages.IsModernVersion(meta.ProtocolVersion) {
		return messages.UnsupportedVersionError(meta.ProtocolVersion)
	}
	method, ok := hd[HeaderMethod]
	switch {
	case !ok:
		return messages.HeaderMismatchError("the Mcp-Method header is required")
	case len(method) != 1 || method[0] != msg.Method:
		return messages.HeaderMismatchError("Mcp-Method header value %s does not match body value %s", quote(strings.Join(method, ",")), quote(msg.Method))
	}
	var field string
	switch msg.Method {
	case messages.MethodCallTool, messages.MethodGetPrompt:
		field = "name"
	case messages.MethodReadResource:
		field = "uri"
	default:
		return nil
	}
	names, ok := hd[HeaderName]
	if !ok {
		return messages.HeaderMismatchError("the Mcp-Name header is required for %s", msg.Method)
	}
	var value string
	good := len(names) == 1
	if good {
		value, good = DecodeHeaderValue(names[0])
	}
	if !good {
		return messages.HeaderMismatchError("the Mcp-Name header is malformed")
	}
	body := meta.Name
	if field == "uri" {
		body = meta.URI
	}
	if value != body {
		return messages.HeaderMismatchError("Mcp-Name header value %s does not match body value %s", quote(value), quote(body))
	}
	return nil
}

// DecodeHeaderValue decodes a value of Mcp-Name or Mcp-Param-{name}: as
// it is when it is plain (visible ASCII, space and tab, no space at
// either end), or from its Base64 sentinel form "=?base64?…?=". ok is
// false for a malformed value.
func DecodeHeaderValue(v string) (string, bool) {
	if len(v) >= len("=?base64??=") && strings.HasPrefix(v, "=?base64?") && strings.HasSuffix(v, "?=") {
		// Only the whole sentinel is decoded; anything else is literal.
		b, err := base64.StdEncoding.DecodeString(v[len("=?base64?") : len(v)-len("?=")])
		if err != nil {
			return "", false
		}
		return string(b), true
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c > 0x7e {
			return "", false
		}
	}
	return v, true
}

// noParamHeaders is what paramHeaders returns for a request without
// any: empty, not nil (nil says the transport has no headers, as stdio).
var noParamHeaders = map[string]string{}

// paramHeaders returns the Mcp-Param-{name} headers by name in lower
// case.
func paramHeaders(hd http.Header) map[string]string {
	out := noParamHeaders
	for k, vs := range hd {
		if len(k) > len(headerParamPrefix) && strings.EqualFold(k[:len(headerParamPrefix)], headerParamPrefix) {
			if len(out) == 0 {
				out = make(map[string]string)
			}
			out[strings.ToLower(k[len(headerParamPrefix):])] = strings.Join(vs, ",")
		}
	}
	return out
}

// respondModern writes the answer of a modern request: a JSON body when
// the response is all there is (with the HTTP status its error calls
// for), an event stream otherwise. Nothing is resumable: when the client
// goes away the request is cancelled (the ModernServer watches its
// context).
func (h *HTTPHandler) respondModern(x *exchange, q *router.Queue) {
	ctx := x.r.Context()
	batch, ok := q.Wait(ctx)
	if !ok {
		return
	}
	var buf [4]messages.Frame
	frames, end := collect(buf[:0], batch)
	if len(frames) == 0 {
		h.startSSE(x) // ended without an answer: another retry took the request over
		return
	}
	if f := frames[0]; f.End && !prefersSSE(x.r) {
		h.reply(x, modernStatus(f.Data), f.Data)
		return
	}
	ew := h.startSSE(x)
	// A long stream (subscriptions/listen, a slow tool) carries a
	// keep-alive comment when quiet.
	var ping <-chan time.Time
	if h.opts.KeepAlive > 0 {
		t := time.NewTicker(h.opts.KeepAlive)
		defer t.Stop()
		ping = t.C
	}
	for {
		if len(frames) > 0 || end != messages.SignalFrame {
			if err := ew.write(frames, false, end != messages.SignalFrame); err != nil || end != messages.SignalFrame {
				return
			}
		}
		select {
		case <-q.Wake():
			frames, end = collect(frames[:0], q.Take())
		case <-ping:
			if ew.write(nil, true, false) != nil {
				return
			}
			frames, end = frames[:0], messages.SignalFrame
		case <-ctx.Done():
			return
		}
	}
}

// modernStatus is the HTTP status of a modern request's only frame: 404
// for an unknown method, 400 for the errors the revision says are 400
// (header mismatch, missing capability, unsupported version), 200
// otherwise.
func modernStatus(data []byte) int {
	if !bytes.Contains(data, []byte(`,"error":{`)) { // a result: no need to decode
		return http.StatusOK
	}
	m, derr := messages.Decode(data)
	if derr != nil || m.Error == nil {
		return http.StatusOK
	}
	switch m.Error.Code {
	case messages.CodeMethodNotFound:
		return http.StatusNotFound
	case messages.CodeHeaderMismatch, messages.CodeMissingClientCapability, messages.CodeUnsupportedProtocolVersion:
		return http.StatusBadRequest
	}
	return http.StatusOK
}
