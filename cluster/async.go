package cluster

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/mcp-actors/mcp-actors/actors/router"
	"github.com/mcp-actors/mcp-actors/actors/session"
	"github.com/mcp-actors/mcp-actors/messages"
)

// A client request for another node's session whose stream is held here
// goes without waiting for a reply: what the session answers comes back
// on the request's stream anyway, and the client is told nothing before.
// The message names a reply subject of this node and the stream; the owner
// answers there when it could not deliver (no such session, it moved), and
// acknowledges there a request it accepted but has not answered within
// ackDelay (acks.go); the NATS server answers there ("no responders") when
// nobody listens on the owner's subject (it is gone). A request not
// delivered is delivered again as Deliver would — after a takeover, or to
// the node it moved to — or its stream is told what happened. Messages the
// client is told were delivered (202: notifications, answers) are
// acknowledged before the client is answered. On the usual path each
// routed request crosses one route and its answer comes back.
//
//	Deliver(HandleRequest) ──publish, reply=async.<stream>──▶ owner ──(answered soon: its answer is the ack)
//	    ◀── ack / not-found / moved / no responders ── async.<stream> ──▶ done, redeliver, or the stream is told

// sendAsync sends request m, whose stream this node holds, to owner.
func (r *relay) sendAsync(owner, id string, m *messages.HandleRequest) error {
	data, err := messages.EncodeActorMessage(m)
	if err != nil {
		return err
	}
	msg := nats.NewMsg(r.node.subj.session(owner))
	msg.Header.Set(headerSession, id)
	msg.Header.Set(headerOp, opAsync)
	msg.Reply = r.asyncReply + asyncToken(m.Stream)
	msg.Data = data
	r.track(owner, id, m, len(data)) // first: a complaint finds it
	r.stats.routed.Add(1)
	if err := r.chunks.publish(msg); err != nil {
		r.remote.Delete(m.Stream)
		return err
	}
	return nil
}

// asyncToken is the last token of the reply subject of a request whose
// stream is sid: "<boot>-<n>", the boot in hex, so that a complaint about
// a request sent before this node restarted matches no stream of this run.
func asyncToken(sid messages.StreamID) string {
	return strconv.FormatUint(sid.Boot, 16) + "-" + strconv.FormatUint(sid.N, 10)
}

// asyncStream reads the stream of this node's run that a reply subject
// names (asyncToken); false for another run's, or a subject not of ours.
func (r *relay) asyncStream(subject string) (messages.StreamID, bool) {
	boot, n, ok := strings.Cut(subject[strings.LastIndexByte(subject, '.')+1:], "-")
	if !ok {
		return messages.StreamID{}, false
	}
	b, err := strconv.ParseUint(boot, 16, 64)
	if err != nil || b != r.streams.Boot() {
		return messages.StreamID{}, false
	}
	sid := messages.StreamID{Node: r.node.ID(), Boot: b}
	if sid.N, err = strconv.ParseUint(n, 10, 64); err != nil {
		return messages.StreamID{}, false
	}
	return sid, true
}

// onAsyncReply handles the owner's answer to a request sent without
// waiting: an acknowledgement, or a complaint.
func (r *relay) onAsyncReply(reply *nats.Msg) {
	sid, ok := r.asyncStream(reply.Subject)
	if !ok {
		return
	}
	v, ok := r.remote.Load(sid)
	if !ok {
		return // the sid is done, or was taken care of
	}
	rs := v.(*remoteStream)
	err := replyErr(reply)
	var held *heldError
	if errors.As(err, &held) {
		r.holdLonger(sid, rs, held.wait)
		return
	}
	if err == nil {
		if rs.req != nil {
			r.accepted(sid, rs)
		}
		return
	}
	if rs.req == nil || rs.redelivering {
		return // accepted before, or already being delivered again
	}
	claimed, ok := r.claim(sid, rs)
	if !ok {
		return // heard of meanwhile
	}
	r.node.log.Debug("a request sent without waiting was not delivered", "session", rs.session, "owner", rs.owner, "err", err)
	// Off the subscription's goroutine: a takeover waits for a lease.
	r.goBackground(func() { r.redeliver(claimed, err) })
}

// redeliver delivers again a request that its owner did not get (err
// says why), or tells its stream why it cannot be. rs is claimed (claim):
// until the request goes again, what its owner sends for it still counts.
// The owner may have taken it after all, late — its route was slow, or
// held in a partition and let go at the heal — and answered it while
// the redelivery waited for its lease to lapse: then the request ran, its
// client has the answer, and it is not delivered again (it would run
// twice). Only a request of which nothing was heard, whose client still
// waits, goes again.
func (r *relay) redeliver(rs *remoteStream, err error) {
	ctx, cancel := context.WithTimeout(r.ctx, 2*deliverTimeout+2*r.node.leaseTTL())
	defer cancel()
	next, err := r.reroute(ctx, rs.session, rs.owner, err)
	if !r.release(rs) {
		r.node.log.Info("a request about to be delivered again was heard of meanwhile: not delivered again", "session", session.LogID(rs.session), "owner", rs.owner)
		return
	}
	if err == nil && next != "" {
		r.setOwner(rs.session, next)
		err = r.Deliver(ctx, rs.session, rs.req)
	}
	switch {
	case err == nil:
	case errors.Is(err, router.ErrSessionNotFound):
		r.streams.Deliver(messages.StreamEvent{Stream: rs.req.Stream, Session: rs.session, Signal: messages.SignalNotFound})
	default:
		r.endRequest(rs.req.Stream, rs.session, rs.reqID, fmt.Sprintf("the session could not be reached (%v); send the request again", err))
	}
}

// remoteStream is a stream held here for a request or a GET whose session
// another node owns. It is immutable: a change stores a new one.
type remoteStream struct {
	owner   string
	session string
	reqID   messages.ID             // the request's ID; zero for a GET stream
	req     *messages.HandleRequest // the request, until the owner accepted it (acks.go)
	sent    time.Time               // when the request was sent
	// ackBound is how long the owner has to acknowledge it (acks.go).
	ackBound time.Duration
	// redelivering marks a request claimed for delivery again (claim):
	// nothing but an event from its owner, or the end of its client,
	// acts on it until the redelivery releases it.
	redelivering bool
}

// claim marks rs, the request of stream sid, as being delivered again,
// unless it changed meanwhile. The claim stays in place while the
// redelivery waits (for a lease to lapse, a takeover), so that an answer
// or acknowledgement its owner sends late still ends it or marks it
// accepted (heard), which release sees.
func (r *relay) claim(sid messages.StreamID, rs *remoteStream) (*remoteStream, bool) {
	next := *rs
	next.redelivering = true
	return &next, r.remote.CompareAndSwap(sid, rs, &next)
}

// release ends claim rs: true when nothing was heard of its request since
// it was claimed and its client still waits on the stream here; then the
// request may be delivered again, or its stream told why not.
func (r *relay) release(rs *remoteStream) bool {
	sid := rs.req.Stream
	return r.remote.CompareAndDelete(sid, rs) && r.streams.Holds(sid)
}
