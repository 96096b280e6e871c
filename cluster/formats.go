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
// entries. The envelope's first byte is its version; the directory and
// lease records carry "v" (a lease record without it, from v0.1.0, is
// version 1 too); a catalog entry's version is its key's prefix ("tool.",
// "res.": version 1; another version takes other prefixes, which this
// release does not read, as its values would not parse here); a forwarded
// modern request (the retry of a continuation, sent to the continuation's
// node) carries "v", new in this release: a node of the previous release
// does not subscribe to them, and its continuations' retries run again
// from their journal where they land.
func Formats() []Format {
	return []Format{
		{Name: "routing envelope", Writes: messages.EnvelopeFormat, ReadsFrom: 0},
		{Name: "directory record", Writes: recordVersion, ReadsFrom: 1},
		{Name: "lease record", Writes: leaseVersion, ReadsFrom: 1},
		{Name: "catalog entry", Writes: 1, ReadsFrom: 1},
		{Name: "forwarded request", Writes: modernFormat, ReadsFrom: modernFormat},
		{Name: "elicitation completion", Writes: completionFormat, ReadsFrom: completionFormat},
	}
}
