package cluster

// What the cluster keeps durable is written to JetStream one NATS message
// at a time, and a message is stored as it was published: unlike routed
// messages (chunks.go), a durable write is never cut in pieces, so it must
// fit in the NATS max payload (1 MiB unless the deployment's operator set
// another), less room for the write's headers (revision checks, batch
// IDs). A session's State must fit: the server sets the sessions'
// session.Limits.MaxStateBytes from MaxStateBytes, so PutData refuses a
// value that would break it. A logged event that does not fit is left out
// of the event log alone (eventlog.go): the session still replays it from
// memory while its owner lives.

// durableReserve is kept free in every durable write for its headers.
const durableReserve = 4 << 10

// maxDurable returns the largest payload of one durable write.
func (n *Node) maxDurable() int { return int(n.nc.MaxPayload()) - durableReserve }

// MaxStateBytes returns the largest session State, encoded, that the node
// keeps durable (session.Limits.MaxStateBytes); 0 for a node on its own,
// which keeps none.
func (r *relay) MaxStateBytes() int {
	if r.node.Standalone() {
		return 0
	}
	return r.node.maxDurable()
}
