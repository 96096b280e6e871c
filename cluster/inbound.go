package cluster

import (
	"context"
	"errors"
	"hash/maphash"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-actors/mcp-actors/actors/router"
	"github.com/mcp-actors/mcp-actors/internal/tracing"
	"github.com/mcp-actors/mcp-actors/messages"
)

// Messages routed to this node, for the sessions it owns. The NATS
// subscription's goroutine only decodes them and hands each to one of
// deliveryWorkers inboxes, chosen by its session (so one session's
// messages keep their order): a session's mailbox runs on the goroutine
// that posts to it while it is idle (protoactor's synchronized mailbox
// dispatcher), and must never run on the subscription's, where a busy
// session would hold up every other session's messages. A worker hands
// the message to the session when it is here, or to a bounded pool of
// lookup workers when it is not (it may have been this node's before a
// restart, or moved), and answers with a delivery outcome.
//
//	node.<me>.session ──onSession──▶ inbox[hash(session)] ──worker──▶ here? ──yes──▶ Local.Deliver ──▶ respond ok (or ack later: acks.go)
//	                                                                     └──no──▶ lookupJobs ──▶ locate ──▶ restore here / moved / not found

// Routed messages for sessions a node does not hold are looked into by
// lookupWorkers goroutines; at most lookupQueue wait for one, and beyond, a
// message is refused at once (503: the sender's client tries again).
const (
	lookupWorkers = 32
	lookupQueue   = 4096
)

// Routed messages for sessions here are delivered by deliveryWorkers
// goroutines, each with an inbox of at most deliveryQueue messages;
// beyond, a message is refused at once (503).
const (
	deliveryWorkers = 32
	deliveryQueue   = 1024
)

// delivery is a routed message for a session, decoded.
type delivery struct {
	msg *nats.Msg
	id  string
	m   messages.ActorMessage
}

// deliveryWorker delivers the messages of one inbox until the router
// closes.
func (r *relay) deliveryWorker(inbox <-chan delivery) {
	defer r.bg.Done()
	for {
		select {
		case <-r.ctx.Done():
			return
		case d := <-inbox:
			r.deliverRouted(d)
		}
	}
}

// inbox returns the inbox of session id's messages.
func (r *relay) inbox(id string) chan<- delivery {
	return r.inboxes[maphash.String(r.inboxSeed, id)%uint64(len(r.inboxes))]
}

// lookupJob is a routed message for a session this node does not hold.
type lookupJob = delivery

// lookupWorker delivers the messages of the lookup queue until the router
// closes.
func (r *relay) lookupWorker() {
	defer r.bg.Done()
	for {
		select {
		case <-r.ctx.Done():
			return
		case j := <-r.lookupJobs:
			r.deliverAfterLookup(j.msg, j.id, j.m)
		}
	}
}

// onSession receives a message for one of this node's sessions, on the
// subscription's one goroutine, and hands it to its session's inbox.
func (r *relay) onSession(msg *nats.Msg) {
	if msg.Header.Get(headerOp) == opProbe {
		reply := nats.NewMsg(msg.Reply)
		reply.Header.Set(headerStatus, statusOK)
		reply.Header.Set(headerUptime, strconv.FormatInt(int64(time.Since(r.node.started)), 10))
		_ = msg.RespondMsg(reply)
		return
	}
	r.stats.received.Add(1)
	id := msg.Header.Get(headerSession)
	m, err := messages.DecodeActorMessage(msg.Data)
	if err != nil {
		r.respond(msg, m, statusBad, err.Error())
		return
	}
	select {
	case r.inbox(id) <- delivery{msg: msg, id: id, m: m}:
	default:
		r.respond(msg, m, statusBad, "this node is busy delivering messages: try again")
	}
}

// deliverRouted delivers a routed message, on a delivery worker: a
// message for a session here is handed to it at once. One for a session
// this node does not hold — it may have been its own before it restarted
// (it is restored here) or have moved (the sender is told where) — is
// looked into on a lookup worker, a bounded number at once, so that no
// lookup delays other sessions' messages.
func (r *relay) deliverRouted(d delivery) {
	msg, id, m := d.msg, d.id, d.m
	if hr, ok := m.(*messages.HandleRequest); ok && r.tracer != nil && hr.Trace.Parent != "" {
		ctx, span := r.tracer.Start(tracing.Extract(context.Background(), hr.Trace), "mcp.deliver", trace.SpanKindConsumer,
			tracing.AttrMethod.String(hr.Msg.Method))
		hr.Trace = tracing.Inject(ctx)
		defer span.End()
	}
	err := r.deliverHere(msg, id, m)
	switch {
	case err == nil:
		r.respond(msg, m, statusOK, "")
		return
	case errors.Is(err, errHandedOver):
		return // answered: held, or released (handover.go)
	case errors.Is(err, errLeaseLapsed) && !r.node.Started() && r.holdStarting(d):
		return // looked into once the node has its lease
	case errors.Is(err, errLeaseLapsed):
		r.respond(msg, m, statusBad, err.Error())
		return
	case errors.Is(err, router.ErrOtherPrincipal), r.ended(id), r.isUnknown(id):
		r.respond(msg, m, statusNotFound, "")
		return
	}
	select {
	case r.lookupJobs <- d:
	default:
		r.respond(msg, m, statusBad, "this node is busy looking sessions up: try again")
	}
}

// deliverAfterLookup delivers m, for session id which this node does not
// hold, after looking into where it is.
func (r *relay) deliverAfterLookup(msg *nats.Msg, id string, m messages.ActorMessage) {
	if !r.awaitFirstLease(r.ctx) {
		r.respond(msg, m, statusBad, errLeaseLapsed.Error())
		return
	}
	ctx, cancel := context.WithTimeout(r.ctx, deliverTimeout)
	defer cancel()
	owner, err := r.locate(ctx, id, r.node.ID())
	switch {
	case errors.Is(err, router.ErrSessionNotFound):
		r.respond(msg, m, statusNotFound, "")
	case err != nil:
		// Not "no such session": it may exist but cannot be reached now
		// (storage electing a leader, no quorum): the sender answers 503
		// and the client retries.
		r.respond(msg, m, statusBad, err.Error())
	case owner != r.node.ID():
		r.respondMoved(msg, owner)
	default:
		switch err := r.deliverHere(msg, id, m); {
		case err == nil:
			r.respond(msg, m, statusOK, "")
		case errors.Is(err, errHandedOver):
		case errors.Is(err, router.ErrSessionNotFound):
			r.respond(msg, m, statusNotFound, "")
		default:
			r.respond(msg, m, statusBad, err.Error())
		}
	}
}

// deliverHere hands routed message m to session id, here, unless this
// node may no longer act for its sessions (errLeaseLapsed): every routed
// delivery passes this fence, as it arrives or after a lookup. On a
// draining node, a session handed over or closing answers it instead
// (errHandedOver: handover.go). A request's
// bookkeeping — it runs here for another node's stream (running.go), and
// its acknowledgement is due (acks.go) — comes first: the session may
// answer it before Deliver returns. It is undone when the request was not
// delivered.
func (r *relay) deliverHere(msg *nats.Msg, id string, m messages.ActorMessage) error {
	if r.fenced() {
		return errLeaseLapsed
	}
	hr, isRequest := m.(*messages.HandleRequest)
	r.handover.gate.RLock()
	defer r.handover.gate.RUnlock()
	if r.handing(msg, id, isRequest) {
		return errHandedOver
	}
	accepts := isRequest && msg.Reply != ""
	if accepts {
		r.runs(hr.Stream)
		if msg.Header.Get(headerOp) == opAsync {
			r.ackLater(hr.Stream, msg.Reply)
		}
	}
	err := r.local.Deliver(context.Background(), id, m)
	if err != nil && accepts {
		r.notRunning(hr.Stream)
		r.ackDue.Delete(hr.Stream)
	}
	return err
}

// respond answers a routed message with a delivery outcome. A client
// request sent without waiting is answered only when it was not
// delivered; its acceptance is acknowledged later, unless its stream
// hears from the session first (acks.go).
func (r *relay) respond(msg *nats.Msg, m messages.ActorMessage, status, why string) {
	if msg.Reply == "" {
		return
	}
	if _, isRequest := m.(*messages.HandleRequest); isRequest && status == statusOK && msg.Header.Get(headerOp) == opAsync {
		return // acknowledged later (deliverHere)
	}
	reply := nats.NewMsg(msg.Reply)
	reply.Header.Set(headerStatus, status)
	reply.Data = []byte(why)
	_ = msg.RespondMsg(reply)
}

// respondMoved tells the sender of msg that its session is owned by owner.
func (r *relay) respondMoved(msg *nats.Msg, owner string) {
	if msg.Reply == "" {
		return
	}
	reply := nats.NewMsg(msg.Reply)
	reply.Header.Set(headerStatus, statusMoved)
	reply.Header.Set(headerOwner, owner)
	_ = msg.RespondMsg(reply)
}
