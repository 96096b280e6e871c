package cluster

// Topology is what a node sees of its cluster at one moment, for metrics
// and for deciding whether its storage can answer (reachesQuorum).
type Topology struct {
	// Peers is how many other nodes this node has routes to; -1 when it
	// cannot tell (it uses an external NATS deployment).
	Peers int
	// Leads names the storage this node leads ("sessions", "leases",
	// "catalog", "events"): reads and writes of it go through this node.
	// Nil with an external NATS deployment.
	Leads []string
}

// storeStreams names the cluster's storage as metrics do, with the bucket
// each is kept in.
var storeStreams = []struct{ store, bucket string }{
	{"sessions", "sessions"}, {"leases", "nodes"}, {"catalog", "catalog"}, {"events", "events"},
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
	if n.ns == nil {
		return Topology{Peers: -1}
	}
	t := Topology{Peers: len(n.Peers())}
	for _, s := range storeStreams {
		stream := n.subj.bucket(s.bucket)
		if s.store != "events" {
			stream = "KV_" + stream
		}
		if n.ns.JetStreamIsStreamLeader(globalAccount, stream) || (n.Standalone() && n.ns.JetStreamEnabled()) {
			t.Leads = append(t.Leads, s.store)
		}
	}
	return t
}
