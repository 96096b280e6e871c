package session

import (
	"errors"

	"github.com/mcp-actors/mcp-actors/actors/dispatcher"
)

// ErrSessionClosed fails calls that were pending, or are made, after the
// session ended.
var ErrSessionClosed = errors.New("session: closed")

// ErrCapability is returned, wrapped with the capability's name, when a
// handler asks for a client feature the client did not declare. Nothing is
// sent to the client.
var ErrCapability = errors.New("session: client did not declare the capability")

// ErrProgressNotIncreasing is returned by Progress when the value is not
// higher than the last one reported for the request (the spec requires
// progress to increase with every notification).
var ErrProgressNotIncreasing = errors.New("session: progress must increase")

// ErrDataLimit is returned by PutData when the key or value is too large, or
// the session's data store is full, or the session's durable State would
// be larger than Limits.MaxStateBytes; the error says which, and the
// bound.
var ErrDataLimit = errors.New("session: data limit exceeded")

// ErrInvalidElicitTarget is returned by Elicit when the target is not a
// non-nil pointer to a flat struct.
var ErrInvalidElicitTarget = errors.New("session: elicitation target must be a non-nil pointer to a flat struct")

// ErrRemoteCancelled is returned by a server-to-client call that the client
// cancelled with notifications/cancelled.
var ErrRemoteCancelled = dispatcher.ErrRemoteCancelled

// ClientError is the client's JSON-RPC error answer to a server-to-client
// request; see dispatcher.ClientError.
type ClientError = dispatcher.ClientError

// ErrNoSession is returned by the data store's methods (PutData, GetData,
// DeleteData) for a request of the modern era (2026-07-28), which has no
// session: state that spans requests is the server's own, named by an
// identifier the client passes.
var ErrNoSession = errors.New("session: a request of protocol 2026-07-28 has no session (no per-session data store)")

// ErrNoInput is returned by Elicit, CreateMessage and ListRoots while
// serving a modern request whose method cannot ask the client for input:
// only tools/call, prompts/get and resources/read can.
var ErrNoInput = errors.New("session: this request cannot ask the client for input (only tools/call, prompts/get and resources/read can)")
