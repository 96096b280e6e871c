package cluster

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/mcp-actors/mcp-actors/actors/router"
	"github.com/mcp-actors/mcp-actors/actors/session"
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
//	                                            (a client request: published, answered only on failure — async.go)
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

	dir    sync.Map // session ID → *entry: directory entries read, for Lookup
	gone   sync.Map // session ID → time.Time: this node's sessions that ended (ended)
	remote sync.Map // messages.StreamID → remoteStream: streams here waiting on other nodes
	nGone  atomic.Int64
	stats  stats

	detaching   sync.Map     // messages.StreamID → struct{}: gone streams being reported (streams.go)
	goneReports atomic.Int32 // reports of gone streams in flight
	chunks      *chunker     // every routed publish, and the subscriptions' reassembly (chunks.go)

	asyncReply string             // prefix of the reply subjects of requests sent without waiting (async.go)
	ctx        context.Context    // ends at Close: the work the router starts
	cancel     context.CancelFunc // ends ctx
	bg         sync.WaitGroup     // redeliveries (async.go)

	closed    atomic.Bool
	draining  atomic.Bool    // Drain: take nothing over
	stopWatch chan struct{}  // stops watchOwners
	watchStop func()         // stops the catalog watch (WatchCatalog)
	watchDone sync.WaitGroup // the watch's goroutine
}

// Header names of routed messages.
const (
	headerSession = "Mcp-Session"
	headerStatus  = "Mcp-Status"
	headerOp      = "Mcp-Op"    // opAsync: not a plain delivery
	headerOwner   = "Mcp-Owner" // where a moved session is
)

// opAsync marks a request answered only when it cannot be delivered
// (async.go); a plain delivery is acknowledged.
const opAsync = "async"

// Delivery outcomes in a reply's Mcp-Status header.
const (
	statusOK       = "ok"
	statusNotFound = "not-found"
	statusMoved    = "moved" // with the owner in Mcp-Owner
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
	r := &Router{node: node, local: local, streams: local.Streams(), asyncReply: node.subj.async(node.ID())}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	r.chunks = newChunker(node.nc, node.log, node.ID()+"."+strconv.FormatUint(r.streams.Boot(), 16)+".", node.opts.MaxMessageBytes)
	local.SetSessionIDs(func() string { return node.ID() + "." + router.NewSessionID() })
	sub, err := r.chunks.subscribe(node.subj.session(node.ID()), r.onSession)
	if err != nil {
		return nil, fmt.Errorf("cluster: subscribing to the node's sessions: %w", err)
	}
	r.subs = append(r.subs, sub)
	if sub, err = node.nc.Subscribe(r.asyncReply+"*", r.onAsyncReply); err != nil {
		r.Close()
		return nil, fmt.Errorf("cluster: subscribing to the node's replies: %w", err)
	}
	r.subs = append(r.subs, sub)
	sub, err = r.chunks.subscribe(node.subj.stream(node.ID()), r.onStream)
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("cluster: subscribing to the node's streams: %w", err)
	}
	r.subs = append(r.subs, sub)
	if err := node.nc.Flush(); err != nil {
		r.Close()
		return nil, fmt.Errorf("cluster: %w", err)
	}
	node.onFenced(r.giveUp)
	r.stopWatch = make(chan struct{})
	r.watchDone.Add(1)
	go r.watchOwners(r.stopWatch)
	return r, nil
}

// giveUp closes, for handover, every session of this node: its lease
// lapsed and others may own them now. The cluster only sends messages: the
// sessions close themselves.
func (r *Router) giveUp() {
	n := 0
	r.local.Each(func(ref *session.Ref) bool {
		ref.Send(&messages.CloseSession{Reason: "this node's lease lapsed", Handover: true})
		n++
		return true
	})
	r.node.log.Warn("gave up every session: the lease lapsed", "sessions", n)
}

// Drain makes this node take no session over from now on (it is shutting
// down and hands its own over).
func (r *Router) Drain() { r.draining.Store(true) }

// HandsOver reports whether a session that ends because this node shuts
// down should be left for another node to take over (a node with peers)
// rather than ended.
func (r *Router) HandsOver() bool { return !r.node.Standalone() }

// Ready reports whether the node can serve (see Node.Ready).
func (r *Router) Ready() error { return r.node.Ready() }

// Close stops receiving messages for this node, and the catalog watch.
func (r *Router) Close() {
	if r.closed.Swap(true) {
		return
	}
	if r.stopWatch != nil {
		close(r.stopWatch)
	}
	for _, s := range r.subs {
		_ = s.Unsubscribe()
	}
	r.chunks.close()
	r.node.mu.Lock() // no redelivery starts from now on (async.go)
	r.node.mu.Unlock()
	r.cancel()
	r.bg.Wait()
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

// Check implements router.Router. For a session on another node it asks
// nothing: every message routed there carries the principal, and the
// owner refuses one of another principal as an unknown session (accept,
// and the session itself for requests and streams), so the check costs no
// round trip. A principal known to differ is refused here.
func (r *Router) Check(ctx context.Context, id, principal string) error {
	owner := r.ownerOf(id)
	if owner == "" {
		return router.ErrSessionNotFound
	}
	if owner == r.node.ID() {
		err := r.local.Check(ctx, id, principal)
		if !errors.Is(err, router.ErrSessionNotFound) || r.ended(id) {
			return err
		}
		// Not here: this node restarted, or the session moved.
		if owner, err = r.recover(ctx, id, owner); err != nil {
			return err
		}
		if owner == r.node.ID() {
			return r.local.Check(ctx, id, principal)
		}
	}
	if v, ok := r.dir.Load(id); ok && v.(*entry).known && v.(*entry).Principal != principal {
		return router.ErrSessionNotFound
	}
	return nil
}

// maxHops bounds how often one delivery follows a session that moved.
const maxHops = 4

// errNoOwner reports that the node a message was sent to does not answer
// on its subject: it is gone.
var errNoOwner = errors.New("cluster: the session's node does not answer")

// movedError reports that the session is owned elsewhere now.
type movedError struct{ owner string }

func (e *movedError) Error() string { return "cluster: the session moved to node " + e.owner }

// request sends msg to the owner and returns its reply; errNoOwner when
// nobody answers, a *movedError when the owner says the session moved,
// ErrSessionNotFound when it says there is none.
func (r *Router) request(ctx context.Context, msg *nats.Msg) (*nats.Msg, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, deliverTimeout)
		defer cancel()
	}
	r.stats.routed.Add(1)
	start := time.Now()
	reply, err := r.chunks.request(ctx, msg)
	r.stats.hop(time.Since(start))
	if err != nil {
		if errors.Is(err, nats.ErrNoResponders) {
			return nil, errNoOwner
		}
		return nil, fmt.Errorf("cluster: routing a message: %w", err)
	}
	if err := replyErr(reply); err != nil {
		return nil, err
	}
	return reply, nil
}

// replyErr reads the outcome of a delivery from the owner's reply: nil,
// ErrSessionNotFound, a *movedError, or the owner's refusal. A reply
// NATS gave for a subject nobody listens on (status 503: no responders,
// to a request sent without waiting, async.go) is errNoOwner.
func replyErr(reply *nats.Msg) error {
	switch reply.Header.Get(headerStatus) {
	case statusOK:
		return nil
	case statusNotFound:
		return router.ErrSessionNotFound
	case statusMoved:
		return &movedError{owner: reply.Header.Get(headerOwner)}
	}
	if reply.Header.Get("Status") == "503" {
		return errNoOwner
	}
	return fmt.Errorf("cluster: the node refused the message: %s", reply.Data)
}

// reroute decides what follows a request to owner that failed with err:
// ("", nil) when it did not fail, the node to try next, or the error to
// give up with. A node that does not answer is taken over from when its
// lease has lapsed. The error given up with is ErrSessionNotFound only when
// there is no such session (404); anything else — a live owner that does
// not answer, storage electing a leader — is a failure the client may try
// again (503).
func (r *Router) reroute(ctx context.Context, id, owner string, err error) (string, error) {
	var moved *movedError
	switch {
	case err == nil:
		return "", nil
	case errors.As(err, &moved) && moved.owner != "":
		r.setOwner(id, moved.owner)
		return moved.owner, nil
	case errors.Is(err, errNoOwner):
		next, rerr := r.recover(ctx, id, owner)
		if rerr != nil {
			r.node.log.Warn("a session's node does not answer and the session cannot be taken over", "session", id, "owner", owner, "err", rerr)
			return "", rerr
		}
		return next, nil
	}
	return "", err
}

// Deliver implements router.Router.
func (r *Router) Deliver(ctx context.Context, id string, m messages.ActorMessage) error {
	owner := r.ownerOf(id)
	if owner == "" {
		return router.ErrSessionNotFound
	}
	var data []byte
	for range maxHops {
		if owner == r.node.ID() {
			err := r.local.Deliver(ctx, id, m)
			if !errors.Is(err, router.ErrSessionNotFound) || r.ended(id) {
				return err
			}
			// Not here: this node restarted, or the session moved.
			if owner, err = r.recover(ctx, id, owner); err != nil {
				return err
			}
			continue
		}
		if hr, ok := m.(*messages.HandleRequest); ok && hr.Stream.Node == r.node.ID() {
			if err := r.sendAsync(owner, id, hr); err != nil {
				return fmt.Errorf("cluster: %w", err)
			}
			return nil
		}
		if data == nil {
			var err error
			if data, err = messages.EncodeActorMessage(m); err != nil {
				return fmt.Errorf("cluster: %w", err)
			}
		}
		msg := nats.NewMsg(r.node.subj.session(owner))
		msg.Header.Set(headerSession, id)
		msg.Data = data
		_, err := r.request(ctx, msg)
		next, err := r.reroute(ctx, id, owner, err)
		if err != nil {
			return err
		}
		if next == "" {
			r.track(owner, id, m)
			return nil
		}
		owner = next
	}
	return fmt.Errorf("%w: it moved too often", router.ErrSessionNotFound)
}

// setOwner records that session id is owned by owner now, keeping what
// is known of its principal.
func (r *Router) setOwner(id, owner string) {
	e := &entry{Session: id, Owner: owner}
	if v, ok := r.dir.Load(id); ok {
		old := v.(*entry)
		e.Principal, e.Epoch, e.known = old.Principal, old.Epoch, old.known
	}
	r.dir.Store(id, e)
}

// onSession receives a message for one of this node's sessions. A
// session this node does not hold may have been its own before it
// restarted (it is restored here) or moved (the sender is told where).
func (r *Router) onSession(msg *nats.Msg) {
	r.stats.received.Add(1)
	reply := nats.NewMsg(msg.Reply)
	id := msg.Header.Get(headerSession)
	ctx, cancel := context.WithTimeout(context.Background(), deliverTimeout)
	defer cancel()
	m, err := messages.DecodeActorMessage(msg.Data)
	if err != nil {
		reply.Header.Set(headerStatus, statusBad)
		reply.Data = []byte(err.Error())
		_ = msg.RespondMsg(reply)
		return
	}
	for range 2 {
		err := r.accept(ctx, id, m)
		if err == nil {
			err = r.local.Deliver(ctx, id, m)
		}
		if errors.Is(err, errForeign) {
			reply.Header.Set(headerStatus, statusNotFound)
			break
		}
		if err == nil {
			reply.Header.Set(headerStatus, statusOK)
			break
		}
		if r.ended(id) {
			reply.Header.Set(headerStatus, statusNotFound)
			break
		}
		owner, rerr := r.recover(ctx, id, r.node.ID())
		switch {
		case errors.Is(rerr, router.ErrSessionNotFound):
			reply.Header.Set(headerStatus, statusNotFound)
		case rerr != nil:
			// Not "no such session": it may exist but cannot be reached
			// now (storage electing a leader, a live owner that does not
			// answer): the sender answers 503 and the client retries.
			reply.Header.Set(headerStatus, statusBad)
			reply.Data = []byte(rerr.Error())
		case owner != r.node.ID():
			reply.Header.Set(headerStatus, statusMoved)
			reply.Header.Set(headerOwner, owner)
		default:
			continue // restored here: deliver again
		}
		break
	}
	if msg.Reply != "" && (msg.Header.Get(headerOp) != opAsync || reply.Header.Get(headerStatus) != statusOK) {
		_ = msg.RespondMsg(reply)
	}
}

// accept checks, for the messages a session does not answer on a stream,
// that the session exists for their sender: a DELETE, a notification or
// an answer from another principal must read as an unknown session (404),
// not succeed — the sending node left the check to this one (Check).
func (r *Router) accept(ctx context.Context, id string, m messages.ActorMessage) error {
	var principal string
	switch m := m.(type) {
	case *messages.DeleteSession:
		principal = m.Principal
	case *messages.HandleNotification:
		principal = m.Principal
	case *messages.DeliverResponse:
		principal = m.Principal
	default:
		return nil // the session answers others on their stream
	}
	meta, err := r.local.Lookup(ctx, id)
	if err == nil && meta.Principal != principal {
		err = errForeign // here, but not the sender's
	}
	return err
}

// errForeign refuses a message for a session of this node from another
// principal than the session's: the sender answers as for an unknown
// session.
var errForeign = fmt.Errorf("%w: another principal's", router.ErrSessionNotFound)

// DeliverStream implements router.Router and session.Streams. An event for
// another node's stream is published to that node: it is reported taken,
// and the holder tells the session if the stream turns out to be gone
// (streams.go).
func (r *Router) DeliverStream(ev messages.StreamEvent) bool {
	if ev.Stream.Node == r.node.ID() {
		return r.streams.Deliver(ev)
	}
	data, err := messages.EncodeStreamEvent(ev)
	if err != nil {
		r.node.log.Error("encoding a stream event failed", "stream", ev.Stream.String(), "err", err)
		return false
	}
	err = r.chunks.publish(&nats.Msg{Subject: r.node.subj.stream(ev.Stream.Node), Data: data})
	if errors.Is(err, router.ErrMessageTooLarge) {
		return r.deliverTooLarge(ev, len(data))
	}
	if err != nil {
		r.node.log.Warn("sending a stream event failed", "stream", ev.Stream.String(), "err", err)
		return false
	}
	r.stats.framesOut.Add(1)
	return true
}

// onStream receives an event for one of this node's streams (streams.go).
func (r *Router) onStream(msg *nats.Msg) {
	ev, err := messages.DecodeStreamEvent(msg.Data)
	if err != nil {
		r.node.log.Warn("dropping a stream event that cannot be read", "err", err)
		return
	}
	r.stats.framesIn.Add(1)
	r.onStreamEvent(ev)
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
