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
//	actor ──LogEvent──▶ eventLogWriter ──batches──▶ events.<session>  (owner, every SSE event; eventlog.go)
//	takeover ──restore──▶ direct gets (events.<session>, any replica) ──▶ State.Events ──▶ session actor
//
// A stored event is one line "<stream> <seq> <end> <epoch> <request ID>\n"
// followed by the event's JSON-RPC message. The epoch is the owner's.
// Appends are not conditional (they are batched, and nothing waits for
// them), so an owner that lost the session may have appends in flight
// when another takes it over: the new owner first writes an epoch marker
// (stream "=epoch", its epoch, no message), waiting for it, and only then
// reads the log. Reading the log back skips every event of an epoch lower
// than the highest seen before it, marker or event: an old owner's append
// that landed before the marker was read by the new owner with the rest,
// and one that landed after it is skipped by every restore.
//
//	old owner (epoch 1): e1 e2 ........ e3 (late)
//	new owner (epoch 2):          [marker 2] read: e1 e2 ── e4 e5
//	log: e1 e2 [marker 2] e3 e4 e5 ── restored: e1 e2 e4 e5

// LogEvent appends an event to session id's durable event log
// (session.Config.LogEvent). A node on its own keeps none.
func (r *relay) LogEvent(id string, e session.LoggedEvent) {
	if r.node.Standalone() {
		return // the writer drops it when this node may no longer act (eventlog.go)
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

// epochStream is the stream field of an epoch marker: not a stream ID the
// sessions give (earlier releases skip it).
const epochStream = "=epoch"

// markEpoch writes the marker of session id's new epoch into its event log
// and waits for JetStream to have it (a takeover, before it reads the log),
// trying again while storage is away for a moment, until ctx ends. A node
// on its own keeps no log.
// It returns the marker's sequence in the log's stream.
func (r *relay) markEpoch(ctx context.Context, id string, epoch uint64) (uint64, error) {
	if r.node.eventStream() == nil {
		return 0, nil
	}
	data := encodeEvent(nil, session.LoggedEvent{Stream: epochStream}, epoch)
	var b backoff
	for {
		wctx, cancel := context.WithTimeout(ctx, storageOpTimeout)
		ack, err := r.node.js.Publish(wctx, r.node.subj.events(id), data)
		cancel()
		if err == nil {
			return ack.Sequence, nil
		}
		if !r.storageRetry(ctx, &b, err) {
			return 0, err
		}
	}
}

// sleepCtx waits for d, or until ctx ends (false).
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// parseEvent reads a stored event and the epoch of the owner that logged
// it; an epoch marker has epochStream for its stream.
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
//
// A takeover reads through its epoch marker, at sequence through: a
// replica that does not have it yet is behind, and is asked again.
func (r *relay) loadEvents(ctx context.Context, id string, through uint64) ([]session.LoggedEvent, error) {
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
		behind := errors.Is(err, jetstream.ErrMsgNotFound) && seq <= through
		switch {
		case errors.Is(err, jetstream.ErrMsgNotFound) && !behind:
			return events, nil
		case (behind || err != nil && transient(err)) && failures < eventsRetries && ctx.Err() == nil:
			failures++
			if behind && !sleepCtx(ctx, 20*time.Millisecond*time.Duration(failures)) {
				return events, ctx.Err()
			}
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
		if e.Stream == epochStream {
			continue
		}
		events = append(events, e)
	}
	return events, nil
}
