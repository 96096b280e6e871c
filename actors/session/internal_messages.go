package session

import (
	"github.com/mcp-actors/mcp-actors/messages"
)

// internalMessage is the sealed set of messages that Session handles and
// handler goroutines post to their own session actor.
type internalMessage interface{ sessionMessage() }

// requestDone reports that the handler of request id returned. frame is the
// encoded response.
type requestDone struct {
	id    messages.ID
	frame []byte
}

// sendFrame asks the session to send an encoded message on the stream of
// request route (the standalone stream when route is zero or gone).
type sendFrame struct {
	route messages.ID
	data  []byte
}

// sendLog asks the session to send an encoded notifications/message if its
// level (rank) passes the session's log level.
type sendLog struct {
	route messages.ID
	rank  int
	data  []byte
}

// closeStream asks the session to end the connection of request route's
// stream early, leaving it resumable.
type closeStream struct{ route messages.ID }

// getRoots asks for the cached roots.
type getRoots struct{ reply chan rootsSnapshot }

// storeRoots offers the session roots fetched while the cache was at epoch.
type storeRoots struct {
	epoch uint64
	roots []*messages.Root
}

// addRootsListener and removeRootsListener register and drop a listener.
type addRootsListener struct {
	id uint64
	fn RootsListener
}
type removeRootsListener struct{ id uint64 }

// rootsListenersDone reports that a run of the roots listeners finished.
type rootsListenersDone struct{}

// dataOp reads or writes the per-session data store.
type dataOp struct {
	op    dataOpKind
	key   string
	value []byte
	reply chan dataReply
}

func (*requestDone) sessionMessage()         {}
func (*sendFrame) sessionMessage()           {}
func (*sendLog) sessionMessage()             {}
func (*closeStream) sessionMessage()         {}
func (*getRoots) sessionMessage()            {}
func (*storeRoots) sessionMessage()          {}
func (*addRootsListener) sessionMessage()    {}
func (*removeRootsListener) sessionMessage() {}
func (*rootsListenersDone) sessionMessage()  {}
func (*dataOp) sessionMessage()              {}
