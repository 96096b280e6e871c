package cluster

import (
	"bytes"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/mcp-actors/mcp-actors/messages"
)

// Requests whose answer was lost. A request another node accepted ends
// when its answer comes, or with an error when its owner's lease lapses
// (owners.go); but an answer can be lost between nodes while the owner
// lives (a slow consumer drops it, a chunk goes missing). So every owner
// tells each node it runs requests for, every runningTick, which of that
// node's streams it still runs requests for: a digest on the node's
// stream subject, after the frames it sent there (one publisher, one
// subject: in order). A stream whose request the node holds as accepted
// and that two digests in a row leave out has had its answer lost: the
// request ends with a JSON-RPC error, and the client may send it again.
// And when the digests stop — the link from the owner to this node fails
// while the owner keeps its lease, so that neither answers nor digests
// come, and no lapse ends the request either — a request accepted more
// than silentBound ago whose owner has sent no digest for silentBound
// ends the same way: every accepted request ends within a bound.
//
//	owner ──every runningTick──▶ node.<holder>.stream  [Mcp-Op: running, Mcp-Owner: <owner>]  "<boot>-<n> …"
//	holder: accepted request of <owner> missing from two digests in a row ──▶ ended with an error
//	holder: no digest from <owner> for silentBound ──▶ its requests accepted before then ended with an error

// runningTick is how often an owner sends its digests; a lost answer ends
// its request within two or three of them.
const runningTick = 2 * time.Second

// opRunning marks a digest of the requests an owner runs for a node.
const opRunning = "running"

// silentBound is how long a node waits for a digest from the owner of a
// request it accepted before it takes the owner's link to it for broken.
const silentBound = 3 * runningTick

// runningSet is what an owner knows of the requests it runs for other
// nodes' streams. Its maps are guarded by mu: they change when a request
// is accepted or answered and are read every runningTick.
type runningSet struct {
	mu      sync.Mutex
	streams map[messages.StreamID]struct{} // requests running here for other nodes' streams
	holders map[string]time.Time           // nodes served lately: they get digests, empty ones too
	missed  map[messages.StreamID]int      // holder side: digests in a row that left the stream out
	heard   map[string]time.Time           // holder side: when each owner's last digest came
}

// runs records that a request whose stream another node holds runs here.
func (r *relay) runs(stream messages.StreamID) {
	if stream.Node == r.node.ID() || stream.IsZero() {
		return
	}
	rs := &r.running
	rs.mu.Lock()
	if rs.streams == nil {
		rs.streams, rs.holders = map[messages.StreamID]struct{}{}, map[string]time.Time{}
	}
	rs.streams[stream] = struct{}{}
	rs.holders[stream.Node] = time.Now()
	rs.mu.Unlock()
}

// notRunning records that the request of stream does not run here after
// all (it was not delivered).
func (r *relay) notRunning(stream messages.StreamID) {
	rs := &r.running
	rs.mu.Lock()
	delete(rs.streams, stream)
	rs.mu.Unlock()
}

// answered records that ev ends its stream's request, if it does.
func (r *relay) answered(ev messages.StreamEvent) {
	if ev.Stream.Node == r.node.ID() || !(ev.Signal.Ends() || ev.Signal == messages.SignalFrame && ev.Frame.End) {
		return
	}
	rs := &r.running
	rs.mu.Lock()
	delete(rs.streams, ev.Stream)
	rs.mu.Unlock()
}

// sendDigests tells every node served lately which of its streams this
// node still runs requests for.
func (r *relay) sendDigests(now time.Time) {
	rs := &r.running
	rs.mu.Lock()
	digests := map[string][]byte{}
	for holder, at := range rs.holders {
		if now.Sub(at) > 3*runningTick {
			delete(rs.holders, holder)
			continue
		}
		digests[holder] = nil
	}
	for s := range rs.streams {
		rs.holders[s.Node] = now
		b := digests[s.Node]
		if len(b) > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendUint(b, s.Boot, 16)
		b = append(b, '-')
		digests[s.Node] = strconv.AppendUint(b, s.N, 10)
	}
	rs.mu.Unlock()
	for holder, b := range digests {
		m := nats.NewMsg(r.node.subj.stream(holder))
		m.Header.Set(headerOp, opRunning)
		m.Header.Set(headerOwner, r.node.ID())
		m.Data = b
		if err := r.chunks.publish(m); err != nil {
			r.node.log.Debug("sending a digest of running requests failed", "to", holder, "err", err)
		}
	}
}

// onDigest ends the requests of owner that two digests in a row left out.
func (r *relay) onDigest(msg *nats.Msg) {
	owner := msg.Header.Get(headerOwner)
	now := time.Now()
	listed := map[messages.StreamID]bool{}
	for tok := range bytes.FieldsSeq(msg.Data) {
		boot, n, ok := bytes.Cut(tok, []byte{'-'})
		if !ok {
			continue
		}
		b, err1 := strconv.ParseUint(string(boot), 16, 64)
		num, err2 := strconv.ParseUint(string(n), 10, 64)
		if err1 == nil && err2 == nil {
			listed[messages.StreamID{Node: r.node.ID(), Boot: b, N: num}] = true
		}
	}
	var lost []*remoteStream
	var lostIDs []messages.StreamID
	rs := &r.running
	rs.mu.Lock()
	if rs.missed == nil {
		rs.missed = map[messages.StreamID]int{}
	}
	if rs.heard == nil {
		rs.heard = map[string]time.Time{}
	}
	rs.heard[owner] = now
	r.remote.Range(func(k, v any) bool {
		sid, st := k.(messages.StreamID), v.(*remoteStream)
		if st.owner != owner || st.req != nil || st.reqID.IsZero() {
			return true // another owner's, not accepted yet (acks.go), or a GET
		}
		if !r.streams.Holds(sid) {
			r.remote.CompareAndDelete(k, v) // its client is gone: nothing to end
			return true
		}
		if listed[sid] {
			delete(rs.missed, sid)
			return true
		}
		if rs.missed[sid]++; rs.missed[sid] >= 2 && r.remote.CompareAndDelete(k, v) {
			delete(rs.missed, sid)
			lost, lostIDs = append(lost, st), append(lostIDs, sid)
		}
		return true
	})
	for sid := range rs.missed {
		if _, ok := r.remote.Load(sid); !ok {
			delete(rs.missed, sid)
		}
	}
	rs.mu.Unlock()
	for i, st := range lost {
		r.stats.lostAnswers.Add(1)
		r.endRequest(lostIDs[i], st.session, st.reqID, "the answer to this request was lost between nodes; send the request again")
	}
	if len(lost) > 0 {
		r.node.log.Warn("answers of routed requests were lost between nodes: their requests were ended", "owner", owner, "requests", len(lost))
	}
}

// endSilent ends the accepted requests held here whose owner has sent no
// digest for silentBound (none at all, or none since): the owner's link
// to this node is broken, and neither their answers nor a lapse will end
// them.
func (r *relay) endSilent(now time.Time) {
	var lost []*remoteStream
	var lostIDs []messages.StreamID
	rs := &r.running
	rs.mu.Lock()
	for owner, at := range rs.heard {
		if now.Sub(at) > 10*silentBound {
			delete(rs.heard, owner) // an owner that runs nothing for here any more
		}
	}
	r.remote.Range(func(k, v any) bool {
		sid, st := k.(messages.StreamID), v.(*remoteStream)
		if st.req != nil || st.reqID.IsZero() || now.Sub(st.sent) < silentBound {
			return true // not accepted yet (acks.go), a GET, or young
		}
		if at, ok := rs.heard[st.owner]; ok && now.Sub(at) < silentBound {
			return true
		}
		if r.remote.CompareAndDelete(k, v) {
			lost, lostIDs = append(lost, st), append(lostIDs, sid)
		}
		return true
	})
	rs.mu.Unlock()
	for i, st := range lost {
		r.stats.lostAnswers.Add(1)
		r.endRequest(lostIDs[i], st.session, st.reqID, "the session's node ("+st.owner+") has not been heard from for "+silentBound.String()+"; send the request again")
	}
	if len(lost) > 0 {
		r.node.log.Warn("routed requests whose node is not heard from were ended", "requests", len(lost))
	}
}
