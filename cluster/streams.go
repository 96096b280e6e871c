package cluster

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/mcp-actors/mcp-actors/actors/router"
	"github.com/mcp-actors/mcp-actors/messages"
)

// Events for the streams this node holds, from sessions on other nodes.
// A stream ID names the node, the run of its registry (boot) and a number,
// and every event names the session that sends it: the registry takes an
// event only for a stream of this run that belongs to the event's session
// (router.Streams.Offer). An event of another session is dropped and
// counted; so is an event of an owner epoch lower than one the stream took
// (the session's earlier owner sends it late: a partition healed, a
// paused process resumed). An event for a stream this node does not hold — it was
// unregistered, or it is a stream of this node's earlier run (the node
// restarted while a call of another node's session was streaming to it) —
// or that its receiver refused, is reported to the session: a DetachStream
// routed back to it, which treats the stream's client as gone, as it does
// when a stream of its own node refuses a frame. A remote DeliverStream
// reports every event taken, so this report is how the session learns.
//
//	owner ──event(stream, session)──▶ onStream ──Offer──▶ delivered
//	                                                 ├──▶ foreign: dropped, counted
//	                                                 └──▶ no stream / refused ──▶ Deliver(session, DetachStream) ──▶ owner

// maxGoneReports bounds the reports of gone streams in flight at once;
// beyond, an event for a gone stream is dropped unreported (the session's
// next event for the stream reports it).
const maxGoneReports = 64

// onStreamEvent hands ev, received from another node, to the stream it
// names, and reports the stream to its session when it is gone.
func (r *relay) onStreamEvent(ev messages.StreamEvent) {
	switch r.streams.Offer(ev) {
	case router.Foreign:
		r.node.log.Debug("dropping a stream event of another session than its stream's",
			"stream", ev.Stream.String(), "session", ev.Session, "signal", ev.Signal.String())
	case router.Stale:
		r.node.log.Debug("dropping a stream event of an owner that lost its session",
			"stream", ev.Stream.String(), "session", ev.Session, "epoch", ev.Epoch, "signal", ev.Signal.String())
	case router.NoStream, router.Refused:
		if !ev.Signal.Ends() { // nothing follows an event that ends its stream
			r.reportGone(ev)
		}
	}
}

// reportGone tells ev's session, off the subscription's goroutine, that
// ev's stream is gone. One report per stream is in flight at a time.
func (r *relay) reportGone(ev messages.StreamEvent) {
	if ev.Session == "" {
		return
	}
	if _, inFlight := r.detaching.LoadOrStore(ev.Stream, struct{}{}); inFlight {
		return
	}
	if r.goneReports.Add(1) > maxGoneReports {
		r.goneReports.Add(-1)
		r.detaching.Delete(ev.Stream)
		return
	}
	started := r.goBackground(func() {
		defer r.goneReports.Add(-1)
		defer r.detaching.Delete(ev.Stream)
		ctx, cancel := context.WithTimeout(r.ctx, deliverTimeout)
		defer cancel()
		if err := r.Deliver(ctx, ev.Session, &messages.DetachStream{Stream: ev.Stream}); err != nil {
			r.node.log.Debug("telling a session that its stream is gone failed", "session", ev.Session, "stream", ev.Stream.String(), "err", err)
			return
		}
		r.stats.goneStreams.Add(1)
	})
	if !started {
		r.goneReports.Add(-1)
		r.detaching.Delete(ev.Stream)
	}
}

// goBackground runs fn on a goroutine that Close waits for, unless the
// router is closed; it reports whether fn runs.
func (r *relay) goBackground(fn func()) bool {
	r.mu.Lock()
	if r.closed.Load() {
		r.mu.Unlock()
		return false
	}
	r.bg.Add(1) // under the lock: Close waits after it looked
	r.mu.Unlock()
	go func() {
		defer r.bg.Done()
		fn()
	}()
	return true
}

// deliverTooLarge stands in for event ev, of size bytes encoded, which is
// too large to reach the node that holds its stream: a response becomes a
// JSON-RPC error for its request, which ends the stream; anything else
// ends the stream (the client may resume it from the session's log). It
// reports the event refused: the session stops using the stream, as for
// a stream that refuses a frame.
func (r *relay) deliverTooLarge(ev messages.StreamEvent, size int) bool {
	r.node.log.Warn("a stream event is too large to send to the node that holds its stream",
		"stream", ev.Stream.String(), "bytes", size, "max", r.node.opts.MaxMessageBytes)
	stand, ok := responseError(ev, fmt.Sprintf("the response is %d bytes: more than the %d bytes one node of the cluster may send another", size, r.node.opts.MaxMessageBytes))
	if !ok {
		stand = messages.StreamEvent{Stream: ev.Stream, Session: ev.Session, Signal: messages.SignalClosed}
	}
	if data, err := messages.EncodeStreamEvent(stand); err == nil {
		_ = r.chunks.publish(&nats.Msg{Subject: r.node.subj.stream(ev.Stream.Node), Data: data})
	}
	return false
}
