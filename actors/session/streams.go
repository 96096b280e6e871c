package session

import (
	"strconv"
	"strings"

	"github.com/mcp-actors/mcp-actors/messages"
)

// A stream is one ordered flow of frames to the client: the stream of one
// client request (its progress, logs, server-to-client requests and finally
// its response), or the session's standalone stream (everything else). The
// transport's stream (messages.StreamID) carries it while a connection is
// open; on a
// resumable session (Streamable HTTP) the frames of a stream in SSE mode
// carry event IDs "<stream>-<seq>" and are kept in the session's event log,
// so a client that lost the connection can resume with Last-Event-ID.
//
// Routing: a response goes on its request's stream, always. Anything else
// a handler sends goes on its request's stream while that stream has a
// connection; otherwise on the standalone stream — unless the request's
// stream is resumable and still running, in which case it is logged there
// for the client to resume. Nothing is ever sent on two streams.
type stream struct {
	id         string
	conn       messages.StreamID // zero while no connection carries the stream
	sse        bool              // frames carry event IDs
	seq        uint64            // last event sequence number
	done       bool              // the response has been sent or logged
	standalone bool
	request    messages.ID // the client request it answers (zero: the standalone stream)
}

// eventID names event seq of stream id.
func eventID(id string, seq uint64) string { return id + "-" + strconv.FormatUint(seq, 10) }

// parseEventID splits an event ID into its stream and sequence number.
func parseEventID(ev string) (string, uint64, bool) {
	i := strings.LastIndexByte(ev, '-')
	if i <= 0 {
		return "", 0, false
	}
	seq, err := strconv.ParseUint(ev[i+1:], 10, 64)
	return ev[:i], seq, err == nil
}

// event is one logged frame.
type event struct {
	stream    *stream
	seq       uint64
	data      []byte
	end       bool
	delivered bool // handed to a live sink
}

// streamSet is the session's streams and event log. It lives in the actor.
type streamSet struct {
	resumable bool // log SSE frames for Last-Event-ID (Streamable HTTP)
	prime     bool // start SSE streams with an empty priming event (2025-11-25)

	nextID     uint64
	byID       map[string]*stream // streams that can still be resumed
	standalone *stream

	log      []event // in the order sent; bounded by the limits below
	logBytes int
	// standaloneEvents counts the log's events of the standalone stream:
	// trim looks for delivered ones to evict only when there are more
	// than it keeps.
	standaloneEvents int

	// silent holds the connections of requests the client cancelled after
	// their stream became resumable, oldest first (see silence).
	silent []*stream
	// answered holds the request streams most recently answered on a live
	// connection, oldest first (see retire).
	answered []*stream

	session                               string // the session's ID: every event names it
	maxEvents, maxBytes, standaloneRetain int
	obs                                   Observer            // may be nil
	out                                   StreamSink          // where frames go
	logEvent                              func(e LoggedEvent) // Config.LogEvent for this session, or nil
}

func newStreamSet(resumable bool, lim Limits, out StreamSink) streamSet {
	ss := streamSet{
		out:              out,
		resumable:        resumable,
		maxEvents:        lim.MaxEvents,
		maxBytes:         lim.MaxEventBytes,
		standaloneRetain: 32,
	}
	ss.standalone = &stream{id: "0", standalone: true, sse: resumable}
	if resumable {
		ss.byID = map[string]*stream{ss.standalone.id: ss.standalone}
	}
	return ss
}

// open makes a stream for client request req carried by conn. A zero conn
// means the request has no stream of its own (stdio): nil is returned and
// its frames go on the standalone stream.
func (ss *streamSet) open(conn messages.StreamID, req messages.ID) *stream {
	if conn.IsZero() {
		return nil
	}
	ss.nextID++
	return &stream{id: strconv.FormatUint(ss.nextID, 10), conn: conn, request: req}
}

// live reports whether st has a connection.
func live(st *stream) bool { return st != nil && !st.conn.IsZero() }

// send puts data on st: as a plain frame while the stream is not in SSE
// mode, or as a logged event with an ID. end marks the request's response.
func (ss *streamSet) send(st *stream, data []byte, end bool) {
	if st == nil {
		st = ss.standalone
	}
	if st.standalone {
		end = false // a standalone stream never ends (stdio responses go there)
	}
	if !st.sse && ss.resumable && !end {
		ss.startSSE(st)
	}
	if !st.sse {
		if end {
			st.done = true
		}
		if live(st) {
			ss.deliver(st, messages.Frame{Data: data, End: end})
		} else if st.standalone {
			ss.append(st, data, false) // non-resumable backlog
			ss.trim()
		}
		return
	}
	st.seq++
	ev := ss.append(st, data, end)
	if end {
		st.done = true
	}
	if ss.logEvent != nil {
		ss.logEvent(LoggedEvent{Stream: st.id, Seq: st.seq, Request: st.request, Data: data, End: end})
	}
	if live(st) && ss.deliver(st, messages.Frame{EventID: eventID(st.id, st.seq), Data: data, End: end}) {
		ev.delivered = true
		if end {
			ss.retire(st)
		}
	}
	ss.trim()
}

// answeredRetain is how many answered request streams a session keeps
// resumable.
const answeredRetain = 16

// retire keeps a stream answered on a live connection resumable for a
// while. Handing a frame to the transport is not delivering it: the client
// may have hung up just before the write, which the server learns only
// later if at all; such a client resumes with Last-Event-ID. The oldest
// answered streams are forgotten first; the log bounds apply as well.
func (ss *streamSet) retire(st *stream) {
	if len(ss.answered) == answeredRetain {
		ss.forget(ss.answered[0])
	}
	ss.answered = append(ss.answered, st)
}

// startSSE switches st to SSE mode, with a priming event first when the
// session's version asks for it.
func (ss *streamSet) startSSE(st *stream) {
	st.sse = true
	if ss.byID == nil {
		ss.byID = map[string]*stream{}
	}
	ss.byID[st.id] = st
	if ss.prime && live(st) {
		ss.deliver(st, messages.Frame{EventID: eventID(st.id, 0)})
	}
}

// deliver hands f to st's connection; one that refuses it is dropped.
func (ss *streamSet) deliver(st *stream, f messages.Frame) bool {
	if ss.out.DeliverStream(messages.StreamEvent{Stream: st.conn, Session: ss.session, Frame: f}) {
		return true
	}
	st.conn = messages.StreamID{}
	return false
}

// signal ends the connection conn with sig, if there is one.
func (ss *streamSet) signal(conn messages.StreamID, sig messages.StreamSignal) {
	if !conn.IsZero() {
		ss.out.DeliverStream(messages.StreamEvent{Stream: conn, Session: ss.session, Signal: sig})
	}
}

// hangUp ends st's connection, leaving the stream as it is.
func (ss *streamSet) hangUp(st *stream) {
	ss.signal(st.conn, messages.SignalClosed)
	st.conn = messages.StreamID{}
}

// append logs a frame of st and returns the entry.
func (ss *streamSet) append(st *stream, data []byte, end bool) *event {
	ss.log = append(ss.log, event{stream: st, seq: st.seq, data: data, end: end})
	ss.logBytes += len(data)
	if st.standalone {
		ss.standaloneEvents++
	}
	return &ss.log[len(ss.log)-1]
}

// trim evicts the oldest events beyond the limits, and delivered standalone
// events beyond the few kept for a GET that resumes.
func (ss *streamSet) trim() {
	drop := 0
	for drop < len(ss.log) && (len(ss.log)-drop > ss.maxEvents || ss.logBytes > ss.maxBytes) {
		ss.dropped(&ss.log[drop])
		drop++
	}
	if drop > 0 {
		ss.log = append(ss.log[:0], ss.log[drop:]...)
	}
	if ss.standaloneEvents <= ss.standaloneRetain {
		return
	}
	kept := 0
	for i := len(ss.log) - 1; i >= 0; i-- {
		if e := &ss.log[i]; e.stream.standalone && e.delivered {
			if kept++; kept > ss.standaloneRetain {
				cut := e.seq
				ss.removeWhere(func(x *event) bool { return x.stream.standalone && x.delivered && x.seq <= cut })
				break
			}
		}
	}
}

// forget drops a finished request stream and its events.
func (ss *streamSet) forget(st *stream) {
	delete(ss.byID, st.id)
	for i, a := range ss.answered {
		if a == st {
			ss.answered = append(ss.answered[:i], ss.answered[i+1:]...)
			break
		}
	}
	ss.removeWhere(func(e *event) bool { return e.stream == st })
}

// dropped accounts for e leaving the log.
func (ss *streamSet) dropped(e *event) {
	ss.logBytes -= len(e.data)
	if e.stream.standalone {
		ss.standaloneEvents--
	}
}

func (ss *streamSet) removeWhere(drop func(*event) bool) {
	out := ss.log[:0]
	for i := range ss.log {
		if drop(&ss.log[i]) {
			ss.dropped(&ss.log[i])
			continue
		}
		out = append(out, ss.log[i])
	}
	clear(ss.log[len(out):])
	ss.log = out
}

// attach gives conn a stream: the standalone stream when lastEventID is
// empty (or names an event the session no longer holds), else the stream
// the event belongs to, after replaying what followed that event. It
// answers conn with SignalAttached (the standalone stream), SignalResumed
// (a request's) or SignalConflict first.
func (ss *streamSet) attach(conn messages.StreamID, lastEventID string) {
	if lastEventID != "" {
		id, seq, ok := parseEventID(lastEventID)
		if st := ss.byID[id]; ok && st != nil && seq <= st.seq {
			if live(st) && st.conn != conn {
				ss.hangUp(st) // the client resumed elsewhere: the old connection is dead to it
			}
			sig := messages.SignalResumed
			if st.standalone {
				sig = messages.SignalAttached
			}
			ss.signal(conn, sig)
			st.conn = conn
			ss.replay(st, func(e *event) bool { return e.seq > seq })
			if st.done && !st.standalone {
				ss.forget(st)
			}
			return
		}
		// An event we no longer hold (or never issued): the standalone
		// stream instead of failing the reconnecting client.
	}
	st := ss.standalone
	if live(st) {
		if !ss.out.StreamGone(st.conn) {
			ss.signal(conn, messages.SignalConflict)
			return
		}
		ss.hangUp(st) // its client has gone: the new GET takes over
	}
	ss.signal(conn, messages.SignalAttached)
	st.conn = conn
	ss.replay(st, func(e *event) bool { return !e.delivered })
	if ss.prime && live(st) {
		// Give the client an ID to resume from even if nothing comes.
		ss.deliver(st, messages.Frame{EventID: eventID(st.id, st.seq)})
	}
}

// replay delivers the logged events of st that pick selects, in order.
func (ss *streamSet) replay(st *stream, pick func(*event) bool) {
	for i := range ss.log {
		e := &ss.log[i]
		if e.stream != st || !pick(e) {
			continue
		}
		f := messages.Frame{Data: e.data, End: e.end}
		if st.sse {
			f.EventID = eventID(st.id, e.seq)
		}
		if !live(st) || !ss.deliver(st, f) {
			return
		}
		e.delivered = true
		if ss.obs != nil {
			ss.obs.EventsReplayed(1)
		}
	}
	if !st.sse {
		ss.removeWhere(func(e *event) bool { return e.stream == st && e.delivered })
	}
}

// detach removes conn from whichever stream it carries.
func (ss *streamSet) detach(conn messages.StreamID, inflight map[messages.ID]*inflight) {
	if conn.IsZero() {
		return
	}
	if ss.standalone.conn == conn {
		ss.standalone.conn = messages.StreamID{}
		return
	}
	for _, st := range ss.byID {
		if st.conn == conn {
			st.conn = messages.StreamID{}
			return
		}
	}
	for _, inf := range inflight {
		if inf.stream != nil && inf.stream.conn == conn {
			inf.stream.conn = messages.StreamID{}
			return
		}
	}
	for i, st := range ss.silent {
		if st.conn == conn {
			ss.silent = append(ss.silent[:i], ss.silent[i+1:]...)
			return
		}
	}
}

// maxSilent bounds the silent connections of one session.
const maxSilent = 64

// silence retires the stream of a request the client cancelled: no response
// will come, and the stream can no longer be resumed. A connection that has
// not carried an event ID is closed. One that has stays open, silent: a
// client that saw an event ID and then a closed stream without a response
// reconnects to resume it (and would fail, again and again), while a
// client that cancelled stops reading and lets it go. It closes when the
// client disconnects, when the session ends, or when more than maxSilent
// are open.
func (ss *streamSet) silence(st *stream) {
	ss.forget(st)
	if !live(st) {
		return
	}
	if !st.sse {
		ss.hangUp(st)
		return
	}
	if len(ss.silent) >= maxSilent {
		ss.hangUp(ss.silent[0])
		ss.silent = ss.silent[1:]
	}
	ss.silent = append(ss.silent, st)
}

// closeStream ends the connection of a running request's stream early,
// leaving the stream resumable (SSE polling). It does nothing on a session
// that is not resumable, nor on a stream that has given its client no event
// ID yet when the session's version has no priming event (before
// 2025-11-25): that client would have nothing to resume from.
func (ss *streamSet) closeStream(st *stream) {
	if st == nil || !ss.resumable || st.done {
		return
	}
	if !st.sse {
		if !ss.prime {
			return
		}
		ss.startSSE(st)
	}
	if live(st) {
		ss.hangUp(st)
	}
}

// closeAll closes every connection.
func (ss *streamSet) closeAll(inflight map[messages.ID]*inflight) {
	if live(ss.standalone) {
		ss.hangUp(ss.standalone)
	}
	for _, st := range ss.byID {
		if live(st) {
			ss.hangUp(st)
		}
	}
	for _, inf := range inflight {
		if live(inf.stream) {
			ss.hangUp(inf.stream)
		}
	}
	for _, st := range ss.silent {
		if live(st) {
			ss.hangUp(st)
		}
	}
	ss.silent = nil
	ss.log, ss.logBytes, ss.standaloneEvents = nil, 0, 0
}
