package messages

import (
	"strconv"
	"time"
)

// This file holds the messages that transports, the server and the cluster
// send to a session actor, and the events a session sends back to the
// streams that carry its frames to the client. Every one is plain data:
// no Go object (a channel, a sink, a context) travels inside one, so each
// can cross a node as it is (see codec.go for their encoding).

// StreamID names one stream: the body of one HTTP response (a POST's
// answer, a GET's event stream), or the reader of a stdio or harness
// session. The node that holds the connection registers the stream under
// this ID, and a session addresses its frames to it; see StreamEvent.
//
// An ID is never given twice, not even by a node that restarted under
// the same name: Boot is drawn at random for each run of a node's stream
// registry, and N counts up within it. A frame addressed to a stream of
// an earlier run finds no stream, rather than another client's.
type StreamID struct {
	// Node is the node that holds the stream ("" in a process that is no
	// cluster node).
	Node string
	// Boot names the run of the node's stream registry that gave the ID:
	// random, never 0 for an ID a registry gave.
	Boot uint64
	// N is the stream's number within its node's run; 0 is no stream.
	N uint64
}

// IsZero reports whether id names no stream.
func (id StreamID) IsZero() bool { return id.N == 0 }

// String returns "node/boot/N" (boot in hex), leaving out an empty node
// and a zero boot.
func (id StreamID) String() string {
	s := strconv.FormatUint(id.N, 10)
	if id.Boot != 0 {
		s = strconv.FormatUint(id.Boot, 16) + "/" + s
	}
	if id.Node != "" {
		s = id.Node + "/" + s
	}
	return s
}

// Frame is one message from a session to its client, already encoded.
type Frame struct {
	// EventID names the frame within its stream when the stream can be
	// resumed (Streamable HTTP); empty otherwise.
	EventID string
	// Data is one encoded JSON-RPC message. It is never mutated after the
	// frame has been delivered. A frame with an EventID and no Data is a
	// priming event: the stream has become resumable and the client may
	// reconnect with that ID.
	Data []byte
	// End marks the last frame of a request's stream: its response.
	End bool
}

// StreamSignal says what a StreamEvent carries.
type StreamSignal uint8

// The stream signals. Every one but SignalFrame, SignalAttached and
// SignalResumed ends the stream: nothing follows it.
const (
	// SignalFrame: Frame is a frame for the client.
	SignalFrame StreamSignal = iota
	// SignalAttached answers AttachStream: the session's standalone stream
	// has the connection, and its frames follow.
	SignalAttached
	// SignalResumed answers AttachStream with a Last-Event-ID of a
	// request's stream: it has the connection, the frames that followed
	// the event are replayed, and the stream ends with the request's
	// response.
	SignalResumed
	// SignalConflict answers AttachStream: the session's standalone
	// stream has a live connection already (HTTP 409).
	SignalConflict
	// SignalClosed: the session ends the stream (the request's response
	// went out, the request was cancelled, the session closed, or the
	// client must reconnect with Last-Event-ID).
	SignalClosed
	// SignalNotFound: there is no such session for the sender — it never
	// existed, it has ended, or it belongs to another principal (HTTP 404).
	SignalNotFound
)

// String names the signal.
func (s StreamSignal) String() string {
	switch s {
	case SignalFrame:
		return "frame"
	case SignalAttached:
		return "attached"
	case SignalResumed:
		return "resumed"
	case SignalConflict:
		return "conflict"
	case SignalClosed:
		return "closed"
	case SignalNotFound:
		return "not-found"
	}
	return "signal(" + strconv.Itoa(int(s)) + ")"
}

// Ends reports whether the signal ends its stream.
func (s StreamSignal) Ends() bool { return s > SignalResumed }

// StreamEvent is what a session sends to one of its streams: a frame for
// the client or a signal. Events for one stream arrive in the order the
// session sent them.
type StreamEvent struct {
	Stream StreamID
	// Session is the session that sends the event: a stream takes events
	// only from the session it was registered for.
	Session string
	Signal  StreamSignal
	Frame   Frame // with SignalFrame
	// Epoch is the epoch of the session's owner that sent the event (how
	// many times the session was taken over, plus one; 0: unknown, on
	// one node or from a release before it). The node holding the stream
	// drops an event of a lower epoch than one it already took for the
	// stream: a late event of an owner that lost the session.
	Epoch uint64
}

// ActorMessage is the sealed set of messages a session actor accepts from
// outside its package.
type ActorMessage interface{ actorMessage() }

// HandleRequest asks a session to handle a client request. Frames that
// belong to the request (progress, logs, server-to-client requests made by
// its handler, and finally the response) go to Stream; a zero Stream means
// the session's standalone stream (stdio). Principal is who sent the
// request, as the transport authenticated it: a session bound to another
// principal answers SignalNotFound.
type HandleRequest struct {
	Principal string
	Msg       *Message
	Stream    StreamID
	Trace     Trace // the trace the request is part of (zero: none)
}

// Trace is a W3C trace context (https://www.w3.org/TR/trace-context/): the
// traceparent and tracestate of the span a message was sent from, so that
// the spans made for it on the next node join the same trace.
type Trace struct {
	Parent string // traceparent, e.g. 00-<trace ID>-<span ID>-01; "" for none
	State  string // tracestate
}

// HandleNotification hands a session a client notification.
type HandleNotification struct {
	Principal string
	Msg       *Message
}

// DeliverResponse hands a session the client's answer (result or error) to a
// server-to-client request.
type DeliverResponse struct {
	Principal string
	Msg       *Message
}

// AttachStream gives a stream a connection. Without LastEventID it is the
// session's standalone stream (traffic not tied to a client request), and
// the frames that waited for a connection follow; with LastEventID it is
// the stream that event belongs to, after the frames that followed it are
// replayed (an ID the session no longer knows opens the standalone stream
// instead). The session answers on Stream first: SignalAttached,
// SignalResumed, SignalConflict or SignalNotFound.
type AttachStream struct {
	Principal   string
	Stream      StreamID
	LastEventID string
}

// DetachStream tells the session that Stream's connection is gone: its
// transport saw the client go, or the node named in Stream got a frame
// for it and holds no such stream (any more: it restarted, say). The
// stream it carried stays resumable; nothing is cancelled.
type DetachStream struct{ Stream StreamID }

// NotifyClient asks a session to send an encoded notification on its
// standalone stream, once open. When URI is set, only a session subscribed to
// that resource sends it.
type NotifyClient struct {
	Data []byte
	URI  string
}

// DeleteSession is the client's request to end its session (HTTP DELETE):
// the session closes unless Principal is not its own.
type DeleteSession struct {
	Principal string
}

// CloseSession ends a session: pending server-to-client calls fail, running
// handlers are cancelled and streams close. With a Grace period the session
// drains first: pending server-to-client calls fail at once (the client
// will not answer them), new requests are refused, and the handlers already
// running get up to Grace to finish and send their responses.
//
// With Handover the session ends only here: its node is shutting down (or
// it was restored twice), and another node is to take it over from its
// durable state, so the session is not forgotten by the cluster.
type CloseSession struct {
	Reason   string
	Grace    time.Duration
	Handover bool
}

func (*HandleRequest) actorMessage()      {}
func (*HandleNotification) actorMessage() {}
func (*DeliverResponse) actorMessage()    {}
func (*AttachStream) actorMessage()       {}
func (*DetachStream) actorMessage()       {}
func (*NotifyClient) actorMessage()       {}
func (*DeleteSession) actorMessage()      {}
func (*CloseSession) actorMessage()       {}
