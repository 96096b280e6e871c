package cluster

import (
	"context"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/mcp-actors/mcp-actors/actors/session"
	"github.com/mcp-actors/mcp-actors/messages"
)

// Every routed request ends. A client request for another node's session
// is published without waiting (async.go); the owner acknowledges it once
// it is in the session's mailbox — lazily: a request answered within
// ackDelay is acknowledged by its answer, the first event on its stream,
// so the usual call costs no extra message. The node holding the client's
// stream keeps the request until one of the two arrives; when neither
// comes within ackBound, it looks at the owner's lease: lapsed, it takes
// the session over and delivers the request there; alive, it ends the
// request with a JSON-RPC error (the owner hangs, or the request was lost
// between nodes), and the client may send it again. Once acknowledged the
// request's body is let go; its stream still ends with an error if the
// owner's lease lapses before it answers (owners.go).
//
//	holder ──publish──▶ owner: delivered ──(ackDelay, no event yet)──▶ ack ──▶ holder lets the body go
//	   └── no ack nor event within ackBound ──▶ owner's lease lapsed? ──yes──▶ take over, deliver here
//	                                                             └──no──▶ end the request with an error

// The acknowledgement's bounds.
const (
	ackDelay = 200 * time.Millisecond // the owner acknowledges a request not answered by then
	ackBound = 2 * time.Second        // the holder waits this long for an acknowledgement,
	ackPerMB = 250 * time.Millisecond // and this much more per MiB of the request (it crosses in chunks)
	ackTick  = 100 * time.Millisecond // how often both look
)

// pendingAck is a routed request this node accepted and has not
// acknowledged yet.
type pendingAck struct {
	reply string // the sender's reply subject
	at    time.Time
	// forwarded marks a forwarded modern request (modern.go): its sender
	// waits for this reply, which no event stands for, and which may
	// carry the stream's answer.
	forwarded bool
}

// ackLater arranges for the acknowledgement of the request whose stream
// is stream: sent after ackDelay unless the stream hears from the session
// first.
func (r *relay) ackLater(stream messages.StreamID, reply string) {
	r.ackDue.Store(stream, &pendingAck{reply: reply, at: time.Now()})
}

// acked notes that the session sent ev on its stream, held by another
// node: it acknowledges the request too. A forwarded modern request's
// sender waits for the reply itself: it is sent now, carrying ev when ev
// is the stream's answer (then acked reports true: ev has gone).
func (r *relay) acked(ev messages.StreamEvent) bool {
	v, ok := r.ackDue.LoadAndDelete(ev.Stream)
	if !ok {
		return false
	}
	if p := v.(*pendingAck); p.forwarded {
		return r.replyForwarded(p.reply, ev)
	}
	return false
}

// sendAcks acknowledges the requests accepted more than ackDelay ago whose
// streams have heard nothing yet.
func (r *relay) sendAcks(now time.Time) {
	r.ackDue.Range(func(k, v any) bool {
		p := v.(*pendingAck)
		if now.Sub(p.at) < ackDelay || !r.ackDue.CompareAndDelete(k, v) {
			return true
		}
		m := nats.NewMsg(p.reply)
		m.Header.Set(headerStatus, statusOK)
		if err := r.node.nc.PublishMsg(m); err != nil {
			r.node.log.Debug("acknowledging a routed request failed", "err", err)
		}
		return true
	})
}

// heard notes that ev reached its stream, held here, from its session:
// the request it waits on was accepted, or, when ev ends the stream, is
// done, and no longer waits on its owner.
func (r *relay) heard(ev messages.StreamEvent) {
	v, ok := r.remote.Load(ev.Stream)
	switch {
	case !ok:
	case ev.Signal.Ends() || ev.Signal == messages.SignalFrame && ev.Frame.End:
		r.remote.CompareAndDelete(ev.Stream, v)
	case v.(*remoteStream).req != nil:
		r.accepted(ev.Stream, v.(*remoteStream))
	}
}

// accepted records that the owner accepted the request of stream: its
// body is let go.
func (r *relay) accepted(stream messages.StreamID, rs *remoteStream) {
	next := &remoteStream{owner: rs.owner, session: rs.session, reqID: rs.reqID, sent: rs.sent, ackBound: rs.ackBound}
	if r.remote.CompareAndSwap(stream, rs, next) {
		r.stats.hop(time.Since(rs.sent))
	}
}

// checkAcks looks at the requests sent from here that no acknowledgement
// reached within ackBound, off the watch's goroutine.
func (r *relay) checkAcks(now time.Time) {
	r.remote.Range(func(k, v any) bool {
		rs := v.(*remoteStream)
		if rs.req == nil || rs.redelivering || now.Sub(rs.sent) < rs.ackBound {
			return true
		}
		if claimed, ok := r.claim(k.(messages.StreamID), rs); ok {
			r.goBackground(func() { r.unacknowledged(claimed) })
		}
		return true
	})
}

// unacknowledged handles a request its owner did not acknowledge in time;
// rs is claimed (claim).
// An owner whose lease has lapsed is replaced: the request is delivered
// again after the takeover. An owner that answers a probe is there and
// running: the request was lost between the nodes, or the owner hangs;
// the request ends with an error and the client may send it again. An
// owner that does not answer (it died, is paused, or is cut off from
// here) may have lost the request with itself: it is delivered again as
// any message for a silent owner is — once the owner's lease lapses, to
// the node that takes the session over — or ends with an error when the
// lease does not lapse in time. (An owner that died after it ran the
// request, but before its answer left, runs it twice: the client could
// not tell either from an error.)
func (r *relay) unacknowledged(rs *remoteStream) {
	r.stats.unacked.Add(1)
	r.node.log.Warn("a routed request was not acknowledged in time", "session", session.LogID(rs.session), "owner", rs.owner, "bound", rs.ackBound)
	ctx, cancel := context.WithTimeout(r.ctx, 2*storageOpTimeout)
	alive, err := r.node.Alive(ctx, rs.owner)
	cancel()
	if err == nil && !alive {
		r.redeliver(rs, errNoOwner)
		return
	}
	asked := time.Now()
	uptime, answers := r.probe(rs.owner, probeTimeout)
	if !answers {
		r.redeliver(rs, errNoOwner)
		return
	}
	if startedAfter(uptime, asked, rs.sent) {
		// The run that answers started after the request was sent: the
		// run it was sent to stopped without a word of it (a message in
		// flight as it stopped listening is dropped by NATS). Nothing
		// runs it there: delivered again, to the new run.
		r.redeliver(rs, errOwnerGone)
		return
	}
	if r.release(rs) { // not heard of since: its answer did not come meanwhile
		r.endRequest(rs.req.Stream, rs.session, rs.reqID, "the session's node ("+rs.owner+") did not take the request in time; send it again")
	}
}

// startedAfter reports whether the run that answered a probe sent at
// asked, saying it had been up for uptime, started after sent (all on
// this node's monotonic clock but uptime, which is the responder's). The
// responder measured its uptime after asked, so its run started after
// asked-uptime: when that is after sent, so is the run's start — exactly,
// with no margin and no two clocks compared. A run that started within
// the probe's round trip after sent may go unrecognized, never the other
// way round. (uptime -1: a node of the previous release, which does not
// say.)
func startedAfter(uptime time.Duration, asked, sent time.Time) bool {
	return uptime >= 0 && asked.Add(-uptime).After(sent)
}

// probeTimeout bounds the wait for a node's answer to a probe: a node that
// is there answers in a round trip.
const probeTimeout = time.Second

// answersProbe reports whether node answers a probe within d.
func (r *relay) answersProbe(node string, d time.Duration) bool {
	_, ok := r.probe(node, d)
	return ok
}

// probe asks node whether it is there, waiting up to d, and returns how
// long its run has been up (its own clock, so no two clocks are
// compared; -1 from a node of the previous release, which does not say).
func (r *relay) probe(node string, d time.Duration) (uptime time.Duration, ok bool) {
	m := nats.NewMsg(r.node.subj.session(node))
	m.Header.Set(headerOp, opProbe)
	ctx, cancel := context.WithTimeout(r.ctx, d)
	defer cancel()
	reply, err := r.node.nc.RequestMsgWithContext(ctx, m)
	if err != nil || reply.Header.Get(headerStatus) != statusOK {
		return 0, false
	}
	up, err := strconv.ParseInt(reply.Header.Get(headerUptime), 10, 64)
	if err != nil {
		return -1, true
	}
	return time.Duration(up), true
}
