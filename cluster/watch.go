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

// remoteStream is a stream held here for a request or a GET whose session
// another node owns.
type remoteStream struct {
	owner   string
	session string
	req     *messages.HandleRequest // the request; nil for a GET stream
}

// track records that the stream of m, for session id, waits on owner.
func (r *Router) track(owner, id string, m messages.ActorMessage) {
	switch m := m.(type) {
	case *messages.HandleRequest:
		r.remote.Store(m.Stream, remoteStream{owner: owner, session: id, req: m})
	case *messages.AttachStream:
		r.remote.Store(m.Stream, remoteStream{owner: owner, session: id})
	}
}

// watchOwners looks, every half lease, at the owners of the streams held
// here, until stop is closed, and ends the streams of owners whose lease
// is gone.
func (r *Router) watchOwners(stop <-chan struct{}) {
	defer r.watchDone.Done()
	t := time.NewTicker(r.node.opts.LeaseTTL / 2)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		owners := map[string]bool{}
		r.remote.Range(func(k, v any) bool {
			sid, rs := k.(messages.StreamID), v.(remoteStream)
			if !r.streams.Holds(sid) {
				r.remote.Delete(sid) // its connection is done
				return true
			}
			owners[rs.owner] = true
			return true
		})
		for owner := range owners {
			ctx, cancel := context.WithTimeout(context.Background(), r.node.opts.LeaseTTL/2)
			alive, err := r.node.Alive(ctx, owner)
			cancel()
			if err != nil || alive {
				continue
			}
			r.ownerLost(owner)
		}
	}
}

// ownerLost ends the streams held here for sessions of a lost node.
func (r *Router) ownerLost(owner string) {
	n := 0
	r.remote.Range(func(k, v any) bool {
		sid, rs := k.(messages.StreamID), v.(remoteStream)
		if rs.owner != owner {
			return true
		}
		r.remote.Delete(sid)
		if rs.req != nil {
			r.endRequest(rs.session, rs.req, fmt.Sprintf("the node running this request (%s) was lost before it answered; send the request again", owner))
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

// endRequest ends the stream of request hr of session id, held here, with
// a JSON-RPC error (-32603) saying why it was not answered.
func (r *Router) endRequest(id string, hr *messages.HandleRequest, why string) {
	r.streams.Deliver(messages.StreamEvent{Stream: hr.Stream, Session: id, Frame: messages.Frame{
		Data: messages.EncodeError(hr.Msg.ID, messages.Errorf(messages.CodeInternalError, "%s", why)),
		End:  true,
	}})
}
