package cluster

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/sync/singleflight"

	"github.com/mcp-actors/mcp-actors/actors/router"
	"github.com/mcp-actors/mcp-actors/actors/session"
	"github.com/mcp-actors/mcp-actors/internal/tracing"
	"github.com/mcp-actors/mcp-actors/messages"
)

// relay is the router.Router of a cluster node: sessions this node owns
// are reached through the node's router.Local, as in one process; the
// others through NATS, on the subject of the node that owns them. Frames
// for a stream this node holds go to its registry; frames for another
// node's stream go there over NATS. The relay delivers messages: it never
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
type relay struct {
	tracer  *tracing.Tracer // nil: no spans (newRelay's tp); set before the relay serves
	node    *Node
	local   *router.Local
	streams *router.Streams
	subs    []*nats.Subscription

	dir      sync.Map     // session ID → *entry: what this node knows of sessions' records (directory.go)
	givenUp  sync.Map     // session ID → uint64: the epoch of each session this node gave up at its last lapse
	endedAt  sync.Map     // session ID → time.Time: this node's sessions that ended, and when (markEnded)
	unknown  sync.Map     // session ID → time.Time: IDs the directory does not hold (takeover.go)
	remote   sync.Map     // messages.StreamID → *remoteStream: streams here waiting on other nodes (owners.go)
	ackDue   sync.Map     // messages.StreamID → *pendingAck: requests accepted here, not yet acknowledged (acks.go)
	fwd      forwarded    // modern requests other nodes forwarded here, by stream (modern.go)
	fwdOpen  sync.Map     // messages.StreamID → struct{}: requests forwarded from here whose stream has no answer yet (modern.go)
	carried  atomic.Int64 // forwards from here answered in their reply (modern.go)
	nEnded   atomic.Int64 // markEnded calls: every 1024th sweeps endedAt
	nUnknown atomic.Int64
	stats    stats

	lookups    singleflight.Group // locate, one lookup per session at once
	lookupJobs chan lookupJob     // routed messages for sessions not here, for the lookup workers
	inboxes    []chan delivery    // routed messages for sessions, by session, for the delivery workers (inbound.go)
	inboxSeed  maphash.Seed       // picks a session's inbox
	running    runningSet         // requests running here for other nodes' streams, and digests (running.go)
	checking   atomic.Bool        // a look at the owners of the streams held here is under way (owners.go)
	recordTTL  atomic.Int64       // SetRecordTTL

	detaching   sync.Map     // messages.StreamID → struct{}: gone streams being reported (streams.go)
	goneReports atomic.Int32 // reports of gone streams in flight
	chunks      *chunker     // every routed publish, and the subscriptions' reassembly (chunks.go)

	asyncReply string             // prefix of the reply subjects of requests sent without waiting (async.go)
	ctx        context.Context    // ends at Close: the work the router starts
	cancel     context.CancelFunc // ends ctx
	bg         sync.WaitGroup     // the goroutines goBackground starts, and the lookup workers

	mu        sync.Mutex     // orders goBackground and WatchCatalog with Close; guards watchStop
	closed    atomic.Bool    // set by Close, under mu
	draining  atomic.Bool    // Drain: take nothing over
	handover  handover       // Drain: the requests held and the sessions released (handover.go)
	stopWatch chan struct{}  // stops watch (owners.go)
	watchStop func()         // stops the catalog watch (WatchCatalog)
	watchDone sync.WaitGroup // the two watches' goroutines
}

// Header names of routed messages.
const (
	headerSession = "Mcp-Session"
	headerStatus  = "Mcp-Status"
	headerOp      = "Mcp-Op"     // opAsync: not a plain delivery
	headerOwner   = "Mcp-Owner"  // where a moved session is
	headerUptime  = "Mcp-Uptime" // a probe's answer: how long the node's run has been up, in nanoseconds
)

// opAsync marks a request answered only when it cannot be delivered
// (async.go); a plain delivery is acknowledged.
const opAsync = "async"

// opProbe asks a node whether it is there: it answers at once, with no
// session involved (acks.go).
const opProbe = "probe"

// Delivery outcomes in a reply's Mcp-Status header.
const (
	statusOK       = "ok"
	statusNotFound = "not-found"
	statusMoved    = "moved" // with the owner in Mcp-Owner
	statusBad      = "bad"
)

// deliverTimeout bounds a delivery to another node: an owner that has not
// answered by then is looked into as if it were gone (its lease decides).
const deliverTimeout = 3 * time.Second

// newRelay makes local (this node's sessions; its registry must be named
// after the node) reachable from the cluster, and returns the relay the
// node's transports use (Node.Relay: the server that joins the cluster
// knows it as a clusterapi.Relay). It starts a span on tp (nil: none) for
// each client request it routes to another node, and for each it
// receives. It subscribes to the node's subjects; Close
// unsubscribes.
func newRelay(node *Node, local *router.Local, tp trace.TracerProvider) (*relay, error) {
	if local.Streams().Node() != node.ID() {
		return nil, fmt.Errorf("cluster: the stream registry is named %q, not after node %q", local.Streams().Node(), node.ID())
	}
	r := &relay{node: node, local: local, streams: local.Streams(), asyncReply: node.subj.async(node.ID()),
		lookupJobs: make(chan lookupJob, lookupQueue), inboxSeed: maphash.MakeSeed(), tracer: tracing.New(tp, node.ID())}
	for range deliveryWorkers {
		r.inboxes = append(r.inboxes, make(chan delivery, deliveryQueue))
	}
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
	node.onLapsed(r.giveUp)
	r.bg.Add(lookupWorkers + deliveryWorkers)
	for range lookupWorkers {
		go r.lookupWorker()
	}
	for _, inbox := range r.inboxes {
		go r.deliveryWorker(inbox)
	}
	r.stopWatch = make(chan struct{})
	r.watchDone.Add(1)
	go r.watch(r.stopWatch)
	return r, nil
}

// giveUp closes, for handover, every session of this node: its lease
// lapsed and others may own them now. The cluster only sends messages: the
// sessions close themselves. What this node knew of its sessions' records
// is forgotten: the next message for one of them reads the directory, and
// starts it here again only if the directory still names this node.
func (r *relay) giveUp() {
	n := 0
	r.local.Each(func(ref *session.Ref) bool {
		ref.Send(&messages.CloseSession{Reason: "this node's lease lapsed", Handover: true})
		n++
		return true
	})
	me := r.node.ID()
	r.givenUp.Clear()
	r.dir.Range(func(k, v any) bool {
		if e := v.(*entry); e.Owner == me && r.dir.CompareAndDelete(k, v) {
			r.givenUp.Store(k, e.Epoch) // what its last frames carry (DeliverStream)
		}
		return true
	})
	r.node.log.Warn("gave up every session: the lease lapsed", "sessions", n)
}

// fenced reports whether this node must not act for its sessions now: it
// is in a cluster and its lease may have lapsed (acting is false). It says
// nothing of one session: ErrFenced is a session's write refused because
// another node took that session over.
func (r *relay) fenced() bool { return !r.node.Standalone() && !r.node.acting() }

// hop starts the span of request m's hop to owner, when m is traced, and
// returns m carrying the hop's trace context, and the function that ends
// the span.
func (r *relay) hop(m *messages.HandleRequest, owner string) (*messages.HandleRequest, func(error)) {
	if r.tracer == nil || m.Trace.Parent == "" {
		return m, func(error) {}
	}
	ctx, span := r.tracer.Start(tracing.Extract(context.Background(), m.Trace), "mcp.route", trace.SpanKindProducer,
		tracing.AttrMethod.String(m.Msg.Method), tracing.AttrTarget.String(owner))
	next := *m
	next.Trace = tracing.Inject(ctx)
	return &next, func(err error) { tracing.EndError(span, err) }
}

// HandsOver reports whether a session that ends because this node shuts
// down should be left for another node to take over (a node with peers)
// rather than ended.
func (r *relay) HandsOver() bool { return !r.node.Standalone() }

// Ready reports whether the node can serve (see Node.Ready).
func (r *relay) Ready() error { return r.node.Ready() }

// Started reports whether the node has been ready once (Node.Started).
func (r *relay) Started() bool { return r.node.Started() }

// Close stops receiving messages for this node, and the catalog watch.
func (r *relay) Close() {
	r.mu.Lock() // nothing starts in the background from now on
	if r.closed.Swap(true) {
		r.mu.Unlock()
		return
	}
	stop := r.watchStop
	r.mu.Unlock()
	if r.stopWatch != nil {
		close(r.stopWatch)
	}
	if len(r.subs) > 0 {
		r.drainSessions(r.subs[0]) // first: the messages it has taken are answered
	}
	for _, s := range r.subs {
		_ = s.Unsubscribe()
	}
	r.chunks.close()
	r.cancel()
	r.bg.Wait()
	r.answerLeftovers()
	if stop != nil {
		stop()
	}
	r.watchDone.Wait()
}

// ownerOf returns the node that owns session id.
func (r *relay) ownerOf(id string) string {
	if v, ok := r.dir.Load(id); ok {
		return v.(*entry).Owner
	}
	node, _, ok := strings.Cut(id, ".")
	if !ok {
		return ""
	}
	return node
}

// Open implements router.Router: a session opened here is owned here. It
// is written to the directory when initialize is answered (its first
// State). A node that cannot make a session durable — its lease renewal
// failed: storage has no quorum, or it is cut off — refuses at once
// (router.ErrUnavailable).
func (r *relay) Open(ctx context.Context, o router.OpenOptions) (string, error) {
	if !r.node.Standalone() {
		if err := r.node.canOpen(); err != nil {
			return "", fmt.Errorf("%w: %w", router.ErrUnavailable, err)
		}
	}
	id, err := r.local.Open(ctx, o)
	if err != nil {
		return "", err
	}
	if !r.node.Standalone() {
		r.dir.Store(id, &entry{Session: id, Owner: r.node.ID(), Epoch: 1, Principal: o.Principal, known: true})
	}
	return id, nil
}

// Check implements router.Router. For a session on another node it asks
// nothing (the owner answers the delivery that follows), so the check
// costs no round trip.
func (r *relay) Check(ctx context.Context, id string) error {
	owner := r.ownerOf(id)
	if owner == "" {
		return router.ErrSessionNotFound
	}
	if owner == r.node.ID() {
		err := r.local.Check(ctx, id)
		if !errors.Is(err, router.ErrSessionNotFound) || r.ended(id) {
			return err
		}
		// Not here: this node restarted, or the session moved.
		if owner, err = r.locate(ctx, id, owner); err != nil {
			return err
		}
		if owner == r.node.ID() {
			return r.local.Check(ctx, id)
		}
	}
	return nil
}

// maxHops bounds how often one delivery follows a session that moved.
const maxHops = 4

// errNoOwner reports that the node a message was sent to does not answer
// on its subject (it is gone), or not in time (it hangs, or is cut off).
var errNoOwner = errors.New("cluster: the session's node does not answer")

// errOwnerGone is errNoOwner when nothing listens on the node's subject
// (NATS answered "no responders"): nothing got the message there. Not
// when the node was too slow to answer: it may have.
var errOwnerGone = fmt.Errorf("%w: nothing listens on its subject", errNoOwner)

// movedError reports that the session is owned elsewhere now.
type movedError struct{ owner string }

func (e *movedError) Error() string { return "cluster: the session moved to node " + e.owner }

// request sends msg to the owner and returns its reply; errNoOwner when
// nobody answers, a *movedError when the owner says the session moved,
// ErrSessionNotFound when it says there is none.
func (r *relay) request(ctx context.Context, msg *nats.Msg) (*nats.Msg, error) {
	reply, timedOut, err := r.hopRequest(ctx, deliverTimeout, msg)
	if err != nil {
		if errors.Is(err, nats.ErrNoResponders) {
			return nil, errOwnerGone // gone: its lease decides
		}
		if timedOut {
			return nil, errNoOwner // no answer in time: its lease decides
		}
		return nil, fmt.Errorf("cluster: routing a message: %w", err)
	}
	if err := replyErr(reply); err != nil {
		return nil, err
	}
	return reply, nil
}

// hopRequest sends msg to another node and waits up to d for its reply,
// counting and timing the hop; timedOut reports that d ran out (not ctx).
func (r *relay) hopRequest(ctx context.Context, d time.Duration, msg *nats.Msg) (reply *nats.Msg, timedOut bool, err error) {
	rctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	r.stats.routed.Add(1)
	start := time.Now()
	reply, err = r.chunks.request(rctx, msg)
	r.stats.hop(time.Since(start))
	return reply, err != nil && ctx.Err() == nil && rctx.Err() != nil, err
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
	if reply.Header.Get("Status") == "503" || reply.Header.Get(headerStatus) == statusGone {
		return errOwnerGone
	}
	if err := handoverErr(reply); err != nil {
		return err
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
func (r *relay) reroute(ctx context.Context, id, owner string, err error) (string, error) {
	var moved *movedError
	var released *releasedError
	switch {
	case err == nil:
		return "", nil
	case errors.As(err, &moved) && moved.owner != "":
		r.setOwner(id, moved.owner)
		return moved.owner, nil
	case errors.As(err, &released):
		return r.lookup(ctx, id, owner, lookupHint{released: released.epoch})
	case errors.Is(err, errNoOwner):
		next, rerr := r.lookup(ctx, id, owner, lookupHint{gone: errors.Is(err, errOwnerGone)})
		if rerr != nil && !errors.Is(rerr, router.ErrSessionNotFound) {
			// Every message for every session of a lost node meets this
			// while its lease holds: logged once a second at most.
			r.node.warnOwners.Do(func() {
				r.node.log.Warn("a session's node does not answer and the session cannot be taken over (logged at most once a second)",
					"session", session.LogID(id), "owner", owner, "err", rerr)
			})
		}
		return next, rerr
	}
	return "", err
}

// Deliver implements router.Router.
func (r *relay) Deliver(ctx context.Context, id string, m messages.ActorMessage) error {
	owner := r.ownerOf(id)
	if owner == "" {
		return router.ErrSessionNotFound
	}
	var data []byte
	for range maxHops {
		if owner == r.node.ID() {
			if r.fenced() {
				return fmt.Errorf("%w: %w", router.ErrUnavailable, errLeaseLapsed)
			}
			if _, isRequest := m.(*messages.HandleRequest); isRequest && r.draining.Load() {
				// This node's own client, after its lame duck: the session
				// is closing for handover, or gone. Not run: the client's
				// retry finds a node that serves.
				return fmt.Errorf("%w: %w", router.ErrUnavailable, errHandingOver)
			}
			err := r.local.Deliver(ctx, id, m)
			if !errors.Is(err, router.ErrSessionNotFound) || r.ended(id) {
				return err
			}
			// Not here: this node restarted, or the session moved.
			if owner, err = r.locate(ctx, id, owner); err != nil {
				return unavailable(err)
			}
			continue
		}
		if hr, ok := m.(*messages.HandleRequest); ok && hr.Stream.Node == r.node.ID() {
			hr, end := r.hop(hr, owner)
			err := r.sendAsync(owner, id, hr)
			end(err)
			if err != nil {
				return fmt.Errorf("cluster: %w", err)
			}
			return nil
		}
		end := func(error) {}
		if hr, ok := m.(*messages.HandleRequest); ok {
			var traced *messages.HandleRequest
			if traced, end = r.hop(hr, owner); traced != hr {
				data = nil // encoded again with this hop's trace
				m = traced
			}
		}
		if data == nil {
			var err error
			if data, err = messages.EncodeActorMessage(m); err != nil {
				end(err)
				return fmt.Errorf("cluster: %w", err)
			}
		}
		msg := nats.NewMsg(r.node.subj.session(owner))
		msg.Header.Set(headerSession, id)
		msg.Data = data
		_, err := r.request(ctx, msg)
		end(err)
		next, err := r.reroute(ctx, id, owner, err)
		if err != nil {
			return unavailable(err)
		}
		if next == "" {
			r.track(owner, id, m, len(data))
			return nil
		}
		owner = next
	}
	return fmt.Errorf("%w: it moved too often", router.ErrSessionNotFound)
}

// setOwner records that session id is owned by owner now, keeping what
// is known of its principal. An entry that names owner already is kept as
// it is (a takeover here stored the revision it wrote).
func (r *relay) setOwner(id, owner string) {
	e := &entry{Session: id, Owner: owner}
	if old := r.entryOf(id); old != nil {
		if old.Owner == owner {
			return
		}
		e.Principal, e.Epoch, e.known = old.Principal, old.Epoch, old.known
	}
	r.dir.Store(id, e)
}

// unavailable marks a failure to reach a session that exists, or may, as
// router.ErrUnavailable (503: the client tries again); "no such session"
// stays as it is (404).
func unavailable(err error) error {
	if err == nil || errors.Is(err, router.ErrSessionNotFound) || errors.Is(err, router.ErrUnavailable) {
		return err
	}
	return fmt.Errorf("%w: %w", router.ErrUnavailable, err)
}

// Streams implements router.Router.
func (r *relay) Streams() *router.Streams { return r.streams }
