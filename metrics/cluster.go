package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// ClusterStats are a cluster node's routing counters, totals since it
// started.
type ClusterStats struct {
	Routed, Received     int64         // messages to and from other nodes
	FramesOut, FramesIn  int64         // stream events to and from other nodes
	Takeovers            int64         // sessions taken over from lost nodes
	HopTime              time.Duration // total time from sending routed messages to their first sign of receipt
	Hops                 int64         // routed messages timed in HopTime
	LeaseRenewals        int64
	LeaseRenewalFailures int64
	EventsLogged         int64 // events appended to the sessions' event logs
	EventsRestored       int64 // events read back for sessions taken over
	EventBatches         int64 // writes of the event log (one batch of events each)
	WriteFailures        int64 // event log and state writes that failed
	Unacknowledged       int64 // routed requests that no acknowledgement reached in time
	LostAnswers          int64 // routed requests whose answer was lost between nodes
	NATSErrors           int64 // asynchronous NATS errors (slow consumers)
	Acting               bool  // the node acts for its sessions (its lease is surely alive)
	GoneStreams          int64 // sessions told that a stream they sent an event to is gone
	ForeignEvents        int64 // stream events dropped for coming from another session than their stream's
	StaleEvents          int64 // stream events dropped for coming from an owner of an earlier epoch
	ChunkedOut           int64 // messages sent to other nodes in chunks
	ChunkedIn            int64 // messages received from other nodes in chunks and put together
	PartialsDropped      int64 // messages received in chunks and dropped before they were whole
	EventsTooLarge       int64 // events left out of the event log for being larger than one JetStream message
	HandoverHeld         int64 // routed requests held while their session closed for handover
	HandoverReleased     int64 // routed messages answered that their session was released
}

// RegisterCluster registers the metrics of a cluster node with reg, read
// from stats at every scrape:
//
//	mcp_cluster_routed_messages_total{direction="out|in"}
//	mcp_cluster_remote_frames_total{direction="out|in"}
//	mcp_cluster_hop_seconds_total          (÷ mcp_cluster_hops_total = mean hop latency)
//	mcp_cluster_hops_total
//	mcp_cluster_takeovers_total
//	mcp_cluster_lease_renewals_total{outcome="ok|failed"}
//	mcp_cluster_events_logged_total, mcp_cluster_events_restored_total
//	mcp_cluster_event_batches_total        (÷ into events logged = events per write)
//	mcp_cluster_write_failures_total
//	mcp_cluster_unacknowledged_requests_total
//	mcp_cluster_handover_messages_total{outcome="held|released"}
//	mcp_cluster_lost_answers_total
//	mcp_cluster_nats_errors_total
//	mcp_cluster_acting                     (1 while the node's lease is surely alive, else 0)
//	mcp_cluster_gone_streams_total
//	mcp_cluster_foreign_stream_events_total
//	mcp_cluster_stale_stream_events_total
//	mcp_cluster_chunked_messages_total{direction="out|in"}
//	mcp_cluster_partial_messages_dropped_total
//	mcp_cluster_events_too_large_total
func RegisterCluster(reg prometheus.Registerer, stats func() ClusterStats) {
	counter := func(name, help string, labels prometheus.Labels, v func(ClusterStats) float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels},
			func() float64 { return v(stats()) })
	}
	out, in := prometheus.Labels{"direction": "out"}, prometheus.Labels{"direction": "in"}
	const routedHelp = "Messages for sessions routed to (out) or from (in) other nodes."
	const framesHelp = "Stream events sent to (out) or received from (in) other nodes."
	const chunkedHelp = "Messages larger than one NATS message, sent to (out) or received from (in) other nodes in chunks."
	reg.MustRegister(
		counter("mcp_cluster_routed_messages_total", routedHelp, out, func(s ClusterStats) float64 { return float64(s.Routed) }),
		counter("mcp_cluster_routed_messages_total", routedHelp, in, func(s ClusterStats) float64 { return float64(s.Received) }),
		counter("mcp_cluster_remote_frames_total", framesHelp, out, func(s ClusterStats) float64 { return float64(s.FramesOut) }),
		counter("mcp_cluster_remote_frames_total", framesHelp, in, func(s ClusterStats) float64 { return float64(s.FramesIn) }),
		counter("mcp_cluster_hop_seconds_total", "Time from sending messages to other nodes to their first sign of receipt (the reply; for a request sent without waiting, its acknowledgement or first stream event, which may include up to 200 ms of its handler's time); divided by mcp_cluster_hops_total, the mean hop.",
			nil, func(s ClusterStats) float64 { return s.HopTime.Seconds() }),
		counter("mcp_cluster_hops_total", "Messages routed to other nodes whose hop was timed in mcp_cluster_hop_seconds_total.",
			nil, func(s ClusterStats) float64 { return float64(s.Hops) }),
		counter("mcp_cluster_takeovers_total", "Sessions taken over from nodes whose lease lapsed.", nil,
			func(s ClusterStats) float64 { return float64(s.Takeovers) }),
		counter("mcp_cluster_lease_renewals_total", "Renewals of this node's lease, by outcome.", prometheus.Labels{"outcome": "ok"},
			func(s ClusterStats) float64 { return float64(s.LeaseRenewals) }),
		counter("mcp_cluster_lease_renewals_total", "Renewals of this node's lease, by outcome.", prometheus.Labels{"outcome": "failed"},
			func(s ClusterStats) float64 { return float64(s.LeaseRenewalFailures) }),
		counter("mcp_cluster_events_logged_total", "SSE events appended to the sessions' durable event logs: counted once JetStream acknowledged their batch.", nil,
			func(s ClusterStats) float64 { return float64(s.EventsLogged) }),
		counter("mcp_cluster_event_batches_total", "Writes of the event log: each carries a batch of events, of one or many sessions.", nil,
			func(s ClusterStats) float64 { return float64(s.EventBatches) }),
		counter("mcp_cluster_events_restored_total", "Events read back from the event logs of sessions taken over.", nil,
			func(s ClusterStats) float64 { return float64(s.EventsRestored) }),
		counter("mcp_cluster_write_failures_total", "Event log and session directory writes that failed or were refused.", nil,
			func(s ClusterStats) float64 { return float64(s.WriteFailures) }),
		counter("mcp_cluster_unacknowledged_requests_total", "Requests routed to another node that no acknowledgement reached in time: ended with an error, or delivered again after a takeover.", nil,
			func(s ClusterStats) float64 { return float64(s.Unacknowledged) }),
		counter("mcp_cluster_handover_messages_total", "Routed messages a node answered while it shut down: requests held while their session closed (held), and messages told that their session was released for the sender to take it over (released).", prometheus.Labels{"outcome": "held"},
			func(s ClusterStats) float64 { return float64(s.HandoverHeld) }),
		counter("mcp_cluster_handover_messages_total", "Routed messages a node answered while it shut down: requests held while their session closed (held), and messages told that their session was released for the sender to take it over (released).", prometheus.Labels{"outcome": "released"},
			func(s ClusterStats) float64 { return float64(s.HandoverReleased) }),
		counter("mcp_cluster_lost_answers_total", "Requests routed to another node, accepted there, whose answer was lost on its way back: ended with an error.", nil,
			func(s ClusterStats) float64 { return float64(s.LostAnswers) }),
		counter("mcp_cluster_nats_errors_total", "Asynchronous NATS errors: a subscription that fell behind (slow consumer) and dropped messages.", nil,
			func(s ClusterStats) float64 { return float64(s.NATSErrors) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "mcp_cluster_acting",
			Help: "1 while this node acts for its sessions (its lease is surely alive), 0 while it may have lapsed."},
			func() float64 {
				if stats().Acting {
					return 1
				}
				return 0
			}),
		counter("mcp_cluster_gone_streams_total", "Sessions on other nodes told that a stream they sent an event to is no longer held here.", nil,
			func(s ClusterStats) float64 { return float64(s.GoneStreams) }),
		counter("mcp_cluster_foreign_stream_events_total", "Stream events dropped for coming from another session than their stream's.", nil,
			func(s ClusterStats) float64 { return float64(s.ForeignEvents) }),
		counter("mcp_cluster_stale_stream_events_total", "Stream events dropped for coming from an owner that lost the session (an earlier epoch than one the stream took).", nil,
			func(s ClusterStats) float64 { return float64(s.StaleEvents) }),
		counter("mcp_cluster_chunked_messages_total", chunkedHelp, out, func(s ClusterStats) float64 { return float64(s.ChunkedOut) }),
		counter("mcp_cluster_chunked_messages_total", chunkedHelp, in, func(s ClusterStats) float64 { return float64(s.ChunkedIn) }),
		counter("mcp_cluster_partial_messages_dropped_total", "Messages received in chunks and dropped before they were whole (a chunk lost, out of order or late; a bound broken).", nil,
			func(s ClusterStats) float64 { return float64(s.PartialsDropped) }),
		counter("mcp_cluster_events_too_large_total", "Events left out of the durable event log for being larger than one JetStream message (the owner still replays them from memory).", nil,
			func(s ClusterStats) float64 { return float64(s.EventsTooLarge) }),
	)
}

// ClusterTopology is what a cluster node sees of its cluster at a scrape.
type ClusterTopology struct {
	Peers    int                      // other nodes routed to; -1 when the node cannot tell
	Leads    map[string]bool          // the storage this node leads, by store name
	LeaseAge time.Duration            // since the last successful lease renewal was sent; -1 before the first
	Quorum   bool                     // the node reaches a majority of the storage's replicas
	RouteRTT map[string]time.Duration // round trip of the routes, by peer
}

// RegisterClusterTopology registers the gauges of what a cluster node sees
// of its cluster, read from topology at every scrape:
//
//	mcp_cluster_peers                       (other nodes this node has routes to; -1: unknown, external NATS)
//	mcp_cluster_storage_leader{store="…"}   (1 where this node leads that storage)
//	mcp_cluster_storage_quorum              (1 while this node reaches a majority of the storage's replicas)
//	mcp_cluster_lease_age_seconds           (since the node's last successful lease renewal; -1 before the first)
//	mcp_cluster_route_rtt_seconds{peer="…"} (round trip of the route to that node, as NATS last measured it)
func RegisterClusterTopology(reg prometheus.Registerer, stores []string, topology func() ClusterTopology) {
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "mcp_cluster_storage_quorum",
		Help: "1 while this node has routes to a majority of the storage's replicas (1 when it cannot tell: external NATS, or alone), else 0: it opens no session and answers 503."},
		func() float64 {
			if topology().Quorum {
				return 1
			}
			return 0
		}))
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "mcp_cluster_lease_age_seconds",
		Help: "Time since this node's last successful lease renewal was sent (renewed every lease TTL/4; at TTL - TTL/5 the node stops acting for its sessions); -1 before its first."},
		func() float64 {
			if age := topology().LeaseAge; age >= 0 {
				return age.Seconds()
			}
			return -1
		}))
	reg.MustRegister(routeRTT{desc: prometheus.NewDesc("mcp_cluster_route_rtt_seconds",
		"Round trip of this node's route to another node, as NATS last measured it (the network's part of a hop).", []string{"peer"}, nil),
		topology: topology})
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "mcp_cluster_peers",
		Help: "Other nodes of the cluster this node has routes to (-1: it cannot tell, with an external NATS deployment)."},
		func() float64 { return float64(topology().Peers) }))
	for _, store := range stores {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "mcp_cluster_storage_leader",
			Help:        "1 where this node leads the JetStream stream of that storage (its reads and writes go through this node), else 0.",
			ConstLabels: prometheus.Labels{"store": store}},
			func() float64 {
				if topology().Leads[store] {
					return 1
				}
				return 0
			}))
	}
}

// routeRTT collects mcp_cluster_route_rtt_seconds, one series per peer
// routed to now.
type routeRTT struct {
	desc     *prometheus.Desc
	topology func() ClusterTopology
}

func (c routeRTT) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c routeRTT) Collect(ch chan<- prometheus.Metric) {
	for peer, rtt := range c.topology().RouteRTT {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, rtt.Seconds(), peer)
	}
}
