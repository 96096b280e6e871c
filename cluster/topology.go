package cluster

import "time"

// Topology is what a node sees of its cluster at one moment, for metrics
// and for deciding whether its storage can answer (reachesQuorum).
type Topology struct {
	// Peers is how many other nodes this node has routes to; -1 when it
	// cannot tell (it uses an external NATS deployment).
	Peers int
	// Leads names the storage this node leads ("sessions", "leases",
	// "catalog", "events", "journals"): reads and writes of it go through
	// this node.
	// Nil with an external NATS deployment.
	Leads []string
	// LeaseAge is the time since the node's last successful lease renewal
	// was sent; -1 before its first.
	LeaseAge time.Duration
	// Quorum reports whether the node has routes to a majority of the
	// storage's replicas (true when it cannot tell: an external NATS
	// deployment, or a node on its own).
	Quorum bool
	// RouteRTT is the round trip of the node's routes, by peer, as NATS
	// last measured it (nil with an external NATS deployment).
	RouteRTT map[string]time.Duration
}

// storeStreams names the cluster's storage as metrics do, with the bucket
// each is kept in.
var storeStreams = []struct{ store, bucket string }{
	{"sessions", "sessions"}, {"leases", "nodes"}, {"catalog", "catalog"}, {"events", "events"},
	{"journals", "journals"}, // made at the first spill (journals.go)
}

// Stores are the names Topology.Leads uses, in a fixed order.
func Stores() []string {
	names := make([]string, len(storeStreams))
	for i, s := range storeStreams {
		names[i] = s.store
	}
	return names
}

// globalAccount is the NATS account the node's in-process clients, and so
// its JetStream streams, belong to.
const globalAccount = "$G"

// Topology returns what the node sees of its cluster now.
func (n *Node) Topology() Topology {
	age := time.Duration(-1)
	if at := n.lease.renewed.Load(); at != 0 {
		age = n.now().mono - time.Duration(at)
	}
	if n.ns == nil {
		return Topology{Peers: -1, LeaseAge: age, Quorum: true}
	}
	routes := n.routes()
	t := Topology{Peers: len(routes), LeaseAge: age, Quorum: n.quorumWith(len(routes)), RouteRTT: map[string]time.Duration{}}
	for peer, rtt := range routes {
		if rtt >= 0 {
			t.RouteRTT[peer] = rtt
		}
	}
	for _, s := range storeStreams {
		if n.ns.JetStreamIsStreamLeader(globalAccount, n.streamOf(s.store)) || (n.Standalone() && n.ns.JetStreamEnabled()) {
			t.Leads = append(t.Leads, s.store)
		}
	}
	return t
}
