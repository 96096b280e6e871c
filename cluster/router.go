package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/mcp-actors/mcp-actors/actors/router"
	"github.com/mcp-actors/mcp-actors/messages"
)

// Router is the router.Router of a cluster node: sessions this node owns
// are reached through the node's router.Local, as in one process; the
// others through NATS, on the subject of the node that owns them. Frames
// for a stream this node holds go to its registry; frames for another
// node's stream go there over NATS. The Router delivers messages: it never
// reaches into a session actor's state.
//
//	transport ──Deliver(id, m)──▶ owner(id) == this node? ──yes──▶ Local.Deliver
//	                                   └──no──▶ NATS request node.<owner>.session ──▶ owner's Local.Deliver ──▶ ack
//	session ──DeliverStream(ev)──▶ ev.Stream.Node == this node? ──yes──▶ Streams.Deliver
//	                                   └──no──▶ NATS publish node.<holder>.stream ──▶ holder's Streams.Deliver
//
// A session's ID names the node that opened it ("<node>.<random>"), so
// finding the owner costs no storage read.
type Router struct {
	node    *Node
	local   *router.Local
	streams *router.Streams
	subs    []*nats.Subscription

	dir sync.Map // session ID → *entry: directory entries read, for Lookup

	closed    atomic.Bool
	watchStop func()         // stops the catalog watch (WatchCatalog)
	watchDone sync.WaitGroup // the watch's goroutine
}

// Header names of routed messages.
const (
	headerSession   = "Mcp-Session"
	headerStatus    = "Mcp-Status"
	headerOp        = "Mcp-Op"        // "lookup": a Lookup, not a message
	headerPrincipal = "Mcp-Principal" // a lookup's answer
	headerVersion   = "Mcp-Version"   // a lookup's answer
)

// opLookup asks the owner what a transport checks about a session.
const opLookup = "lookup"

// Delivery outcomes in a reply's Mcp-Status header.
const (
	statusOK       = "ok"
	statusNotFound = "not-found"
	statusBad      = "bad"
)

// deliverTimeout bounds a delivery to another node.
const deliverTimeout = 5 * time.Second

// NewRouter makes local (this node's sessions; its registry must be named
// after the node) reachable from the cluster, and returns the Router the
// node's transports use. It subscribes to the node's subjects; Close
// unsubscribes.
func NewRouter(node *Node, local *router.Local) (*Router, error) {
	if local.Streams().Node() != node.ID() {
		return nil, fmt.Errorf("cluster: the stream registry is named %q, not after node %q", local.Streams().Node(), node.ID())
	}
	r := &Router{node: node, local: local, streams: local.Streams()}
	local.SetSessionIDs(func() string { return node.ID() + "." + router.NewSessionID() })
	sub, err := node.nc.Subscribe(node.subj.session(node.ID()), r.onSession)
	if err != nil {
		return nil, fmt.Errorf("cluster: subscribing to the node's sessions: %w", err)
	}
	r.subs = append(r.subs, sub)
	sub, err = node.nc.Subscribe(node.subj.stream(node.ID()), r.onStream)
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("cluster: subscribing to the node's streams: %w", err)
	}
	r.subs = append(r.subs, sub)
	if err := node.nc.Flush(); err != nil {
		r.Close()
		return nil, fmt.Errorf("cluster: %w", err)
	}
	return r, nil
}

// Ready reports whether the node can serve (see Node.Ready).
func (r *Router) Ready() error { return r.node.Ready() }

// Close stops receiving messages for this node, and the catalog watch.
func (r *Router) Close() {
	r.closed.Store(true)
	for _, s := range r.subs {
		_ = s.Unsubscribe()
	}
	r.node.mu.Lock()
	stop := r.watchStop
	r.node.mu.Unlock()
	if stop != nil {
		stop()
	}
	r.watchDone.Wait()
}

// ownerOf returns the node that owns session id.
func (r *Router) ownerOf(id string) string {
	if v, ok := r.dir.Load(id); ok {
		return v.(*entry).Owner
	}
	node, _, ok := strings.Cut(id, ".")
	if !ok {
		return ""
	}
	return node
}

// Open implements router.Router: a session opened here is owned here.
func (r *Router) Open(ctx context.Context, o router.OpenOptions) (string, error) {
	id, err := r.local.Open(ctx, o)
	if err != nil {
		return "", err
	}
	r.record(&entry{Session: id, Owner: r.node.ID(), Epoch: 1, Principal: o.Principal})
	return id, nil
}

// Lookup implements router.Router.
func (r *Router) Lookup(ctx context.Context, id string) (router.Meta, error) {
	owner := r.ownerOf(id)
	if owner == "" {
		return router.Meta{}, router.ErrSessionNotFound
	}
	if owner == r.node.ID() {
		return r.local.Lookup(ctx, id)
	}
	if v, ok := r.dir.Load(id); ok {
		return router.Meta{Principal: v.(*entry).Principal}, nil
	}
	// Asked of the owner once per session and node: a session's principal
	// never changes.
	msg := nats.NewMsg(r.node.subj.session(owner))
	msg.Header.Set(headerSession, id)
	msg.Header.Set(headerOp, opLookup)
	reply, err := r.request(ctx, owner, msg)
	if err != nil {
		return router.Meta{}, err
	}
	meta := router.Meta{Principal: reply.Header.Get(headerPrincipal), ProtocolVersion: reply.Header.Get(headerVersion)}
	r.dir.Store(id, &entry{Session: id, Owner: owner, Principal: meta.Principal})
	return meta, nil
}

// request sends msg to owner and returns its reply, or ErrSessionNotFound
// when the owner says so or does not answer.
func (r *Router) request(ctx context.Context, owner string, msg *nats.Msg) (*nats.Msg, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, deliverTimeout)
		defer cancel()
	}
	reply, err := r.node.nc.RequestMsgWithContext(ctx, msg)
	if err != nil {
		if errors.Is(err, nats.ErrNoResponders) {
			return nil, fmt.Errorf("%w: its node %s does not answer", router.ErrSessionNotFound, owner)
		}
		return nil, fmt.Errorf("cluster: asking node %s: %w", owner, err)
	}
	switch reply.Header.Get(headerStatus) {
	case statusOK:
		return reply, nil
	case statusNotFound:
		return nil, router.ErrSessionNotFound
	}
	return nil, fmt.Errorf("cluster: node %s refused the message: %s", owner, reply.Data)
}

// Deliver implements router.Router.
func (r *Router) Deliver(ctx context.Context, id string, m messages.ActorMessage) error {
	owner := r.ownerOf(id)
	switch owner {
	case "":
		return router.ErrSessionNotFound
	case r.node.ID():
		return r.local.Deliver(ctx, id, m)
	}
	data, err := messages.EncodeActorMessage(m)
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	msg := nats.NewMsg(r.node.subj.session(owner))
	msg.Header.Set(headerSession, id)
	msg.Data = data
	_, err = r.request(ctx, owner, msg)
	return err
}

// onSession receives a message for one of this node's sessions, or a
// lookup of one.
func (r *Router) onSession(msg *nats.Msg) {
	reply := nats.NewMsg(msg.Reply)
	id := msg.Header.Get(headerSession)
	if msg.Header.Get(headerOp) == opLookup {
		if meta, err := r.local.Lookup(context.Background(), id); err != nil {
			reply.Header.Set(headerStatus, statusNotFound)
		} else {
			reply.Header.Set(headerStatus, statusOK)
			reply.Header.Set(headerPrincipal, meta.Principal)
			reply.Header.Set(headerVersion, meta.ProtocolVersion)
		}
		_ = msg.RespondMsg(reply)
		return
	}
	m, err := messages.DecodeActorMessage(msg.Data)
	switch {
	case err != nil:
		reply.Header.Set(headerStatus, statusBad)
		reply.Data = []byte(err.Error())
	case !r.accepts(id, m) || r.local.Deliver(context.Background(), id, m) != nil:
		reply.Header.Set(headerStatus, statusNotFound)
	default:
		reply.Header.Set(headerStatus, statusOK)
	}
	if msg.Reply != "" {
		_ = msg.RespondMsg(reply)
	}
}

// accepts checks, for the messages a session does not answer on a stream,
// that the session exists for their sender: a DELETE from another
// principal must read as an unknown session (404), not succeed.
func (r *Router) accepts(id string, m messages.ActorMessage) bool {
	d, ok := m.(*messages.DeleteSession)
	if !ok {
		return true
	}
	meta, err := r.local.Lookup(context.Background(), id)
	return err == nil && meta.Principal == d.Principal
}

// DeliverStream implements router.Router and session.Streams. An event for
// another node's stream is published to that node: it is reported taken,
// and the holder tells the session if the stream turns out to be gone.
func (r *Router) DeliverStream(ev messages.StreamEvent) bool {
	if ev.Stream.Node == r.node.ID() {
		return r.streams.Deliver(ev)
	}
	data, err := messages.EncodeStreamEvent(ev)
	if err != nil {
		r.node.log.Error("encoding a stream event failed", "stream", ev.Stream.String(), "err", err)
		return false
	}
	if err := r.node.nc.Publish(r.node.subj.stream(ev.Stream.Node), data); err != nil {
		r.node.log.Warn("sending a stream event failed", "stream", ev.Stream.String(), "err", err)
		return false
	}
	return true
}

// onStream receives an event for one of this node's streams.
func (r *Router) onStream(msg *nats.Msg) {
	ev, err := messages.DecodeStreamEvent(msg.Data)
	if err != nil {
		r.node.log.Warn("dropping a stream event that cannot be read", "err", err)
		return
	}
	r.streams.Deliver(ev)
}

// StreamGone implements router.Router and session.Streams. A stream held
// by another node reads as gone: a client that opens a GET stream on
// another node than its last one has moved (a load balancer sent it
// elsewhere), and its new stream takes the old one's place.
func (r *Router) StreamGone(id messages.StreamID) bool {
	if id.Node == r.node.ID() {
		return r.streams.Gone(id)
	}
	return true
}

// Streams implements router.Router.
func (r *Router) Streams() *router.Streams { return r.streams }
