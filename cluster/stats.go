package cluster

import (
	"sync/atomic"
	"time"

	"github.com/mcp-actors/mcp-actors/metrics"
)

// stats counts what a node's router does, for metrics (relay.Stats).
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

// Stats returns the router's counters, as its metrics read them
// (metrics.RegisterCluster).
func (r *relay) Stats() metrics.ClusterStats {
	return metrics.ClusterStats{
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
