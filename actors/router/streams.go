package router

import (
	"sync"
	"sync/atomic"

	"github.com/mcp-actors/mcp-actors/messages"
)

// Receiver is the end of one stream on the node that holds its connection:
// it takes the stream's events, in order, from whichever goroutine delivers
// them (a session actor's, or the cluster's), and must never block.
type Receiver interface {
	// Receive takes ev, or refuses it (false) when the stream is gone or
	// its client is not keeping up; a refused stream gets nothing more.
	Receive(ev messages.StreamEvent) bool
	// Gone reports whether the stream's client is known to have gone.
	Gone() bool
}

// Streams is a node's registry of the streams it holds: stream ID to
// Receiver. Its methods are safe for concurrent use.
type Streams struct {
	node string
	next atomic.Uint64
	m    sync.Map // uint64 → Receiver
}

// NewStreams returns the registry of node ("" outside a cluster).
func NewStreams(node string) *Streams { return &Streams{node: node} }

// Node returns the node the registry belongs to.
func (s *Streams) Node() string { return s.node }

// Register adds r and returns the ID sessions address it by. Unregister it
// when its connection is done.
func (s *Streams) Register(r Receiver) messages.StreamID {
	id := messages.StreamID{Node: s.node, N: s.next.Add(1)}
	s.m.Store(id.N, r)
	return id
}

// Replace makes r the receiver of stream id from now on (a deliverer that
// looked up the old one may still hand it an event: it must pass such
// events on to r).
func (s *Streams) Replace(id messages.StreamID, r Receiver) {
	if id.Node == s.node {
		s.m.Store(id.N, r)
	}
}

// Unregister removes stream id; events for it are refused from now on.
func (s *Streams) Unregister(id messages.StreamID) {
	if id.Node == s.node {
		s.m.Delete(id.N)
	}
}

// Deliver hands ev to the receiver of its stream, and reports whether it
// took it (false for a stream this node does not hold).
func (s *Streams) Deliver(ev messages.StreamEvent) bool {
	r := s.lookup(ev.Stream)
	return r != nil && r.Receive(ev)
}

// Gone reports whether stream id is held here no longer, or its client has
// gone.
func (s *Streams) Gone(id messages.StreamID) bool {
	r := s.lookup(id)
	return r == nil || r.Gone()
}

// Holds reports whether stream id is registered here.
func (s *Streams) Holds(id messages.StreamID) bool { return s.lookup(id) != nil }

// Len returns the number of streams registered.
func (s *Streams) Len() int {
	n := 0
	s.m.Range(func(any, any) bool { n++; return true })
	return n
}

func (s *Streams) lookup(id messages.StreamID) Receiver {
	if id.Node != s.node {
		return nil
	}
	if r, ok := s.m.Load(id.N); ok {
		return r.(Receiver)
	}
	return nil
}
