package cluster

import "github.com/mcp-actors/mcp-actors/messages"

// Format is one of the formats nodes of a cluster exchange: what this
// release writes, and the oldest version it reads. A release reads what
// the release before it writes, so nodes can be upgraded one at a time
// (docs/operations.md, Upgrades).
type Format struct {
	Name      string
	Writes    int
	ReadsFrom int
}

// Formats lists the cluster's formats: the routing envelope (actor
// messages and stream frames between nodes, and the event log's entries),
// the session directory's record, the lease record and the catalog's
// entries. A format without a version field of its own (the lease, the
// catalog) is version 1; its next version adds one, which this release's
// decoders ignore (they skip what they do not know).
func Formats() []Format {
	return []Format{
		{Name: "routing envelope", Writes: messages.EnvelopeFormat, ReadsFrom: 0},
		{Name: "directory record", Writes: recordVersion, ReadsFrom: 1},
		{Name: "lease record", Writes: 1, ReadsFrom: 1},
		{Name: "catalog entry", Writes: 1, ReadsFrom: 1},
	}
}
