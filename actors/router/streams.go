package router

import (
	"crypto/rand"
	"encoding/binary"
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
// Receiver, and the session each stream belongs to. Its methods are safe
// for concurrent use.
//
// Stream IDs are named for life: each registry draws a random boot, so a
// node that restarts under the same name never gives an ID of its earlier
// run again, and an event addressed to a stream of that run finds none
// here. A stream takes events only from its own session.
type Streams struct {
	node    string
	boot    uint64
	next    atomic.Uint64
	m       sync.Map     // uint64 → *registration
	foreign atomic.Int64 // events refused for coming from another session
	stale   atomic.Int64 // events refused for coming from an owner of an earlier epoch
}

// registration is one stream of the registry.
type registration struct {
	// session is the session the stream belongs to; nil until its first
	// event for a stream registered without one.
	session atomic.Pointer[string]
	// epoch is the highest owner epoch of the events the stream took.
	epoch atomic.Uint64
	r     Receiver
}

// Delivery says what became of an event handed to a registry (Offer).
type Delivery uint8

const (
	// Delivered: the stream's receiver took the event.
	Delivered Delivery = iota
	// Refused: the receiver refused it; its client is gone or not
	// keeping up.
	Refused
	// NoStream: the registry holds no such stream — it is another node's
	// or another run's, or it was unregistered.
	NoStream
	// Foreign: the stream belongs to another session than the event's;
	// the event is dropped.
	Foreign
	// Stale: the stream took an event of a later owner epoch of its
	// session than the event's (the event comes from an owner that lost
	// the session); it is dropped.
	Stale
)

// String names the outcome.
func (d Delivery) String() string {
	switch d {
	case Delivered:
		return "delivered"
	case Refused:
		return "refused"
	case NoStream:
		return "no-stream"
	case Foreign:
		return "foreign"
	case Stale:
		return "stale"
	}
	return "delivery(?)"
}

// NewStreams returns the registry of node ("" outside a cluster), with a
// boot of its own.
func NewStreams(node string) *Streams {
	s := &Streams{node: node}
	var b [8]byte
	for s.boot == 0 {
		_, _ = rand.Read(b[:]) // never fails (crypto/rand)
		s.boot = binary.LittleEndian.Uint64(b[:])
	}
	return s
}

// Node returns the node the registry belongs to.
func (s *Streams) Node() string { return s.node }

// Boot returns the registry's boot: the part of its stream IDs that no
// other run of the node shares.
func (s *Streams) Boot() uint64 { return s.boot }

// Register adds r as a stream of session, and returns the ID sessions
// address it by. Unregister it when its connection is done. A stream
// registered with no session ("") belongs to the session of its first
// event; every transport knows its session when it registers a stream
// (an initialize's stream is registered once Open has made its session).
func (s *Streams) Register(session string, r Receiver) messages.StreamID {
	id := messages.StreamID{Node: s.node, Boot: s.boot, N: s.next.Add(1)}
	reg := &registration{r: r}
	if session != "" {
		reg.session.Store(&session)
	}
	s.m.Store(id.N, reg)
	return id
}

// Unregister removes stream id; events for it are refused from now on.
func (s *Streams) Unregister(id messages.StreamID) {
	if s.lookup(id) != nil {
		s.m.Delete(id.N)
	}
}

// Deliver hands ev to the receiver of its stream, and reports whether it
// took it (false for a stream this registry does not hold, or of another
// session).
func (s *Streams) Deliver(ev messages.StreamEvent) bool { return s.Offer(ev) == Delivered }

// Offer hands ev to the receiver of its stream, if the registry holds the
// stream, it belongs to ev's session, and it has taken no event of a later
// owner epoch (ev.Epoch 0 is not compared), and says what became of it.
func (s *Streams) Offer(ev messages.StreamEvent) Delivery {
	reg := s.lookup(ev.Stream)
	if reg == nil {
		return NoStream
	}
	owner := reg.session.Load()
	if owner == nil && ev.Session != "" {
		first := ev.Session // the stream's first event binds it
		reg.session.CompareAndSwap(nil, &first)
		owner = reg.session.Load()
	}
	if owner == nil || *owner != ev.Session {
		s.foreign.Add(1)
		return Foreign
	}
	if ev.Epoch != 0 && !reg.takeEpoch(ev.Epoch) {
		s.stale.Add(1)
		return Stale
	}
	if !reg.r.Receive(ev) {
		return Refused
	}
	return Delivered
}

// ForeignEvents returns how many events the registry dropped because they
// came from another session than their stream's.
func (s *Streams) ForeignEvents() int64 { return s.foreign.Load() }

// StaleEvents returns how many events the registry dropped because they
// came from an owner of an earlier epoch than one their stream heard from.
func (s *Streams) StaleEvents() int64 { return s.stale.Load() }

// takeEpoch raises the stream's epoch to e and reports true, or reports
// false when the stream has taken an event of a later epoch.
func (reg *registration) takeEpoch(e uint64) bool {
	for {
		cur := reg.epoch.Load()
		if e < cur {
			return false
		}
		if e == cur || reg.epoch.CompareAndSwap(cur, e) {
			return true
		}
	}
}

// Gone reports whether stream id is held here no longer, or its client has
// gone.
func (s *Streams) Gone(id messages.StreamID) bool {
	reg := s.lookup(id)
	return reg == nil || reg.r.Gone()
}

// Holds reports whether stream id is registered here.
func (s *Streams) Holds(id messages.StreamID) bool { return s.lookup(id) != nil }

// Len returns the number of streams registered.
func (s *Streams) Len() int {
	n := 0
	s.m.Range(func(any, any) bool { n++; return true })
	return n
}

func (s *Streams) lookup(id messages.StreamID) *registration {
	if id.Node != s.node || id.Boot != s.boot {
		return nil
	}
	if reg, ok := s.m.Load(id.N); ok {
		return reg.(*registration)
	}
	return nil
}
