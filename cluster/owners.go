package cluster

import (
	"context"
	"fmt"
	"time"

	"github.com/mcp-actors/mcp-actors/messages"
)

// Streams held here for sessions owned elsewhere. When the owner is lost,
// nothing will come on them any more: a request's stream gets a JSON-RPC
// error for the request (the client may retry it; the session is taken
// over at its next message), and a GET stream ends, so that the client
// reconnects (to any node, which takes the session over).

// track records that the stream of m, for session id, waits on owner; m
// takes size bytes.
func (r *relay) track(owner, id string, m messages.ActorMessage, size int) {
	switch m := m.(type) {
	case *messages.HandleRequest:
		r.remote.Store(m.Stream, &remoteStream{owner: owner, session: id, reqID: m.Msg.ID, req: m, sent: time.Now(),
			ackBound: ackBound + time.Duration(size>>20)*ackPerMB})
	case *messages.AttachStream:
		r.remote.Store(m.Stream, &remoteStream{owner: owner, session: id})
	}
}

// watch runs, until stop is closed, what the router looks at in time:
// every ackTick the acknowledgements of routed requests (acks.go), and
// every quarter lease the owners of the streams held here, ending the
// streams of owners whose lease is gone.
func (r *relay) watch(stop <-chan struct{}) {
	defer r.watchDone.Done()
	t := time.NewTicker(ackTick)
	defer t.Stop()
	var lastOwners, lastDigest time.Time
	for {
		var now time.Time
		select {
		case <-stop:
			return
		case now = <-t.C:
		}
		r.sendAcks(now)
		r.checkAcks(now)
		if now.Sub(lastDigest) >= runningTick {
			lastDigest = now
			r.sendDigests(now)
			r.endSilent(now)
		}
		if now.Sub(lastOwners) >= r.node.leaseTTL()/4 && !r.checking.Swap(true) {
			// Lease reads may take a while: off this goroutine, which
			// must go on acknowledging requests every tick.
			lastOwners = now
			if !r.goBackground(func() { defer r.checking.Store(false); r.checkOwners(stop) }) {
				r.checking.Store(false)
			}
		}
	}
}

// checkOwners ends the streams held here whose owner's lease is gone.
func (r *relay) checkOwners(stop <-chan struct{}) {
	owners := map[string]bool{}
	r.remote.Range(func(k, v any) bool {
		sid, rs := k.(messages.StreamID), v.(*remoteStream)
		if !r.streams.Holds(sid) {
			r.remote.Delete(sid) // its connection is done
			return true
		}
		owners[rs.owner] = true
		return true
	})
	for owner := range owners {
		select {
		case <-stop:
			return
		default:
		}
		ctx, cancel := context.WithTimeout(r.ctx, r.node.leaseTTL()/4)
		alive, err := r.node.Alive(ctx, owner)
		cancel()
		if err != nil || alive {
			continue
		}
		r.ownerLost(owner)
	}
}

// ownerLost ends the streams held here for sessions of a lost node.
func (r *relay) ownerLost(owner string) {
	n := 0
	r.remote.Range(func(k, v any) bool {
		sid, rs := k.(messages.StreamID), v.(*remoteStream)
		if rs.owner != owner || rs.redelivering {
			return true
		}
		if rs.req != nil {
			// Not accepted by the lost node: delivered after a takeover.
			if claimed, ok := r.claim(sid, rs); ok {
				r.goBackground(func() { r.redeliver(claimed, errNoOwner) })
				n++
			}
			return true
		}
		if !r.remote.CompareAndDelete(k, v) {
			return true
		}
		if !rs.reqID.IsZero() {
			r.endRequest(sid, rs.session, rs.reqID, fmt.Sprintf("the node running this request (%s) was lost before it answered; send the request again", owner))
		} else {
			r.streams.Deliver(messages.StreamEvent{Stream: sid, Session: rs.session, Signal: messages.SignalClosed})
		}
		n++
		return true
	})
	if n > 0 {
		r.node.log.Warn("a node was lost: its sessions' streams held here were ended", "lost", owner, "streams", n)
	}
}

// endRequest ends stream, held here, of the request id of session, with a
// JSON-RPC error (-32603) saying why it was not answered.
func (r *relay) endRequest(stream messages.StreamID, session string, id messages.ID, why string) {
	r.streams.Deliver(messages.StreamEvent{Stream: stream, Session: session, Frame: messages.Frame{
		Data: messages.EncodeError(id, messages.Errorf(messages.CodeInternalError, "%s", why)),
		End:  true,
	}})
}
