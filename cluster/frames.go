package cluster

import (
	"errors"

	"github.com/nats-io/nats.go"

	"github.com/mcp-actors/mcp-actors/actors/router"
	"github.com/mcp-actors/mcp-actors/messages"
)

// Stream events: what sessions send to their streams, delivered here when
// this node holds the stream, published to the node that holds it
// otherwise; and what other nodes' sessions send to the streams held here.

// DeliverStream implements router.Router and session.StreamSink. An event for
// another node's stream is published to that node: it is reported taken,
// and the holder tells the session if the stream turns out to be gone
// (streams.go). Every event carries the epoch of the session's owner
// that sends it (streams.go).
func (r *relay) DeliverStream(ev messages.StreamEvent) bool {
	if e := r.entryOf(ev.Session); e != nil {
		ev.Epoch = e.Epoch // the edge drops what an earlier owner sends late
	} else if ep, ok := r.givenUp.Load(ev.Session); ok {
		ev.Epoch = ep.(uint64) // a session given up, closing
	}
	if r.fenced() {
		var ok bool
		if ev, ok = fencedEvent(ev); !ok {
			return true // dropped: this node must not speak for the session now
		}
	}
	if ev.Stream.Node == r.node.ID() {
		return r.streams.Deliver(ev)
	}
	defer r.answered(ev) // after the event is on its way: a digest follows it
	if endsModern(ev) {
		defer r.fwd.end(ev.Stream) // a forwarded request answered is over here
	}
	if r.acked(ev) {
		r.stats.framesOut.Add(1)
		return true // in the forwarded request's reply
	}
	data, err := messages.EncodeStreamEvent(ev)
	if err != nil {
		r.node.log.Error("encoding a stream event failed", "stream", ev.Stream.String(), "err", err)
		return false
	}
	err = r.chunks.publish(&nats.Msg{Subject: r.node.subj.stream(ev.Stream.Node), Data: data})
	if errors.Is(err, router.ErrMessageTooLarge) {
		return r.deliverTooLarge(ev, len(data))
	}
	if err != nil {
		r.node.log.Warn("sending a stream event failed", "stream", ev.Stream.String(), "err", err)
		return false
	}
	r.stats.framesOut.Add(1)
	return true
}

// onStream receives an event for one of this node's streams (streams.go).
func (r *relay) onStream(msg *nats.Msg) {
	if msg.Header != nil && msg.Header.Get(headerOp) == opRunning {
		r.onDigest(msg)
		return
	}
	ev, err := messages.DecodeStreamEvent(msg.Data)
	if err != nil {
		r.node.log.Warn("dropping a stream event that cannot be read", "err", err)
		return
	}
	r.received(ev)
}

// received takes ev, from another node, to its stream here.
func (r *relay) received(ev messages.StreamEvent) {
	r.stats.framesIn.Add(1)
	r.heard(ev)
	if endsModern(ev) {
		r.fwdOpen.Delete(ev.Stream) // answered: its node ends it (modern.go)
	}
	r.onStreamEvent(ev)
}

// fencedEvent is what a node whose lease may have lapsed sends in place of
// ev: nothing for a frame that is not a response (false), a JSON-RPC error
// for a response (the client sends the request again, to whichever node
// owns the session by then), and a signal as it is.
func fencedEvent(ev messages.StreamEvent) (messages.StreamEvent, bool) {
	if ev.Signal != messages.SignalFrame {
		return ev, true
	}
	return responseError(ev, "this node may no longer own the session (its lease lapsed): send the request again")
}

// responseError returns ev, a request's response (the last frame of its
// stream), with a JSON-RPC error (-32603, why) in place of the response,
// and true; false for any other event.
func responseError(ev messages.StreamEvent, why string) (messages.StreamEvent, bool) {
	if ev.Signal != messages.SignalFrame || !ev.Frame.End {
		return ev, false
	}
	m, derr := messages.Decode(ev.Frame.Data)
	if derr != nil || (m.Kind() != messages.KindResponse && m.Kind() != messages.KindError) {
		return ev, false
	}
	ev.Frame = messages.Frame{End: true, Data: messages.EncodeError(m.ID, messages.Errorf(messages.CodeInternalError, "%s", why))}
	return ev, true
}

// StreamGone implements router.Router and session.StreamSink. A stream held
// by another node reads as gone: a client that opens a GET stream on
// another node than its last one has moved (a load balancer sent it
// elsewhere), and its new stream takes the old one's place.
func (r *relay) StreamGone(id messages.StreamID) bool {
	if id.Node == r.node.ID() {
		return r.streams.Gone(id)
	}
	return true
}
