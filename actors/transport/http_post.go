package transport

import (
	"errors"
	"io"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-actors/mcp-actors/actors/router"
	"github.com/mcp-actors/mcp-actors/internal/tracing"
	"github.com/mcp-actors/mcp-actors/messages"
)

// errBodyTooLarge reports a request body over the limit (413).
var errBodyTooLarge = errors.New("transport: request body too large")

// post handles one client message (or, on 2025-03-26, a batch).
func (h *HTTPHandler) post(x *exchange) {
	if !isJSON(x.r.Header.Get("Content-Type")) {
		h.fail(x, http.StatusUnsupportedMediaType, "unsupported media type: Content-Type must be application/json")
		return
	}
	if json, sse := acceptance(x.r); !json || !sse {
		h.fail(x, http.StatusNotAcceptable, "not acceptable: the Accept header must list application/json and text/event-stream")
		return
	}
	hv := x.r.Header.Get(HeaderProtocolVersion)
	body, err := h.body(x)
	if err != nil {
		if errors.Is(err, errBodyTooLarge) {
			h.fail(x, http.StatusRequestEntityTooLarge, "request body too large")
		} else {
			h.fail(x, http.StatusBadRequest, "bad request: could not read the body")
		}
		return
	}
	if messages.IsBatch(body) {
		if h.modern != nil && messages.LooksModern(hv) {
			h.refuse(x, http.StatusBadRequest, messages.ID{}, messages.Errorf(messages.CodeInvalidRequest,
				"invalid request: JSON-RPC batches are not supported in protocol %s", hv))
			return
		}
		if version, ok := h.version(x); ok {
			h.batch(x, version, body)
		}
		return
	}
	msg, derr := messages.Decode(body)
	if derr != nil {
		h.refuse(x, http.StatusBadRequest, idOf(msg), derr)
		return
	}
	x.mcpMethod = msg.Method
	if h.isModern(x, msg, hv) {
		h.postModern(x, msg, hv)
		return
	}
	if _, ok := h.version(x); !ok {
		return
	}
	if msg.Kind() == messages.KindRequest && msg.Method == messages.MethodInitialize {
		h.initialize(x, msg)
		return
	}
	if !h.session(x) {
		return
	}
	switch msg.Kind() {
	case messages.KindRequest:
		h.request(x, msg)
	case messages.KindNotification:
		h.deliver(x, &messages.HandleNotification{Principal: x.principal, Msg: msg})
	default:
		h.deliver(x, &messages.DeliverResponse{Principal: x.principal, Msg: msg})
	}
}

// body reads the request body, at most MaxBodyBytes, within ReadTimeout.
func (h *HTTPHandler) body(x *exchange) ([]byte, error) {
	max := h.opts.MaxBodyBytes
	if n := x.r.ContentLength; n > max {
		return nil, errBodyTooLarge
	}
	// A client that trickles its body is cut off (slow loris).
	_ = http.NewResponseController(x.w).SetReadDeadline(time.Now().Add(h.opts.ReadTimeout))
	if n := x.r.ContentLength; n >= 0 {
		b := make([]byte, n) // the decoded message keeps slices of it
		if _, err := io.ReadFull(x.r.Body, b); err != nil {
			return nil, err
		}
		return b, nil
	}
	b, err := io.ReadAll(http.MaxBytesReader(x.w, x.r.Body, max))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, errBodyTooLarge
	}
	return b, err
}

// deliver hands a notification or a response to the session and answers
// 202.
func (h *HTTPHandler) deliver(x *exchange, m messages.ActorMessage) {
	if err := h.router.Deliver(x.r.Context(), x.session, m); err != nil {
		h.routeFailed(x, err)
		return
	}
	h.reply(x, http.StatusAccepted, nil)
}

// openStream registers a stream for the exchange's answer, as one of the
// exchange's session (an initialize's too: its session is open by then).
func (h *HTTPHandler) openStream(x *exchange, wake chan struct{}) (*router.Queue, messages.StreamID) {
	q := router.NewQueue(x.r.Context(), h.opts.StreamQueue, wake)
	return q, h.router.Streams().Register(x.session, q)
}

// request hands a client request to the session and writes what comes
// back on its stream.
func (h *HTTPHandler) request(x *exchange, msg *messages.Message) {
	q, sid := h.openStream(x, nil)
	defer h.router.Streams().Unregister(sid)
	hr := &messages.HandleRequest{Principal: x.principal, Msg: msg, Stream: sid}
	if h.tracer != nil {
		ctx, span := h.tracer.Start(tracing.FromClient(x.r.Context(), x.r.Header, msg), "mcp.request "+msg.Method, trace.SpanKindServer,
			tracing.AttrMethod.String(msg.Method))
		defer span.End() // once the answer is written
		hr.Trace = tracing.Inject(ctx)
	}
	err := h.router.Deliver(x.r.Context(), x.session, hr)
	if err != nil {
		h.routeFailed(x, err)
		return
	}
	h.respond(x, q, sid)
}

// initialize opens a session for an initialize request and answers with
// its Mcp-Session-Id. A failed initialize leaves no session behind.
func (h *HTTPHandler) initialize(x *exchange, msg *messages.Message) {
	if x.r.Header.Get(HeaderSessionID) != "" {
		h.fail(x, http.StatusBadRequest, "bad request: initialize must not carry an Mcp-Session-Id header")
		return
	}
	ctx := x.r.Context()
	id, err := h.router.Open(ctx, router.OpenOptions{Principal: x.principal, Resumable: true})
	if err != nil {
		x.w.Header().Set("Retry-After", "5")
		switch {
		case errors.Is(err, router.ErrDraining):
			h.fail(x, http.StatusServiceUnavailable, "service unavailable: draining, retry on another node")
		case errors.Is(err, router.ErrMemoryFull):
			h.fail(x, http.StatusServiceUnavailable, "service unavailable: this node's memory is near its limit, retry on another node")
		case errors.Is(err, router.ErrTooManySessions):
			h.fail(x, http.StatusServiceUnavailable, "service unavailable: too many sessions, retry later")
		case errors.Is(err, router.ErrUnavailable):
			x.w.Header().Set("Retry-After", "1")
			h.fail(x, http.StatusServiceUnavailable, "service unavailable: this node cannot store a new session now ("+unwrapReason(err)+"), retry")
		default:
			h.log.Error("opening a session failed", "err", err)
			h.fail(x, http.StatusServiceUnavailable, "service unavailable: cannot open a session")
		}
		return
	}
	x.session = id
	q, sid := h.openStream(x, nil)
	defer h.router.Streams().Unregister(sid)
	closeSession := func(reason string) {
		_ = h.router.Deliver(ctx, id, &messages.CloseSession{Reason: reason})
	}
	if err := h.router.Deliver(ctx, id, &messages.HandleRequest{Principal: x.principal, Msg: msg, Stream: sid}); err != nil {
		h.fail(x, http.StatusInternalServerError, "internal error: the new session is gone")
		return
	}
	batch, ok := q.Wait(ctx)
	frames, _ := collect(nil, batch)
	if !ok || len(frames) == 0 {
		closeSession("initialize not answered")
		if ok {
			h.fail(x, http.StatusInternalServerError, "internal error")
		}
		return
	}
	if m, derr := messages.Decode(frames[0].Data); derr != nil || m.Error != nil {
		closeSession("initialize failed")
	} else {
		x.w.Header()[HeaderSessionID] = []string{id}
	}
	h.reply(x, http.StatusOK, frames[0].Data)
}

// collect appends the frames of batch to dst, and returns the signal that
// ended the stream (SignalFrame when none did; SignalAttached and
// SignalResumed are skipped).
func collect(dst []messages.Frame, batch []messages.StreamEvent) ([]messages.Frame, messages.StreamSignal) {
	for _, ev := range batch {
		switch {
		case ev.Signal == messages.SignalFrame:
			dst = append(dst, ev.Frame)
			if ev.Frame.End {
				return dst, messages.SignalClosed
			}
		case ev.Signal.Ends():
			return dst, ev.Signal
		}
	}
	return dst, messages.SignalFrame
}

// respond writes what the session sends on a request's stream: a JSON body
// when the response is all there is, an event stream otherwise. When the
// client goes away the stream is only detached: the request goes on, and
// the client may resume it with Last-Event-ID.
func (h *HTTPHandler) respond(x *exchange, q *router.Queue, sid messages.StreamID) {
	ctx := x.r.Context()
	batch, ok := q.Wait(ctx)
	if !ok {
		h.detach(x, sid)
		return
	}
	var buf [4]messages.Frame
	frames, end := collect(buf[:0], batch)
	if len(frames) == 0 {
		if end == messages.SignalNotFound {
			h.notFound(x)
			return
		}
		// Closed with nothing to say (a request the client cancelled): an
		// empty event stream, so that no response is sent.
		h.startSSE(x)
		return
	}
	if f := frames[0]; f.End && f.EventID == "" && !prefersSSE(x.r) {
		h.reply(x, http.StatusOK, f.Data)
		return
	}
	ew := h.startSSE(x)
	for {
		if err := ew.write(frames, false, end != messages.SignalFrame); err != nil {
			h.detach(x, sid)
			return
		}
		if end != messages.SignalFrame {
			return
		}
		if batch, ok = q.Wait(ctx); !ok {
			h.detach(x, sid)
			return
		}
		frames, end = collect(frames[:0], batch)
	}
}

// detach tells the session that a stream's client has gone.
func (h *HTTPHandler) detach(x *exchange, sid messages.StreamID) {
	_ = h.router.Deliver(x.r.Context(), x.session, &messages.DetachStream{Stream: sid})
}

// batch handles a JSON-RPC batch, which only revision 2025-03-26 allows (a
// missing MCP-Protocol-Version header means 2025-03-26). Its notifications
// and responses are delivered at once; its requests are answered on one
// event stream that ends when every one has been answered.
func (h *HTTPHandler) batch(x *exchange, version string, body []byte) {
	if version != messages.Version20250326 && version != messages.Version20241105 {
		h.refuse(x, http.StatusBadRequest, messages.ID{}, messages.Errorf(messages.CodeInvalidRequest,
			"invalid request: JSON-RPC batches are not supported in protocol %s", version))
		return
	}
	items, derr := messages.DecodeBatch(body)
	if derr != nil {
		h.refuse(x, http.StatusBadRequest, messages.ID{}, derr)
		return
	}
	if !h.session(x) {
		return
	}
	ctx := x.r.Context()
	wake := make(chan struct{}, 1)
	type open struct {
		q   *router.Queue
		sid messages.StreamID
	}
	var streams []open
	defer func() {
		for _, s := range streams {
			h.router.Streams().Unregister(s.sid)
		}
	}()
	// Answers to items that could not be decoded. No frame of a batch's
	// stream is marked End: the stream ends when every request is answered.
	var out []messages.Frame
	for _, raw := range items {
		m, derr := messages.Decode(raw)
		var msg messages.ActorMessage
		switch {
		case derr != nil:
			out = append(out, messages.Frame{Data: messages.EncodeError(idOf(m), derr)})
		case m.Kind() == messages.KindRequest && m.Method == messages.MethodInitialize:
			out = append(out, messages.Frame{Data: messages.EncodeError(m.ID, messages.Errorf(messages.CodeInvalidRequest,
				"invalid request: initialize cannot be part of a batch"))})
		case m.Kind() == messages.KindRequest:
			q, sid := h.openStream(x, wake)
			streams = append(streams, open{q, sid})
			msg = &messages.HandleRequest{Principal: x.principal, Msg: m, Stream: sid}
		case m.Kind() == messages.KindNotification:
			msg = &messages.HandleNotification{Principal: x.principal, Msg: m}
		default:
			msg = &messages.DeliverResponse{Principal: x.principal, Msg: m}
		}
		if msg != nil {
			if err := h.router.Deliver(ctx, x.session, msg); err != nil {
				h.routeFailed(x, err)
				return
			}
		}
	}
	if len(streams) == 0 && len(out) == 0 {
		h.reply(x, http.StatusAccepted, nil)
		return
	}
	ew := h.startSSE(x)
	waiting := append([]open(nil), streams...)
	for {
		done := len(waiting) == 0
		if len(out) > 0 || done {
			if err := ew.write(out, false, done); err != nil || done {
				if err != nil {
					for _, s := range waiting {
						h.detach(x, s.sid)
					}
				}
				return
			}
		}
		out = out[:0]
		select {
		case <-wake:
		case <-ctx.Done():
			for _, s := range waiting {
				h.detach(x, s.sid)
			}
			return
		}
		still := waiting[:0]
		for _, s := range waiting {
			frames, end := collect(nil, s.q.Take())
			for _, f := range frames {
				f.End = false // one stream for all: only the last answer ends it
				out = append(out, f)
			}
			if end == messages.SignalFrame {
				still = append(still, s)
			}
		}
		waiting = still
	}
}
