package messages

// This file holds the messages that transports, the server and the cluster
// send to a session actor, and the Sink through which a session hands frames
// back to whoever holds the client's connection.

// Frame is one message from a session to its client, already encoded.
type Frame struct {
	// EventID names the frame within its stream when the stream can be
	// resumed (Streamable HTTP); empty otherwise.
	EventID string
	// Data is one encoded JSON-RPC message. It is never mutated after the
	// frame has been delivered.
	Data []byte
	// End marks the last frame of a request's stream: its response.
	End bool
}

// Sink receives a session's frames for one stream: the stream of one client
// request, or the session's standalone stream. A session calls Deliver and
// Close from its actor, so both must return at once; a sink that cannot keep
// up must drop or close, never block. Close ends the stream; nothing is
// delivered after it.
type Sink interface {
	Deliver(f Frame)
	Close()
}

// ActorMessage is the sealed set of messages a session actor accepts from
// outside its package.
type ActorMessage interface{ actorMessage() }

// HandleRequest asks a session to handle a client request. Frames that
// belong to the request (progress, logs, server-to-client requests made by
// its handler, and finally the response) go to Sink; a nil Sink means the
// session's standalone stream.
type HandleRequest struct {
	Msg  *Message
	Sink Sink
}

// HandleNotification hands a session a client notification.
type HandleNotification struct{ Msg *Message }

// DeliverResponse hands a session the client's answer (result or error) to a
// server-to-client request.
type DeliverResponse struct{ Msg *Message }

// AttachStream makes Sink the session's standalone stream, the one that
// carries traffic not tied to a client request. A stream already attached is
// closed.
type AttachStream struct{ Sink Sink }

// DetachStream removes Sink as the standalone stream if it still is.
type DetachStream struct{ Sink Sink }

// NotifyClient asks a session to send an encoded notification on its
// standalone stream, once open. When URI is set, only a session subscribed to
// that resource sends it.
type NotifyClient struct {
	Data []byte
	URI  string
}

// CloseSession ends a session: pending server-to-client calls fail, running
// handlers are cancelled and streams close.
type CloseSession struct{ Reason string }

func (*HandleRequest) actorMessage()      {}
func (*HandleNotification) actorMessage() {}
func (*DeliverResponse) actorMessage()    {}
func (*AttachStream) actorMessage()       {}
func (*DetachStream) actorMessage()       {}
func (*NotifyClient) actorMessage()       {}
func (*CloseSession) actorMessage()       {}
