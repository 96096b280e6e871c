package session

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/mcp-actors/mcp-actors/messages"
)

// LoggedEvent is one event of a resumable session's event log (an SSE
// event with an ID), as a cluster keeps it durable (Config.LogEvent) so
// that the session, restored on another node after a loss, replays it to
// a client resuming with Last-Event-ID (State.Events).
type LoggedEvent struct {
	Stream  string      // the stream's ID: "0" is the standalone stream
	Seq     uint64      // the event's number on its stream (its ID is "<Stream>-<Seq>")
	Request messages.ID // the client request the stream answers; zero on the standalone stream
	Data    []byte      // the JSON-RPC message; not to be modified
	End     bool        // the request's response: the stream's last event
}

// restoreGap is added to a restored session's stream numbers and to the
// sequence numbers of its unfinished streams. The lost node may have
// sent events its log never got (appends are asynchronous): a client
// that holds the ID of such an event resumes after it, and no event of
// the restored session reuses it.
const restoreGap = 1 << 16

// errLostRequest is the response of a request whose handler was running
// on a node that was lost.
var errLostRequest = messages.Errorf(messages.CodeInternalError,
	"the node running this request was lost before it answered; send the request again")

// restore rebuilds the event log from events (in the order they were
// logged) after the session was restored on this node. A request stream
// without its response — its handler ran on the lost node — gets an
// error response in its place, for the client that resumes it.
func (ss *streamSet) restore(events []LoggedEvent) {
	if !ss.resumable || len(events) == 0 {
		return
	}
	type numbered struct {
		n  uint64
		st *stream
	}
	var requests []numbered // in the order their streams were opened, once sorted
	for i := range events {
		e := &events[i]
		st := ss.byID[e.Stream]
		if st == nil {
			n, err := strconv.ParseUint(e.Stream, 10, 64)
			if err != nil || n == 0 {
				continue // not a stream ID this package gave
			}
			st = &stream{id: e.Stream, sse: true, request: e.Request}
			ss.byID[st.id] = st
			requests = append(requests, numbered{n, st})
		}
		if st.done || e.Seq <= st.seq {
			continue // a duplicate, or after the response
		}
		st.seq = e.Seq
		end := e.End && !st.standalone
		ss.append(st, e.Data, end).delivered = true
		st.done = end
	}
	slices.SortFunc(requests, func(a, b numbered) int { return cmp.Compare(a.n, b.n) })
	if len(requests) > 0 {
		ss.nextID = max(ss.nextID, requests[len(requests)-1].n)
	}
	ss.nextID += restoreGap
	ss.standalone.seq += restoreGap
	for _, r := range requests {
		st := r.st
		if !st.done && !st.request.IsZero() {
			st.seq += restoreGap
			ss.send(st, messages.EncodeError(st.request, errLostRequest), true)
		}
		if st.done {
			ss.retire(st)
		}
	}
	ss.trim()
}
