package messages

import (
	"errors"
	"time"
)

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
// Close from its actor, so both must return at once. Deliver reports
// whether the sink took the frame: a sink that cannot keep up (or whose
// connection is gone) refuses it, and the session stops using it — the
// frame stays in the session's event log when the stream is resumable.
// Close ends the connection; nothing is delivered after it.
//
// A frame with an EventID and no Data is a priming event: the stream has
// become resumable and the client may reconnect with that ID.
type Sink interface {
	Deliver(f Frame) bool
	Close()
}

// Runner is implemented by sinks whose transport has a goroutine waiting
// for the request's answer anyway (an HTTP handler): the session may hand
// it the request's handler to run there, saving two hand-overs between
// goroutines. job returns the encoded response when the transport may write
// it itself (the handler sent nothing else on the request's stream), and nil
// when the response comes through Deliver as usual. A frame delivered while
// job runs must still reach the client at once (the handler may be waiting
// for the client's answer to it): the transport streams it from another
// goroutine. Run reports whether the transport takes the job; it must not
// run job itself (it is called on the session actor) and must not block.
type Runner interface {
	Run(job func() []byte) bool
}

// InlineStreamer is implemented by Runners whose transport writes the
// frames delivered while a job runs from the goroutine that delivers them,
// with no goroutine of its own: any request may run there, whatever it
// sends (a transport that needs a second goroutine to stream leaves that
// choice to the session's inline policy).
type InlineStreamer interface {
	StreamsInline() bool
}

// Suspender is what a transport that runs handlers inline may offer them
// (see Runner): a way to wait for the client without holding a thread.
// A handler's call to the client suspends its goroutine with Suspend
// and is brought back by Resume once the answer, a cancellation or the
// session's end is there; meanwhile the thread goes on serving other
// requests, and the goroutine that reads the answer runs the handler on
// without waking another.
//
// Suspend returns false, at once, when it cannot suspend the calling
// goroutine (not the one running the handler inline): the caller then
// blocks as usual. When it returns true the caller was resumed, or a
// Resume was already due; it checks again what it waits for, and may
// suspend again. Resume may be called from any goroutine, at any time,
// more than once; a Resume with nothing suspended makes the next Suspend
// return at once.
type Suspender interface {
	Suspend() bool
	Resume()
}

// Suspending is implemented by Runners that can suspend the jobs they run
// (Suspender): Suspender returns the one for the job running now, or nil.
type Suspending interface {
	Suspender() Suspender
}

// StallReporter is implemented by Runners whose transport notices a job
// that holds its goroutine too long (it blocks in a way Suspender cannot
// suspend, or computes): Stalled, called by the job when it is done,
// reports whether it did. The session then runs that handler elsewhere
// from then on (see session.InlinePolicy).
type StallReporter interface {
	Stalled() bool
}

// ErrStreamActive answers AttachStream for a standalone stream that already
// has a live connection (HTTP 409).
var ErrStreamActive = errors.New("messages: the stream already has a connection")

// ErrUnknownEvent answers AttachStream for a Last-Event-ID the session does
// not know (never issued, or its stream is gone).
var ErrUnknownEvent = errors.New("messages: unknown event ID")

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

// AttachStream gives a stream a connection. Without LastEventID it is the
// session's standalone stream (traffic not tied to a client request), and
// the frames that waited for a connection follow; with LastEventID it is
// the stream that event belongs to, after the frames that followed it are
// replayed. The outcome goes to Result when it is not nil: nil,
// ErrStreamActive, ErrUnknownEvent, or an error saying the session ended.
type AttachStream struct {
	Sink        Sink
	LastEventID string
	Result      chan<- error
}

// DetachStream tells the session that Sink's connection is gone. The
// stream it carried stays resumable; nothing is cancelled.
type DetachStream struct{ Sink Sink }

// NotifyClient asks a session to send an encoded notification on its
// standalone stream, once open. When URI is set, only a session subscribed to
// that resource sends it.
type NotifyClient struct {
	Data []byte
	URI  string
}

// CloseSession ends a session: pending server-to-client calls fail, running
// handlers are cancelled and streams close. With a Grace period the session
// drains first: pending server-to-client calls fail at once (the client
// will not answer them), new requests are refused, and the handlers already
// running get up to Grace to finish and send their responses.
type CloseSession struct {
	Reason string
	Grace  time.Duration
}

func (*HandleRequest) actorMessage()      {}
func (*HandleNotification) actorMessage() {}
func (*DeliverResponse) actorMessage()    {}
func (*AttachStream) actorMessage()       {}
func (*DetachStream) actorMessage()       {}
func (*NotifyClient) actorMessage()       {}
func (*CloseSession) actorMessage()       {}
