// Package router is how messages reach sessions and frames reach streams.
//
// A transport sees one small interface, Router: open a session, check
// that a principal may use one (does it exist, whose is it), deliver a
// message to it, and register the streams that carry frames back. It never
// holds a session; it names it by ID. A stream (a POST's answer, a GET's
// event stream, a stdio or harness reader) is registered with the node's
// Streams registry under a messages.StreamID, and sessions address their
// frames to that ID.
//
//	transport ──Open / Check / Deliver(id, msg)──▶ Router ──▶ session actor (here, or on its node)
//	    ▲                                                         │
//	    └── Receiver ◀── Streams (this node) ◀── DeliverStream ◀──┘
//
// Local is the implementation for one process: a map lookup and a direct
// send. A cluster implements Router over NATS with the same transports and
// session actors.
package router

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcp-actors/mcp-actors/actors/session"
	"github.com/mcp-actors/mcp-actors/messages"
)

// Router is what a transport needs from the node it runs on. Its methods
// are safe for concurrent use.
type Router interface {
	// Open starts a session for a client's initialize and returns its ID.
	// It fails with ErrDraining while the node shuts down and with
	// ErrTooManySessions at the node's limit.
	Open(ctx context.Context, o OpenOptions) (string, error)
	// Check reports whether session id exists: nil, or ErrSessionNotFound.
	// Whose it is, the delivery that follows checks, once, where the
	// session runs: every message from a client carries its principal.
	Check(ctx context.Context, id string) error
	// Deliver hands m to session id, or fails with ErrSessionNotFound (or,
	// from a router that carries messages between nodes, with
	// ErrMessageTooLarge). What the session answers goes to the streams m
	// names.
	Deliver(ctx context.Context, id string, m messages.ActorMessage) error
	// DeliverStream hands ev to the stream it names, on whichever node
	// holds it, and reports whether it was taken (see session.StreamSink).
	DeliverStream(ev messages.StreamEvent) bool
	// StreamGone reports whether the client of a stream of this node has
	// gone; streams elsewhere report false.
	StreamGone(id messages.StreamID) bool
	// Streams is this node's stream registry, where transports register
	// the streams they hold.
	Streams() *Streams
}

// OpenOptions describe a session to open.
type OpenOptions struct {
	// Principal is who opens it; every message for the session must come
	// from the same principal ("" when unauthenticated).
	Principal string
	// Resumable makes the session keep an event log so that a client can
	// resume a stream with Last-Event-ID (Streamable HTTP).
	Resumable bool
	// Restore, for a session taken over from a lost node, is the state it
	// starts in (see Local.Restore); nil for a new session.
	Restore *session.State
}

// Registered is what a node knows of one of its sessions (Local.Lookup).
type Registered struct {
	// Principal is who opened the session.
	Principal string
	// ProtocolVersion is the revision the session agreed on at
	// initialize ("" before).
	ProtocolVersion string
}

// ErrSessionNotFound reports a session that does not exist, or exists no
// longer. Transports answer it as they answer an unknown session ID (404).
var ErrSessionNotFound = errors.New("router: session not found")

// ErrOtherPrincipal refuses a message for a session another principal
// opened. It is an ErrSessionNotFound: the client learns nothing more than
// of an unknown session.
var ErrOtherPrincipal = fmt.Errorf("%w: another principal's", ErrSessionNotFound)

// ErrUnavailable wraps the reason a node cannot serve a session, or open
// one, right now (it lost its storage quorum, or its lease): the client
// may try again, here or elsewhere (503 with Retry-After).
var ErrUnavailable = errors.New("router: unavailable")

// ErrMessageTooLarge is returned, wrapped with the sizes, by Deliver for a
// message too large to reach its session (a cluster bounds what one node
// sends another). Transports answer it as a body too large (413).
var ErrMessageTooLarge = errors.New("router: message too large to reach its session")

// ErrDraining is returned by Open while the node shuts down (503).
var ErrDraining = errors.New("router: the node is draining")

// ErrTooManySessions is returned by Open when the node holds as many
// sessions as it may (503).
var ErrTooManySessions = errors.New("router: too many sessions")

// ErrMemoryFull is returned, wrapped with the figures, by Open when the
// node's memory has no room for another session (503): an
// ErrTooManySessions.
var ErrMemoryFull = fmt.Errorf("%w: memory near its limit", ErrTooManySessions)
