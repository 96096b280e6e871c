package cluster

import (
	"sync/atomic"
	"time"
)

// stats counts what a node's router does, for metrics (Relay.Stats).
type stats struct {
	routed      atomic.Int64 // messages sent to another node
	received    atomic.Int64 // messages received from another node
	framesOut   atomic.Int64 // stream events sent to another node
	framesIn    atomic.Int64 // stream events received from another node
	takeovers   atomic.Int64 // sessions taken over from a lost node
	hopNanos    atomic.Int64 // time from sending routed messages to their first sign of receipt
	hops        atomic.Int64 // routed messages timed in hopNanos
	restored    atomic.Int64 // events read back from it for sessions taken over
	unacked     atomic.Int64 // requests sent from here that no acknowledgement reached in time
	held        atomic.Int64 // routed requests held while their session closed for handover (handover.go)
	released    atomic.Int64 // routed messages answered "released" (handover.go)
	lostAnswers atomic.Int64 // requests accepted elsewhere whose answer was lost on its way here (running.go)

	goneStreams atomic.Int64 // sessions told that a stream they sent to is not held here (streams.go)
}

// hop records the time from sending a routed message to its first sign of
// receipt: the owner's reply to a message sent waiting, or, for a request
// sent without waiting, its acknowledgement or the first event of its
// stream (which may come after up to ackDelay of the handler's own time).
func (s *stats) hop(d time.Duration) {
	s.hopNanos.Add(int64(d))
	s.hops.Add(1)
}

// Stats is a snapshot of a node's routing counters (totals since start).
type Stats struct {
	Routed, Received     int64         // messages to and from other nodes
	FramesOut, FramesIn  int64         // stream events to and from other nodes
	Takeovers            int64         // sessions taken over from lost nodes
	HopTime              time.Duration // total time from sending routed messages to their first sign of receipt
	Hops                 int64         // routed messages timed in HopTime
	LeaseRenewals        int64         // this node's lease renewals
	LeaseRenewalFailures int64
	EventsLogged         int64 // events appended to the sessions' event logs, acknowledged
	EventsRestored       int64 // events read back for sessions taken over
	EventBatches         int64 // writes of the event log (batches of events)
	WriteFailures        int64 // event log and directory writes that failed
	Unacknowledged       int64 // routed requests that no acknowledgement reached in time (acks.go)
	LostAnswers          int64 // routed requests whose answer was lost between nodes (running.go)
	NATSErrors           int64 // asynchronous NATS errors: slow consumers, dropped messages
	Acting               bool  // the node acts for its sessions: its lease is surely alive
	GoneStreams          int64 // sessions told that a stream they sent an event to is not held here
	ForeignEvents        int64 // stream events dropped for coming from another session than their stream's
	StaleEvents          int64 // stream events dropped for coming from an owner of an earlier epoch than their stream heard from
	ChunkedOut           int64 // messages sent to other nodes in chunks (larger than one NATS message)
	ChunkedIn            int64 // messages received in chunks and put together
	PartialsDropped      int64 // messages received in chunks and dropped before they were whole
	EventsTooLarge       int64 // events left out of the event log for being larger than one JetStream message
	HandoverHeld         int64 // routed requests held while their session closed for handover (handover.go)
	HandoverReleased     int64 // routed messages answered that their session was released, for the sender to take it over
}

// Stats returns the router's counters.
func (r *Relay) Stats() Stats {
	return Stats{
		Routed: r.stats.routed.Load(), Received: r.stats.received.Load(),
		FramesOut: r.stats.framesOut.Load(), FramesIn: r.stats.framesIn.Load(),
		Takeovers: r.stats.takeovers.Load(), HopTime: time.Duration(r.stats.hopNanos.Load()), Hops: r.stats.hops.Load(),
		LeaseRenewals: r.node.renewals.Load(), LeaseRenewalFailures: r.node.renewFailures.Load(),
		EventsLogged: r.node.evw.durable.Load(), EventsRestored: r.stats.restored.Load(), EventBatches: r.node.evw.written.Load(),
		WriteFailures: r.node.asyncFailures.Load(), Unacknowledged: r.stats.unacked.Load(), LostAnswers: r.stats.lostAnswers.Load(),
		NATSErrors: r.node.natsErrors.Load(), Acting: r.node.Standalone() || r.node.acting(),
		GoneStreams: r.stats.goneStreams.Load(), ForeignEvents: r.streams.ForeignEvents(), StaleEvents: r.streams.StaleEvents(),
		ChunkedOut: r.chunks.sent.Load(), ChunkedIn: r.chunks.received.Load(), PartialsDropped: r.chunks.dropped.Load(),
		EventsTooLarge: r.node.evw.tooLarge.Load(), HandoverHeld: r.stats.held.Load(), HandoverReleased: r.stats.released.Load(),
	}
}
