package session

import (
	"bytes"
	"context"
	json "encoding/json/v2"
	"errors"
	"log/slog"
	"runtime/debug"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-actors/mcp-actors/internal/tracing"
	"github.com/mcp-actors/mcp-actors/messages"
)

// maxSubscriptions bounds the resources one session may subscribe to.
const maxSubscriptions = 4096

// handleRequest answers lifecycle requests on the actor and starts a handler
// goroutine for everything else.
func (a *sessionActor) handleRequest(req *messages.Message, conn messages.StreamID, tr messages.Trace) {
	obs := a.cfg.Observer
	var start time.Time
	if obs != nil {
		start = time.Now()
	}
	reply := func(frame []byte, outcome Outcome) {
		if obs != nil {
			obs.RequestHandled(newReport(req, outcome, time.Since(start)))
		}
		a.streams.send(a.streams.open(conn, req.ID), frame, true)
	}
	fail := func(e *messages.Error) { reply(messages.EncodeError(req.ID, e), OutcomeError) }
	ok := func() {
		frame, _ := messages.EncodeResult(req.ID, emptyResult)
		reply(frame, OutcomeOK)
	}

	switch req.Method {
	case messages.MethodInitialize:
		frame, err := a.initialize(req)
		if err != nil {
			fail(err)
			return
		}
		a.persist(func(err error) {
			if err != nil {
				fail(messages.Errorf(messages.CodeInternalError, "the session could not be stored: %v; initialize again", err))
				return
			}
			reply(frame, OutcomeOK)
		})
		return
	case messages.MethodPing:
		ok()
		return
	}
	if a.state == stateNew {
		fail(messages.Errorf(messages.CodeInvalidRequest, "invalid request: the session is not initialized; send initialize first"))
		return
	}
	if a.draining != nil {
		fail(messages.Errorf(messages.CodeInvalidRequest, "invalid request: the session is closing"))
		return
	}
	if _, ran := a.ranBefore[req.ID]; ran {
		// Delivered again after its node was lost, which may have run it
		// to its end: at most once, so its outcome is unknown.
		delete(a.ranBefore, req.ID)
		fail(messages.Errorf(messages.CodeInternalError,
			"internal error: the node running this request was lost; it may have taken effect before"))
		return
	}
	switch req.Method {
	case messages.MethodSetLevel:
		var p messages.SetLevelParams
		if err := decodeParams(req.Params, &p); err != nil {
			fail(err)
			return
		}
		if !p.Level.Valid() {
			fail(messages.Errorf(messages.CodeInvalidParams, "invalid params: unknown logging level %q", p.Level))
			return
		}
		a.logRank, a.logLevel = p.Level.Rank(), p.Level
		a.persist(durableReply(ok, fail))
		return
	case messages.MethodSubscribe, messages.MethodUnsubscribe:
		if err := a.subscribe(req); err != nil {
			fail(err)
			return
		}
		a.persist(durableReply(ok, fail))
		return
	}

	if _, dup := a.inflight[req.ID]; dup {
		fail(messages.Errorf(messages.CodeInvalidRequest, "invalid request: request id %s is already in use", req.ID.Raw()))
		return
	}
	if len(a.inflight) >= a.lim.MaxInflight {
		fail(messages.Errorf(messages.CodeInternalError, "too many concurrent requests on this session (limit %d)", a.lim.MaxInflight))
		return
	}
	// Not a child of any session context: registering with a parent costs
	// a map insert and delete per request; close cancels every in-flight
	// request itself. In a cluster it is a child of the node's lease,
	// which ends at the node's deadline, before any other node may take
	// the session over (Config.Acting).
	parent := context.Background()
	if a.cfg.Acting != nil {
		parent = a.cfg.Acting()
	}
	ctx, cancel := context.WithCancel(parent)
	a.inflight[req.ID] = &inflight{cancel: cancel, stream: a.streams.open(conn, req.ID)}
	sess, cfg, log := a.newSession(req), a.cfg, a.log
	job := func() { serve(ctx, cfg, sess, req, log, start) }
	if t := cfg.Tracer; t != nil && tr.Parent != "" {
		var span trace.Span
		ctx, span = t.Start(tracing.Extract(ctx, tr), "mcp.handle "+req.Method, trace.SpanKindInternal,
			tracing.AttrMethod.String(req.Method), tracing.AttrSession.String(LogID(a.ref.id)))
		job = func() {
			serve(ctx, cfg, sess, req, log, start)
			span.End()
		}
	}
	if cfg.Go != nil {
		cfg.Go(job)
	} else {
		go job()
	}
}

// durableReply answers a request that changed the State once the change
// is durable: ok, or a JSON-RPC error saying it may not be.
func durableReply(ok func(), fail func(*messages.Error)) func(error) {
	return func(err error) {
		if err != nil {
			fail(messages.Errorf(messages.CodeInternalError, "%v; try again", err))
			return
		}
		ok()
	}
}

// subscribe handles resources/subscribe and resources/unsubscribe.
func (a *sessionActor) subscribe(req *messages.Message) *messages.Error {
	var p messages.SubscribeParams
	if err := decodeParams(req.Params, &p); err != nil {
		return err
	}
	if p.URI == "" {
		return messages.Errorf(messages.CodeInvalidParams, `invalid params: "uri" is required`)
	}
	if req.Method == messages.MethodUnsubscribe {
		delete(a.subs, p.URI)
		return nil
	}
	if _, ok := a.subs[p.URI]; !ok && len(a.subs) >= maxSubscriptions {
		return messages.Errorf(messages.CodeInvalidRequest, "too many subscriptions on this session (limit %d)", maxSubscriptions)
	} else if !ok && a.lim.MaxStateBytes > 0 {
		// The subscriptions are part of the durable state, which must
		// fit in one write (as PutData's values).
		size, err := a.stateSize("", nil)
		u, _ := json.Marshal(p.URI)
		if err == nil && size+len(u)+1 > a.lim.MaxStateBytes {
			return messages.Errorf(messages.CodeInvalidRequest, "the session's durable state cannot take this subscription: it would take %d bytes, and must fit in %d", size+len(u)+1, a.lim.MaxStateBytes)
		}
	}
	if a.subs == nil {
		a.subs = make(map[string]struct{})
	}
	a.subs[p.URI] = struct{}{}
	return nil
}

// newSession builds the handle a request's handler receives.
func (a *sessionActor) newSession(req *messages.Message) *Session {
	rs := &requestScope{id: req.ID, method: req.Method}
	if bytes.Contains(req.Params, []byte(`"progressToken"`)) {
		var p struct {
			Meta messages.Meta `json:"_meta"`
		}
		if json.Unmarshal(req.Params, &p) == nil {
			rs.token, rs.hasToken = p.Meta.ProgressToken()
		}
	}
	return &Session{ref: a.ref, info: a.info, req: rs}
}

// newReport is the Observer's report of req. It decodes the tool name of a
// tools/call (the name only: arguments are not decoded), so it is called
// only when there is an Observer.
func newReport(req *messages.Message, outcome Outcome, d time.Duration) RequestReport {
	r := RequestReport{Method: req.Method, Outcome: outcome, Duration: d}
	if req.Method == messages.MethodCallTool {
		var p messages.CallToolParams
		if messages.DecodeParams(req.Params, &p) == nil {
			r.Tool = p.Name
		}
	}
	return r
}

// serve runs a handler off the mailbox, on a goroutine of its own, and
// reports its response to the session with a message. A panic in the
// handler is logged and answered with an internal error: it harms neither
// the session nor the node. start is when the request reached the session
// (zero without an Observer).
//
// A tool result with isError true is sent as the result it is, and
// reported to the Observer as OutcomeError.
func serve(ctx context.Context, cfg *Config, s *Session, req *messages.Message, log *slog.Logger, start time.Time) {
	var frame []byte
	outcome := OutcomeError
	defer func() {
		if p := recover(); p != nil {
			log.Error("handler panicked", "session", LogID(s.ref.id), "method", req.Method, "panic", p, "stack", string(debug.Stack()))
			frame = messages.EncodeError(req.ID, messages.ErrInternal)
			outcome = OutcomeError
		}
		// Read before requestDone: the session releases the request's
		// context once it has the response, which would read as cancelled.
		if ctx.Err() != nil && !s.ref.Closed() {
			outcome = OutcomeCancelled
		}
		if obs := cfg.Observer; obs != nil {
			obs.RequestHandled(newReport(req, outcome, time.Since(start)))
		}
		s.ref.post(&requestDone{id: req.ID, frame: frame})
	}()
	res, err := cfg.Handler.Serve(ctx, s, req)
	if err == nil {
		if frame, err = messages.EncodeResult(req.ID, res); err == nil {
			outcome = OutcomeOK
			if r, ok := res.(*messages.CallToolResult); ok && r.IsError {
				outcome = OutcomeError // a tool's own failure: sent as a result
			}
			return
		}
		log.Error("encoding a result failed", "session", LogID(s.ref.id), "method", req.Method, "err", err)
		err = messages.ErrInternal
	}
	var wire *messages.Error
	if !errors.As(err, &wire) {
		if ctx.Err() == nil {
			log.Error("handler failed", "session", LogID(s.ref.id), "method", req.Method, "err", err)
		}
		wire = messages.ErrInternal
	}
	frame = messages.EncodeError(req.ID, wire)
}

// requestDone sends a finished handler's response on its stream, unless the
// client cancelled the request.
func (a *sessionActor) requestDone(m *requestDone) {
	inf := a.inflight[m.id]
	if inf == nil {
		return
	}
	delete(a.inflight, m.id)
	inf.cancel()
	if inf.cancelled {
		if st := inf.stream; st != nil {
			a.streams.silence(st)
		}
		return
	}
	a.streams.send(inf.stream, m.frame, true)
}

// handleNotification applies a client notification.
func (a *sessionActor) handleNotification(n *messages.Message) {
	switch n.Method {
	case messages.MethodInitialized:
		a.open()
	case messages.MethodCancelled:
		var p messages.CancelledParams
		if decodeParams(n.Params, &p) != nil {
			return
		}
		if inf := a.inflight[p.RequestID]; inf != nil {
			inf.cancelled = true
			inf.cancel()
			return
		}
		a.table.HandleCancelled(&p)
	case messages.MethodProgress:
		var p messages.ProgressParams
		if decodeParams(n.Params, &p) == nil {
			a.table.HandleProgress(&p)
		}
	case messages.MethodRootsListChanged:
		a.rootsChanged()
	default:
		a.log.Debug("ignoring notification", "method", n.Method)
	}
}

// sendLog sends a log notification that passes the session's level.
func (a *sessionActor) sendLog(m *sendLog) {
	if m.rank < a.logRank {
		return
	}
	a.send(m.route, m.data)
}
