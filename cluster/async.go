package cluster

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/mcp-actors/mcp-actors/actors/router"
	"github.com/mcp-actors/mcp-actors/messages"
)

// A client request for another node's session whose stream is held here
// goes without waiting for an acknowledgement: what the session answers
// comes back on the request's stream anyway, and the client is told
// nothing before. The message names a reply subject of this node and the
// stream; the owner answers there only when it could not deliver (no such
// session, it moved), and the NATS server answers there ("no responders")
// when nobody listens on the owner's subject (it is gone). Either way the
// request is delivered again as Deliver would — after a takeover, or to
// the node it moved to — or its stream is told what happened. Messages
// the client is told were delivered (202: notifications, answers) are
// still acknowledged. On the usual path each routed request crosses one
// route and its answer comes back: one message fewer than a request-reply.
//
//	Deliver(HandleRequest) ──publish, reply=async.<stream>──▶ owner ──(delivered: silence)
//	    ◀── not-found / moved / no responders ── async.<stream> ──▶ redeliver, or the stream is told

// asyncPrefix is the reply subject prefix of this node's requests sent
// without waiting.
func (r *Router) asyncPrefix() string {
	return r.node.subj.prefix + "node." + r.node.ID() + ".async."
}

// sendAsync sends request m, whose stream this node holds, to owner.
func (r *Router) sendAsync(owner, id string, m *messages.HandleRequest) error {
	data, err := messages.EncodeActorMessage(m)
	if err != nil {
		return err
	}
	msg := nats.NewMsg(r.node.subj.session(owner))
	msg.Header.Set(headerSession, id)
	msg.Header.Set(headerOp, opAsync)
	msg.Reply = r.asyncPrefix() + strconv.FormatUint(m.Stream.N, 10)
	msg.Data = data
	// First: a complaint finds it.
	r.remote.Store(m.Stream, remoteStream{owner: owner, req: m.Msg.ID, session: id, msg: m})
	r.stats.routed.Add(1)
	if err := r.node.nc.PublishMsg(msg); err != nil {
		r.remote.Delete(m.Stream)
		return err
	}
	return nil
}

// onAsyncReply handles a complaint about a request sent without waiting.
func (r *Router) onAsyncReply(reply *nats.Msg) {
	n, err := strconv.ParseUint(reply.Subject[strings.LastIndexByte(reply.Subject, '.')+1:], 10, 64)
	if err != nil {
		return
	}
	sid := messages.StreamID{Node: r.node.ID(), N: n}
	v, ok := r.remote.LoadAndDelete(sid)
	if !ok || v.(remoteStream).msg == nil {
		return // the stream is done, or was taken care of
	}
	rs := v.(remoteStream)
	switch {
	case reply.Header.Get("Status") == "503": // no responders: the owner is gone
		err = errNoOwner
	case reply.Header.Get(headerStatus) == statusMoved:
		err = &movedError{owner: reply.Header.Get(headerOwner)}
	default:
		err = router.ErrSessionNotFound
	}
	r.node.log.Debug("a request sent without waiting was not delivered", "session", rs.session, "owner", rs.owner, "err", err)
	// Off the subscription's goroutine: a takeover waits for a lease.
	r.node.mu.Lock()
	if r.closed.Load() {
		r.node.mu.Unlock()
		return
	}
	r.bg.Add(1) // under the lock: Close waits after it looked
	r.node.mu.Unlock()
	go func() {
		defer r.bg.Done()
		r.redeliver(rs, err)
	}()
}

// redeliver delivers again a request that its owner did not get (err
// says why), or tells its stream why it cannot be.
func (r *Router) redeliver(rs remoteStream, err error) {
	ctx, cancel := context.WithTimeout(r.ctx, 2*deliverTimeout+2*r.node.opts.LeaseTTL)
	defer cancel()
	var next string
	if !errors.Is(err, router.ErrSessionNotFound) {
		next, err = r.reroute(ctx, rs.session, rs.owner, err)
	}
	if err == nil && next != "" {
		r.setOwner(rs.session, next)
		err = r.Deliver(ctx, rs.session, rs.msg)
	}
	switch {
	case err == nil:
	case errors.Is(err, router.ErrSessionNotFound):
		r.streams.Deliver(messages.StreamEvent{Stream: rs.msg.Stream, Signal: messages.SignalNotFound})
	default:
		r.streams.Deliver(messages.StreamEvent{Stream: rs.msg.Stream, Frame: messages.Frame{
			Data: messages.EncodeError(rs.msg.Msg.ID, messages.Errorf(messages.CodeInternalError,
				"the session could not be reached (%v); send the request again", err)),
			End: true,
		}})
	}
}
