package session

import (
	"context"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"fmt"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-actors/mcp-actors/actors/dispatcher"
	"github.com/mcp-actors/mcp-actors/internal/tracing"
	"github.com/mcp-actors/mcp-actors/messages"
)

// Session is the handle a handler gets for the session its request came
// from. It holds no session state: every method posts a message to the
// session actor (and, for calls, waits for the answer). It is safe for
// concurrent use.
type Session struct {
	ref  *Ref          // nil serving a modern request
	info *Info         // nil serving a modern request
	req  *requestScope // nil outside a request (roots listeners)
	mod  *modernCall   // the modern request served (nil in a session)
}

// requestScope is what a Session knows about the request it serves.
type requestScope struct {
	id       messages.ID
	method   string
	token    messages.ID
	hasToken bool

	mu       sync.Mutex // guards last and reported: handlers may report from several goroutines
	last     float64
	reported bool
}

// ID returns the session ID ("" serving a modern request, which has no
// session).
func (s *Session) ID() string {
	if s.mod != nil {
		return ""
	}
	return s.ref.id
}

// ProtocolVersion returns the negotiated protocol revision (for a modern
// request, the request's).
func (s *Session) ProtocolVersion() string {
	if s.mod != nil {
		return s.mod.meta().ProtocolVersion
	}
	return s.info.ProtocolVersion
}

// ClientInfo returns the client's name and version from initialize (for
// a modern request, from the request's _meta).
func (s *Session) ClientInfo() messages.Implementation {
	if s.mod != nil {
		return s.mod.meta().ClientInfo
	}
	return s.info.ClientInfo
}

// ClientCapabilities returns what the client declared at initialize (for
// a modern request, in the request's _meta). The value is shared: do not
// modify it.
func (s *Session) ClientCapabilities() *messages.ClientCapabilities {
	if s.mod != nil {
		return &s.mod.meta().Capabilities
	}
	return &s.info.ClientCapabilities
}

// RequestID returns the ID of the client request being served (zero outside
// a request).
func (s *Session) RequestID() messages.ID {
	if s.mod != nil {
		return s.mod.turnNow().id
	}
	if s.req == nil {
		return messages.ID{}
	}
	return s.req.id
}

// route is where frames this handle sends belong.
func (s *Session) route() messages.ID { return s.RequestID() }

// Log sends notifications/message to the client if level passes the level
// the client set with logging/setLevel (for a modern request, the
// request's logLevel; none without one). data is any JSON-marshallable
// value.
func (s *Session) Log(ctx context.Context, level messages.LoggingLevel, logger string, data any) error {
	if !level.Valid() {
		return fmt.Errorf("session: unknown logging level %q", level)
	}
	raw, err := messages.Marshal(data)
	if err != nil {
		return fmt.Errorf("session: encoding log data: %w", err)
	}
	frame, err := messages.EncodeNotification(messages.MethodLogMessage,
		&messages.LoggingMessageParams{Level: level, Logger: logger, Data: raw})
	if err != nil {
		return fmt.Errorf("session: encoding log message: %w", err)
	}
	if err := s.ready(ctx); err != nil {
		return err
	}
	if s.mod != nil {
		if lv := s.mod.meta().LogLevel; lv != "" && level.Rank() >= lv.Rank() {
			s.mod.send(frame)
		}
		return nil
	}
	s.ref.post(&sendLog{route: s.route(), rank: level.Rank(), data: frame})
	return nil
}

// Progress reports progress on the request being served. It does nothing
// when the client gave no progress token. total 0 means unknown. The value
// must increase from one report to the next; otherwise
// ErrProgressNotIncreasing is returned and nothing is sent.
func (s *Session) Progress(ctx context.Context, progress, total float64, message string) error {
	token, ok := s.progressToken()
	if !ok {
		return nil
	}
	if err := s.ready(ctx); err != nil {
		return err
	}
	s.req.mu.Lock()
	defer s.req.mu.Unlock()
	if s.req.reported && progress <= s.req.last {
		return fmt.Errorf("%w: %v after %v", ErrProgressNotIncreasing, progress, s.req.last)
	}
	p := &messages.ProgressParams{ProgressToken: token, Progress: progress, Message: message}
	if total > 0 {
		p.Total = &total
	}
	frame, err := messages.EncodeNotification(messages.MethodProgress, p)
	if err != nil {
		return fmt.Errorf("session: encoding progress: %w", err)
	}
	s.req.last, s.req.reported = progress, true
	// Posted under the lock so that reports leave in the order they passed
	// the check.
	if s.mod != nil {
		s.mod.send(frame)
		return nil
	}
	s.ref.post(&sendFrame{route: s.route(), data: frame})
	return nil
}

// progressToken is the progress token of the request being served.
func (s *Session) progressToken() (messages.ID, bool) {
	if s.mod != nil {
		m := s.mod.meta()
		return m.ProgressToken, m.HasToken
	}
	if s.req == nil || !s.req.hasToken {
		return messages.ID{}, false
	}
	return s.req.token, true
}

// CloseStream ends the connection that carries the current request's
// stream without ending the stream: on a resumable session (Streamable
// HTTP) the client reconnects with Last-Event-ID and receives what followed,
// including the response (SSE polling). Elsewhere it does nothing.
func (s *Session) CloseStream() {
	if s.req != nil && s.mod == nil {
		s.ref.post(&closeStream{route: s.req.id})
	}
}

// ready fails when ctx has ended or the session has.
func (s *Session) ready(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.mod != nil {
		return nil
	}
	if s.ref.Closed() {
		return ErrSessionClosed
	}
	return nil
}

// call sends a server-to-client request on this request's stream and waits
// for the answer; see dispatcher.Client.Call.
func (s *Session) call(ctx context.Context, method string, params any, opts ...dispatcher.CallOption) (jsontext.Value, error) {
	if s.mod != nil {
		ctx, span := tracing.ChildOf(ctx, "mcp.client_call "+method, trace.SpanKindClient, tracing.AttrMethod.String(method))
		res, err := s.mod.input(ctx, method, params)
		tracing.EndError(span, err)
		return res, err
	}
	if s.ref.Closed() {
		return nil, fmt.Errorf("calling %q: %w", method, ErrSessionClosed)
	}
	opts = append(opts, dispatcher.WithRoute(s.route()))
	ctx, span := tracing.ChildOf(ctx, "mcp.client_call "+method, trace.SpanKindClient, tracing.AttrMethod.String(method))
	res, err := s.ref.client.Call(ctx, method, params, opts...)
	tracing.EndError(span, err)
	return res, err
}

// callInto makes a call and decodes its result into out.
func (s *Session) callInto(ctx context.Context, method string, params, out any) error {
	raw, err := s.call(ctx, method, params)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, out); err != nil {
		// The client's fault, told without Go type names: a handler may
		// show it.
		return fmt.Errorf("calling %q: the client's result: %s", method, messages.DecodeErrorText(err))
	}
	return nil
}

// PutData stores value under key in the session's bounded data store. The
// value is copied. ErrDataLimit reports a key, value or store too large.
func (s *Session) PutData(ctx context.Context, key string, value []byte) error {
	_, err := s.dataOp(ctx, &dataOp{op: dataPut, key: key, value: append([]byte{}, value...)})
	return err
}

// GetData returns a copy of the value stored under key; found is false when
// there is none.
func (s *Session) GetData(ctx context.Context, key string) (value []byte, found bool, err error) {
	r, err := s.dataOp(ctx, &dataOp{op: dataGet, key: key})
	if err != nil || !r.found {
		return nil, false, err
	}
	return append([]byte{}, r.value...), true, nil
}

// DeleteData removes key; a missing key is not an error.
func (s *Session) DeleteData(ctx context.Context, key string) error {
	_, err := s.dataOp(ctx, &dataOp{op: dataDelete, key: key})
	return err
}

func (s *Session) dataOp(ctx context.Context, op *dataOp) (dataReply, error) {
	if s.mod != nil {
		return dataReply{}, ErrNoSession
	}
	if err := s.ready(ctx); err != nil {
		return dataReply{}, err
	}
	op.reply = make(chan dataReply, 1)
	s.ref.post(op)
	select {
	case r := <-op.reply:
		return r, r.err
	case <-ctx.Done():
		return dataReply{}, ctx.Err()
	case <-s.ref.Done():
		return dataReply{}, ErrSessionClosed
	}
}

// listenerIDs numbers roots listeners process-wide.
var listenerIDs atomic.Uint64
