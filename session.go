package mcpactors

import (
	"context"
	"time"

	"github.com/mcp-actors/mcp-actors/actors/session"
	"github.com/mcp-actors/mcp-actors/messages"
)

// Session is the handle a handler gets for the session its request came
// from: what the client declared, notifications to it (Log, Progress),
// calls to it (Elicit, ElicitURL, CreateMessage, ListRoots) and the
// session's own data store. It holds no session state: each method posts
// a message to the session's actor and, for a call, waits for the answer.
// It is safe for concurrent use, and valid after the handler returns only
// for OnRootsChanged's unregister.
//
// A request of protocol 2026-07-28 (Modern) has no session: the same
// methods read the request's _meta and ask the client for input through
// Multi Round-Trip Requests; ID is "" and the data store is refused
// (ErrNoSession).
type Session session.Session

// of returns the session package's handle behind s.
func (s *Session) of() *session.Session { return (*session.Session)(s) }

// ID returns the session ID ("" serving a request of protocol 2026-07-28,
// which has no session).
func (s *Session) ID() string { return s.of().ID() }

// ProtocolVersion returns the negotiated protocol revision (for a request
// of protocol 2026-07-28, the request's).
func (s *Session) ProtocolVersion() string { return s.of().ProtocolVersion() }

// ClientInfo returns the client's name and version from initialize (for a
// request of protocol 2026-07-28, from the request's _meta).
func (s *Session) ClientInfo() messages.Implementation { return s.of().ClientInfo() }

// ClientCapabilities returns what the client declared at initialize (for
// a request of protocol 2026-07-28, in the request's _meta). The value is
// shared: do not modify it.
func (s *Session) ClientCapabilities() *messages.ClientCapabilities {
	return s.of().ClientCapabilities()
}

// RequestID returns the ID of the client request being served (zero
// outside a request: in a roots listener).
func (s *Session) RequestID() messages.ID { return s.of().RequestID() }

// Modern reports whether the request served is of protocol 2026-07-28 or
// later, which has no session.
func (s *Session) Modern() bool { return s.of().Modern() }

// StartedBy returns, serving a request of protocol 2026-07-28, what the
// request that started this run of the handler said as the runtime read
// it on arrival (its protocol _meta, the name or URI and arguments, and
// _meta whole), also after a retry, which the other methods read. Nil in
// a session.
func (s *Session) StartedBy() *messages.RequestMeta { return s.of().StartedBy() }

// Log sends notifications/message to the client if level passes the level
// the client set with logging/setLevel (for a request of protocol
// 2026-07-28, the request's logLevel; none without one). data is any
// JSON-marshallable value.
func (s *Session) Log(ctx context.Context, level messages.LoggingLevel, logger string, data any) error {
	return s.of().Log(ctx, level, logger, data)
}

// Progress reports progress on the request being served. It does nothing
// when the client gave no progress token. total 0 means unknown. The value
// must increase from one report to the next; otherwise
// ErrProgressNotIncreasing is returned and nothing is sent.
func (s *Session) Progress(ctx context.Context, progress, total float64, message string) error {
	return s.of().Progress(ctx, progress, total, message)
}

// CloseStream ends the connection that carries the current request's
// stream without ending the stream: on a resumable session (Streamable
// HTTP) the client reconnects with Last-Event-ID and receives what
// followed, the response included (SSE polling). Elsewhere it does
// nothing.
func (s *Session) CloseStream() { s.of().CloseStream() }

// PutData stores a copy of value under key in the session's bounded data
// store, which a cluster keeps durable with the session. ErrDataLimit
// reports a key, value or store too large (Limits).
func (s *Session) PutData(ctx context.Context, key string, value []byte) error {
	return s.of().PutData(ctx, key, value)
}

// GetData returns a copy of the value stored under key; found is false
// when there is none.
func (s *Session) GetData(ctx context.Context, key string) (value []byte, found bool, err error) {
	return s.of().GetData(ctx, key)
}

// DeleteData removes key; a missing key is not an error.
func (s *Session) DeleteData(ctx context.Context, key string) error {
	return s.of().DeleteData(ctx, key)
}

// Elicit asks the user, through the client, to fill a form (form-mode
// elicitation). target is a non-nil pointer to a flat struct: the form's
// JSON Schema comes from its fields' json and jsonschema tags. On accept
// the answer is validated against that schema and decoded into target,
// which is left untouched on decline, cancel or a bad answer. It returns
// the user's action; ErrInvalidElicitTarget for a target that makes no
// form, ErrCapability when the client did not declare elicitation.
func (s *Session) Elicit(ctx context.Context, message string, target any, opts ...ElicitOption) (messages.ElicitAction, error) {
	return s.of().Elicit(ctx, message, target, opts...)
}

// ElicitForm sends elicitation/create with params as given (form mode
// unless params.Mode is "url") and returns the client's answer
// unvalidated. The client must have declared the matching elicitation
// capability.
func (s *Session) ElicitForm(ctx context.Context, params *messages.ElicitParams) (*messages.ElicitResult, error) {
	return s.of().ElicitForm(ctx, params)
}

// ElicitURL asks the user, through the client, to open the page url(id)
// for an out-of-band step (an OAuth flow, a payment, a secret typed out
// of the client's sight), and returns once the step is done: when the
// page's handler calls Server.CompleteElicitation with id and the
// principal of this request, on any node. It returns early with the
// user's decline or cancel, or ctx's end. The client must have declared
// elicitation.url. For a request of protocol 2026-07-28, a retry that
// comes before the step is done waits for it up to
// Options.URLElicitationWait, then the client is asked again (same URL,
// same id).
func (s *Session) ElicitURL(ctx context.Context, message string, url func(id string) string) (messages.ElicitAction, error) {
	return s.of().ElicitURL(ctx, message, url)
}

// CreateMessage asks the client to sample a message from its model
// (sampling/createMessage). Tools and ToolChoice need the client's
// sampling.tools capability, and an IncludeContext other than "none" its
// sampling.context; without them nothing is sent and the error names the
// capability (ErrCapability).
func (s *Session) CreateMessage(ctx context.Context, p *messages.CreateMessageParams) (*messages.CreateMessageResult, error) {
	return s.of().CreateMessage(ctx, p)
}

// ListRoots returns the client's roots. The answer is cached until the
// client sends notifications/roots/list_changed; FreshRoots bypasses the
// cache. A client without the roots capability gets nothing sent, and the
// error names the capability (ErrCapability).
func (s *Session) ListRoots(ctx context.Context, opts ...RootsOption) ([]*messages.Root, error) {
	return s.of().ListRoots(ctx, opts...)
}

// OnRootsChanged registers fn to run after each
// notifications/roots/list_changed, after the listeners registered before
// it, one after another, off the session's mailbox; their ctx ends with
// the session. The returned function unregisters it. A request of
// protocol 2026-07-28 has no session, and its client sends no such
// notification: fn is never called.
func (s *Session) OnRootsChanged(fn RootsListener) (unregister func()) {
	return s.of().OnRootsChanged(func(ctx context.Context, ss *session.Session) { fn(ctx, (*Session)(ss)) })
}

// RootsListener is called after the client reports that its roots
// changed (Session.OnRootsChanged).
type RootsListener func(ctx context.Context, s *Session)

// ElicitOption configures Session.Elicit.
type ElicitOption = session.ElicitOption

// WithStrictKeys makes Elicit refuse an answer with properties the form
// does not define. By default unknown properties are ignored.
func WithStrictKeys() ElicitOption { return session.WithStrictKeys() }

// WithRawCapture copies the answer's content, as decoded JSON, into dst.
func WithRawCapture(dst *map[string]any) ElicitOption { return session.WithRawCapture(dst) }

// RootsOption configures Session.ListRoots.
type RootsOption = session.RootsOption

// FreshRoots makes ListRoots ask the client even when roots are cached.
func FreshRoots() RootsOption { return session.FreshRoots() }

// The errors a Session's methods return, wrapped with details; test them
// with errors.Is.
var (
	// ErrSessionClosed fails calls that were pending, or are made, after
	// the session ended.
	ErrSessionClosed = session.ErrSessionClosed
	// ErrCapability: the handler asked for a client feature the client did
	// not declare; nothing was sent. The error names the capability.
	ErrCapability = session.ErrCapability
	// ErrProgressNotIncreasing: Progress was given a value not higher than
	// the last one reported for the request.
	ErrProgressNotIncreasing = session.ErrProgressNotIncreasing
	// ErrDataLimit: PutData's key or value is too large, the session's
	// data store is full, or its durable state would pass
	// Limits.MaxStateBytes; the error says which, and the bound.
	ErrDataLimit = session.ErrDataLimit
	// ErrInvalidElicitTarget: Elicit's target is not a non-nil pointer to
	// a flat struct.
	ErrInvalidElicitTarget = session.ErrInvalidElicitTarget
	// ErrRemoteCancelled: the client cancelled a server-to-client call
	// with notifications/cancelled.
	ErrRemoteCancelled = session.ErrRemoteCancelled
	// ErrNoSession: the data store was used serving a request of protocol
	// 2026-07-28, which has no session.
	ErrNoSession = session.ErrNoSession
	// ErrNoInput: a request other than tools/call, prompts/get and
	// resources/read of protocol 2026-07-28 asked the client for input.
	ErrNoInput = session.ErrNoInput
)

// ClientError is the client's JSON-RPC error answer to a server-to-client
// call (Elicit, CreateMessage, ListRoots); test for it with errors.As.
type ClientError = session.ClientError

// Limits bound what one session may hold. Zero fields take the defaults.
type Limits struct {
	MaxInflight  int // concurrent client requests; more get an error (default 1024)
	MaxDataKeys  int // keys in the session's data store (default 256)
	MaxDataBytes int // total bytes of keys and values in it (default 1 MiB)
	MaxKeyBytes  int // bytes of one key (default 256)
	// MaxStateBytes bounds the session's durable state (what a cluster
	// stores to restore it on another node), encoded as JSON with the data
	// store's values in base64 (0: no bound). A PutData that would make it
	// larger fails with ErrDataLimit. In a cluster (JoinCluster) it is at
	// most what one durable write carries, and that bound applies when it
	// is 0.
	MaxStateBytes int

	// MaxEvents and MaxEventBytes bound the event log of a resumable
	// session (defaults 512 events, 1 MiB). Past them the oldest events
	// are evicted and can no longer be replayed.
	MaxEvents     int
	MaxEventBytes int

	// IdleTimeout closes a session that has received nothing for this long
	// and has no request running (0: never). MaxLifetime closes it this
	// long after it started, whatever it is doing (0: never).
	IdleTimeout time.Duration
	MaxLifetime time.Duration
}
