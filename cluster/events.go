package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/mcp-actors/mcp-actors/actors/session"
	"github.com/mcp-actors/mcp-actors/messages"
)

// Each session's event log — every SSE event with its ID, the POST
// streams' included — is appended to the JetStream stream
// mcpx_<cluster>_events under mcpx.<cluster>.events.<session>, without
// waiting for the acknowledgement and in order. The stream keeps a
// bounded number of events per session for a bounded time
// (Options.EventsPerSession, EventMaxAge). While the owner lives, a
// client resuming with Last-Event-ID on any node is routed to it and
// replayed from its memory; the stream serves a session taken over after
// its node was lost: the new owner reads the session's events and replays
// them (session.State.Events).
//
//	actor ──Journal──▶ eventWriter ──batches──▶ events.<session>  (owner, every SSE event; eventlog.go)
//	takeover ──restore──▶ direct gets (events.<session>, any replica) ──▶ State.Events ──▶ session actor
//
// A stored event is one line "<stream> <seq> <end> <epoch> <request ID>\n"
// followed by the event's JSON-RPC message. The epoch is the owner's: an
// event appended by an owner that lost the session (in flight when it was
// taken over) comes after an event of a later epoch in the log, and
// reading the log back skips it.

// Journal appends an event to session id's durable event log
// (session.Config.Journal). A node on its own keeps none.
func (r *Relay) Journal(id string, e session.LoggedEvent) {
	if r.node.Standalone() || r.fenced() {
		return
	}
	var epoch uint64
	if en := r.entryOf(id); en != nil {
		epoch = en.Epoch
	}
	m := &nats.Msg{Subject: r.node.subj.events(id), Data: encodeEvent(make([]byte, 0, len(e.Stream)+len(e.Data)+48), e, epoch)}
	r.node.evw.enqueue(m)
}

// encodeEvent appends e, logged by the owner of epoch, as stored, to b.
func encodeEvent(b []byte, e session.LoggedEvent, epoch uint64) []byte {
	b = append(b, e.Stream...)
	b = append(b, ' ')
	b = strconv.AppendUint(b, e.Seq, 10)
	if e.End {
		b = append(b, " 1 "...)
	} else {
		b = append(b, " 0 "...)
	}
	b = strconv.AppendUint(b, epoch, 10)
	b = append(b, ' ')
	if !e.Request.IsZero() {
		b = append(b, e.Request.Raw()...)
	}
	b = append(b, '\n')
	return append(b, e.Data...)
}

// parseEvent reads a stored event and the epoch of the owner that logged
// it.
func parseEvent(b []byte) (session.LoggedEvent, uint64, error) {
	head, data, ok := bytes.Cut(b, []byte{'\n'})
	if !ok {
		return session.LoggedEvent{}, 0, fmt.Errorf("no header line")
	}
	fields := bytes.SplitN(head, []byte{' '}, 5)
	if len(fields) != 5 {
		return session.LoggedEvent{}, 0, fmt.Errorf("header %q: want 5 fields", head)
	}
	seq, err := strconv.ParseUint(string(fields[1]), 10, 64)
	if err != nil {
		return session.LoggedEvent{}, 0, fmt.Errorf("header %q: %w", head, err)
	}
	epoch, err := strconv.ParseUint(string(fields[3]), 10, 64)
	if err != nil {
		return session.LoggedEvent{}, 0, fmt.Errorf("header %q: %w", head, err)
	}
	e := session.LoggedEvent{Stream: string(fields[0]), Seq: seq, End: string(fields[2]) == "1", Data: data}
	if len(fields[4]) > 0 {
		if e.Request, err = messages.ParseID(fields[4]); err != nil {
			return session.LoggedEvent{}, 0, fmt.Errorf("header %q: %w", head, err)
		}
	}
	return e, epoch, nil
}

// eventsReadTimeout bounds each read of a stored event; eventsRetries is
// how often a read that timed out is tried again (after a node loss the
// replicas may be electing a leader).
const (
	eventsReadTimeout = 2 * time.Second
	eventsRetries     = 5
)

// loadEvents reads session id's event log, oldest first. The reads are
// direct gets, which any replica answers: they need no stream leader, so
// they work while the stream elects one after the loss of the node that
// led it (a replica behind the others may miss the newest events, as
// appends in flight at the loss are).
func (r *Relay) loadEvents(ctx context.Context, id string) ([]session.LoggedEvent, error) {
	stream := r.node.eventStream()
	if stream == nil {
		return nil, nil
	}
	subject := r.node.subj.events(id)
	var events []session.LoggedEvent
	var epoch uint64 // the latest owner's seen so far
	seq, failures := uint64(1), 0
	for len(events) < r.node.opts.EventsPerSession {
		rctx, cancel := context.WithTimeout(ctx, eventsReadTimeout)
		msg, err := stream.GetMsg(rctx, seq, jetstream.WithGetMsgSubject(subject))
		cancel()
		switch {
		case errors.Is(err, jetstream.ErrMsgNotFound):
			return events, nil
		case err != nil && transient(err) && failures < eventsRetries && ctx.Err() == nil:
			failures++
			continue
		case err != nil:
			return events, fmt.Errorf("cluster: reading the event log of %s: %w", id, err)
		}
		seq = msg.Sequence + 1
		e, ep, err := parseEvent(msg.Data)
		if err != nil {
			r.node.log.Warn("skipping an event that cannot be read", "session", session.LogID(id), "err", err)
			continue
		}
		if ep < epoch {
			continue // appended by an owner that had lost the session
		}
		epoch = ep
		events = append(events, e)
	}
	return events, nil
}
