package session

import (
	"context"
	"crypto/sha256"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/mcp-actors/mcp-actors/messages"
)

// A continuation is a modern request's handler waiting for the client's
// input, kept by an actor of its own on the node that ran it: it gathers
// the handler's input calls into rounds, answers each round with
// input_required and a sealed requestState, hands the answers of the
// retry to the calls, and sends what follows (progress, log messages,
// the result) on the retry's stream.
//
//	inputCall ──▶ pending ──gather──▶ cut: input_required ──▶ live stream; waiting
//	retry{round, answers} ──▶ answers to calls, journal; the retry's stream is live
//	handlerDone ──▶ result on the live stream (or kept for the retry) ──▶ end
//	expire / client gone ──▶ handler cancelled ──▶ end

// contRef is the address of a continuation actor.
type contRef struct {
	id   string
	pid  *actor.PID
	root *actor.RootContext

	mu       sync.Mutex
	stopped  bool // no message is posted once set (the actor is ending)
	posting  int  // posts between their check of stopped and their Send's return
	poisoned bool // the actor was told to stop
}

// post sends m to the actor and reports whether it was sent: not once
// the continuation is ending. The actor's mailbox may run on the posting
// goroutine (contDispatcher), and its Receive may end the continuation
// within this Send: the lock is not held across it. Instead the actor is
// stopped by whichever comes last of end and the posts under way when it
// was called, so that every message sent is handled before it stops.
func (r *contRef) post(m any) bool {
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		return false
	}
	r.posting++
	r.mu.Unlock()
	r.root.Send(r.pid, m)
	r.mu.Lock()
	r.posting--
	poison := r.stopReady()
	r.mu.Unlock()
	if poison {
		r.root.Poison(r.pid)
	}
	return true
}

// stop marks the continuation as ending: no message is posted from now
// on, and the actor stops once the posts under way have sent theirs.
func (r *contRef) stop() {
	r.mu.Lock()
	r.stopped = true
	poison := r.stopReady()
	r.mu.Unlock()
	if poison {
		r.root.Poison(r.pid)
	}
}

// stopReady reports, once, that the actor may be told to stop (r.mu
// held).
func (r *contRef) stopReady() bool {
	if !r.stopped || r.posting > 0 || r.poisoned {
		return false
	}
	r.poisoned = true
	return true
}

// retry hands the continuation a retry of round, whose stream is t's.
// It reports false when the continuation has ended: the caller runs the
// handler again.
func (r *contRef) retry(ctx context.Context, round int, t *turn, answers map[string]jsontext.Value, again func()) bool {
	if !r.post(&contRetry{round: round, turn: t, answers: answers, again: again}) {
		return false
	}
	context.AfterFunc(ctx, func() { r.post(&contStreamGone{stream: t.stream}) })
	return true
}

// Messages of a continuation actor.
type (
	inputCall struct {
		method string
		params jsontext.Value
		digest []byte
		reply  chan inputAnswer
		key    string // the handler's name for it (InputKey), then its key in the round
	}
	inputAnswer struct {
		result jsontext.Value
		err    error
	}
	contRetry struct {
		round   int
		turn    *turn
		answers map[string]jsontext.Value
		again   func() // runs the handler again: the continuation has ended
	}
	contFrame      struct{ data []byte }
	contStreamGone struct{ stream messages.StreamID }
	handlerDone    struct {
		res any
		err error
	}
	contGather struct{}
	contExpire struct{}
)

// contActor owns one continuation; every field is touched only in
// Receive.
type contActor struct {
	m   *Modern
	ref *contRef
	c   *modernCall

	round   int   // rounds cut so far
	live    *turn // the request whose stream is the client's; nil while waiting for a retry
	pending []*inputCall
	keys    int
	journal []answered // every answer so far, for the next requestState
	result  *handlerDone
	kept    bool      // counted in Modern.parked
	expires time.Time // of the last round's requestState
	ended   bool
	gather  *time.Timer
	expiry  *time.Timer
}

// spawn starts the continuation of c (c.mu held).
func (m *Modern) spawn(c *modernCall) *contRef {
	ref := &contRef{id: m.newContID(), root: m.root}
	var entries []answered
	if c.journal != nil {
		entries = append(entries, c.journal.entries...)
	}
	entries = append(entries, c.used...)
	a := &contActor{m: m, ref: ref, c: c, live: c.cur.Load(), journal: entries}
	props := actor.PropsFromProducer(func() actor.Actor { return a }, actor.WithDispatcher(contDispatcher))
	ref.pid = m.root.SpawnPrefix(props, "mcp-continuation/")
	m.conts.Store(ref.id, ref)
	return ref
}

// contDispatcher runs a continuation's mailbox on the goroutine that
// posts to it when it is idle, as a session's: the handler's goroutine for
// its input calls and its result, the HTTP request's for a retry, so that
// neither costs a hand-over to another goroutine. Its Receive never
// blocks; a timer's message is posted from a goroutine of Config.Go
// (gatherSoon), whose stack has grown before: sealing a round and
// encoding its input_required on a new goroutine's small stack grows it,
// deep in the call, at a tenth of an MRTR round trip's CPU
// (runtime.newstack under messages.EncodeResult).
var contDispatcher = actor.NewSynchronizedDispatcher(300)

// Receive implements actor.Actor.
func (a *contActor) Receive(ctx actor.Context) {
	switch msg := ctx.Message().(type) {
	case *inputCall:
		a.inputCall(msg)
	case *contGather:
		if a.live != nil && !a.ended && len(a.pending) > 0 {
			a.cut()
		}
	case *contRetry:
		a.retry(msg)
	case *contFrame:
		if a.live != nil {
			a.m.deliver(a.live.stream, msg.data, false)
		}
	case *handlerDone:
		a.handlerDone(msg)
	case *contStreamGone:
		if a.live != nil && a.live.stream == msg.stream && !a.ended {
			// The client closed the stream before the answer: cancelled.
			a.live = nil
			a.end()
		}
	case *contExpire:
		a.end()
	}
}

func (a *contActor) inputCall(m *inputCall) {
	if a.ended {
		m.reply <- inputAnswer{err: context.Canceled}
		return
	}
	a.keys++
	if m.key == "" || a.keyTaken(m.key) {
		m.key = inputKeyName(m.method, m.key, a.keys)
	}
	a.pending = append(a.pending, m)
	if a.live != nil {
		a.gatherSoon()
	}
}

// inputKeyName names an input request within its round: "elicitation-3",
// or the handler's name for it with the number ("user_name-3") when two
// calls pending at once share it.
func inputKeyName(method, named string, n int) string {
	if named == "" {
		named, _, _ = strings.Cut(method, "/")
	}
	return named + "-" + strconv.Itoa(n)
}

// keyTaken reports whether a pending call has key.
func (a *contActor) keyTaken(key string) bool {
	for _, p := range a.pending {
		if p.key == key {
			return true
		}
	}
	return false
}

// gatherSoon cuts the round Gather after the last input call.
func (a *contActor) gatherSoon() {
	if a.gather == nil {
		a.gather = time.AfterFunc(a.m.opts.Gather, func() {
			a.m.goOff(func() { a.ref.post(&contGather{}) })
		})
		return
	}
	a.gather.Reset(a.m.opts.Gather)
}

// cut ends a round: the pending calls go to the client as input requests
// on the live stream, with the state of the round sealed; the
// continuation then waits for the retry. Past the parking bound it is not
// kept: the state carries no continuation, the handler is cancelled, and
// the retry runs it again from the journal.
func (a *contActor) cut() {
	a.round++
	a.expires = time.Now().Add(a.m.opts.ParkTTL)
	if !a.kept && a.m.parked.Add(1) <= int64(a.m.opts.MaxParked) {
		a.kept = true
	} else if !a.kept {
		a.m.parked.Add(-1)
	}
	st := a.c.newState(a.round, a.expires)
	st.Journal = a.journal
	if a.kept {
		st.Cont = a.ref.id
	}
	reqs := make(map[string]messages.InputRequest, len(a.pending))
	for _, p := range a.pending {
		reqs[p.key] = messages.InputRequest{Method: p.method, Params: p.params}
		st.Outstanding = append(st.Outstanding, asked{Key: p.key, Method: p.method, Digest: p.digest})
	}
	live := a.live
	answer := func() {
		frame, err := messages.EncodeResult(live.id, &messages.InputRequiredResult{
			ResultType: messages.ResultInputRequired, InputRequests: reqs,
			RequestState: a.m.seal(st), Meta: a.m.serverMeta(),
		})
		if err != nil {
			frame = messages.EncodeError(live.id, messages.ErrInternal)
		}
		a.m.deliver(live.stream, frame, true)
	}
	// Closing (runs.enter refuses), the journal rides in the state.
	if data, spill := a.spill(st); spill && a.m.runs.enter() {
		// The journal goes to the spill store, off the mailbox; the answer
		// leaves once it is stored (or, failing that, carries it).
		key := a.ref.id + "." + strconv.Itoa(a.round)
		go func() { // Close waits for it, as for a handler
			defer a.m.runs.leave()
			ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
			defer cancel()
			if err := a.m.opts.Spill.Put(ctx, key, data); err == nil {
				sum := sha256.Sum256(data)
				st.Journal, st.JournalKey, st.JournalSum = nil, key, sum[:digestLen]
			} else {
				a.m.log.Warn("spilling a journal failed: it rides in the requestState", "err", err)
			}
			answer()
		}()
	} else {
		answer()
	}
	a.live = nil
	if !a.kept {
		a.end()
		return
	}
	if a.expiry == nil {
		a.expiry = time.AfterFunc(a.m.opts.ParkTTL, func() { a.ref.post(&contExpire{}) })
	} else {
		a.expiry.Reset(a.m.opts.ParkTTL)
	}
}

// retry resumes the continuation with the answers of the round it
// retries, on the retry's stream.
func (a *contActor) retry(r *contRetry) {
	switch {
	case a.ended:
		// Off the mailbox: running the handler again may read the store
		// (a spilled journal, an answered record) first. Close waits for
		// it, as for a handler.
		if !a.m.runs.enter() {
			a.m.deliver(r.turn.stream, messages.EncodeError(r.turn.id, errShuttingDown), true)
			return
		}
		a.m.goOff(func() {
			defer a.m.runs.leave()
			r.again()
		})
		return
	case r.round < a.round:
		a.m.deliver(r.turn.stream, messages.EncodeError(r.turn.id, errAnswered), true)
		return
	case a.live != nil:
		// A retry of the round in progress takes its stream over; the
		// stream it replaces ends without an answer.
		a.m.cfg.Streams.DeliverStream(messages.StreamEvent{Stream: a.live.stream, Session: messages.ModernStreams, Signal: messages.SignalClosed})
		a.take(r.turn)
		return
	}
	if a.expiry != nil {
		a.expiry.Stop()
	}
	still := a.pending[:0]
	for _, p := range a.pending {
		raw, ok := r.answers[p.key]
		if !ok || !validAnswer(p.method, raw) {
			still = append(still, p) // asked again in the next round
			continue
		}
		a.journal = append(a.journal, answered{Method: p.method, Digest: p.digest, Result: raw})
		p.reply <- inputAnswer{result: raw}
	}
	clear(a.pending[len(still):])
	a.pending = still
	a.take(r.turn)
	if a.result != nil {
		a.handlerDone(a.result)
		return
	}
	if len(a.pending) > 0 {
		a.gatherSoon()
	}
}

// take makes t's stream the client's, and t the request the handler's
// Session reads.
func (a *contActor) take(t *turn) {
	a.live = t
	a.c.cur.Store(t)
}

// handlerDone sends the handler's answer on the live stream, or keeps it
// for the retry while there is none.
func (a *contActor) handlerDone(d *handlerDone) {
	if a.ended {
		return
	}
	if a.live == nil {
		a.result = d
		return
	}
	frame := a.m.answer(a.c, a.live, d.res, d.err)
	if a.kept {
		// Before the answer leaves: a replay sent once it is in hand is
		// refused, here and (recordAnswered) on every node.
		a.m.answered.add(a.ref.id, a.expires, time.Now())
		a.m.recordAnswered(a.ref.id, a.live.stream, frame)
	} else {
		a.m.deliver(a.live.stream, frame, true)
	}
	a.live = nil
	a.end()
}

// end ends the continuation: the handler is cancelled (its pending calls
// fail), nothing is posted to it any more, and it stops once the messages
// already sent are handled (a retry among them runs the handler again).
func (a *contActor) end() {
	if a.ended {
		return
	}
	a.ended = true
	a.c.cancel()
	if a.live != nil {
		a.m.cfg.Streams.DeliverStream(messages.StreamEvent{Stream: a.live.stream, Session: messages.ModernStreams, Signal: messages.SignalClosed})
		a.live = nil
	}
	for _, p := range a.pending {
		p.reply <- inputAnswer{err: context.Canceled}
	}
	a.pending = nil
	if a.gather != nil {
		a.gather.Stop()
	}
	if a.expiry != nil {
		a.expiry.Stop()
	}
	a.m.conts.Delete(a.ref.id)
	if a.kept {
		a.m.parked.Add(-1)
	}
	a.ref.stop()
}

// spill reports whether st's journal is too large to ride in it and can
// be spilled, and returns it encoded.
func (a *contActor) spill(st *requestState) ([]byte, bool) {
	if a.m.opts.Spill == nil || len(st.Journal) == 0 {
		return nil, false
	}
	data, err := json.Marshal(st.Journal)
	if err != nil || len(data) <= a.m.opts.SpillBytes {
		return nil, false
	}
	return data, true
}
