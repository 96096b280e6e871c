package session

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json/jsontext"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/mcp-actors/mcp-actors/internal/sealed"
	"github.com/mcp-actors/mcp-actors/messages"
)

// ModernOptions configure the serving of modern requests.
type ModernOptions struct {
	// Node names this node in continuation IDs ("" alone).
	Node string
	// Sealer seals requestState (nil: a key of this process's own).
	Sealer *sealed.Sealer
	// MaxParked bounds the continuations this node keeps at once
	// (default 10,000; negative: none): past it, a handler that asks for
	// input is not kept; its retry runs it again from the answers
	// requestState carries.
	MaxParked int
	// ParkTTL is how long a round's requestState is valid and its
	// continuation waits for the retry (default 10 minutes).
	ParkTTL time.Duration
	// Gather is how long a round stays open for more input requests after
	// the last one (default 2 ms): calls a handler makes concurrently
	// share a round.
	Gather time.Duration
	// ListTTL is the ttlMs of discover and list results (default 60 s);
	// resources/read results are private and immediately stale.
	ListTTL time.Duration
	// Forward, when set, hands a retry to the node that holds its
	// continuation (named in the continuation's ID), which serves it and
	// sends its frames to the retry's stream; an error (the node is gone,
	// or cut off) makes this node run the handler again from the journal.
	Forward func(ctx context.Context, node string, req *messages.ModernRequest) error
	// Spill, when set, keeps a round's journal when it is larger than
	// SpillBytes (default 16 KiB), and requestState names it instead of
	// carrying it; with RecordAnswers, it also records each kept
	// continuation that answered, so that a retry of its last round is
	// refused on any node, also once its node is lost. Entries must live
	// ParkTTL. A cluster's is a JetStream bucket (cluster.Journals).
	Spill         Store
	SpillBytes    int
	RecordAnswers bool
	// Listen, when set, serves subscriptions/listen (the root package:
	// the catalog's change notifications); without it the method is not
	// found.
	Listen func(ctx context.Context, req *messages.ModernRequest)
	// Check, when set, checks a request before it is served (the root
	// package: Mcp-Param headers against the tool's x-mcp-header
	// parameters); an error it returns is the answer.
	Check func(req *messages.ModernRequest) *messages.Error
}

func (o ModernOptions) withDefaults() ModernOptions {
	if o.Sealer == nil {
		o.Sealer = sealed.Ephemeral()
	}
	switch {
	case o.MaxParked == 0:
		o.MaxParked = 10000
	case o.MaxParked < 0:
		o.MaxParked = 0 // none kept
	}
	if o.ParkTTL <= 0 {
		o.ParkTTL = 10 * time.Minute
	}
	if o.Gather <= 0 {
		o.Gather = 2 * time.Millisecond
	}
	if o.ListTTL <= 0 {
		o.ListTTL = time.Minute
	}
	if o.SpillBytes <= 0 {
		o.SpillBytes = 16 << 10
	}
	return o
}

// Modern serves the requests of the modern era on one node. A request is
// served where it lands, with no actor and nothing written, unless its
// handler asks the client for input (Elicit, CreateMessage, ListRoots):
// then a continuation actor keeps the handler, the client gets
// input_required with a sealed requestState, and the retry — with the
// answers — resumes it. A retry that finds no continuation (expired, its
// node lost, the parking bound reached) runs the handler again, answering
// its calls from the journal in requestState.
//
//	request ──▶ handler (Go) ──result──▶ stream
//	               │ input call
//	               ▼
//	     continuation actor ──round cut──▶ input_required{inputRequests, requestState} ──▶ stream
//	               ▲
//	retry{requestState, inputResponses} ──answers──▶ handler goes on ──▶ retry's stream
type Modern struct {
	cfg  *Config
	root *actor.RootContext
	opts ModernOptions
	log  *slog.Logger

	conts    sync.Map       // continuation ID → *contRef, from spawn to end
	running  sync.Map       // *modernCall → struct{}: handlers running
	runs     runGate        // handler runs and what else Close waits for
	meta     messages.Meta  // serverMeta's, made once
	metaJSON jsontext.Value // meta, encoded
	metaOnce sync.Once
	// answered remembers the continuations that sent their result, until
	// their last requestState expires: a retry of one is refused rather
	// than running the handler again.
	answered answeredSet
	parked   atomic.Int64 // continuations kept
}

// NewModern returns what serves modern requests with cfg's handler and
// streams.
func NewModern(root *actor.RootContext, cfg *Config, o ModernOptions) *Modern {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Modern{cfg: cfg, root: root, opts: o.withDefaults(), log: log}
}

// Close ends the serving of modern requests: continuations waiting for a
// retry end at once (the retry runs the handler again, from the journal,
// wherever it lands); running handlers get until grace to answer, then
// are cancelled; Close returns once every handler has returned, or ctx
// ends.
func (m *Modern) Close(ctx context.Context, grace time.Duration) error {
	m.conts.Range(func(_, ref any) bool {
		ref.(*contRef).post(&contExpire{})
		return true
	})
	done := m.runs.close()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-done:
		return nil
	case <-t.C:
	case <-ctx.Done():
	}
	m.running.Range(func(c, _ any) bool {
		c.(*modernCall).cancel()
		return true
	})
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TTL returns how long a requestState is valid.
func (m *Modern) TTL() time.Duration { return m.opts.ParkTTL }

// Parked returns the number of continuations this node keeps.
func (m *Modern) Parked() int { return int(m.parked.Load()) }

// inputMethods are the methods whose handlers may ask for input.
func inputMethod(method string) bool {
	switch method {
	case messages.MethodCallTool, messages.MethodGetPrompt, messages.MethodReadResource:
		return true
	}
	return false
}

// Serve serves req; its frames go to req.Stream. ctx is the client's
// request: once it ends before the answer, the request is cancelled.
// Serve returns before the answer when a handler runs.
func (m *Modern) Serve(ctx context.Context, req *messages.ModernRequest) {
	msg := req.Msg
	switch msg.Method {
	case messages.MethodDiscover:
		m.deliver(req.Stream, m.discover(msg.ID), true)
		return
	case messages.MethodSubscriptionsListen:
		if m.opts.Listen != nil {
			m.opts.Listen(ctx, req)
			return
		}
	case messages.MethodInitialize, messages.MethodPing, messages.MethodSetLevel,
		messages.MethodSubscribe, messages.MethodUnsubscribe:
		m.deliver(req.Stream, messages.EncodeError(msg.ID, messages.Errorf(messages.CodeMethodNotFound,
			"method not found: %q is not part of protocol %s", msg.Method, req.Meta.ProtocolVersion)), true)
		return
	}
	if m.opts.Check != nil {
		if e := m.opts.Check(req); e != nil {
			m.deliver(req.Stream, messages.EncodeError(msg.ID, e), true)
			return
		}
	}
	t := &turn{id: msg.ID, meta: req.Meta, stream: req.Stream}
	c := &modernCall{m: m, req: req, mrtr: inputMethod(msg.Method)}
	c.cur.Store(t)
	if rp := req.Meta.Retry; c.mrtr && (rp.RequestState != "" || rp.InputResponses != nil) {
		// Answers keyed by an input key the handler names (InputKey) are
		// its calls' answers with or without requestState: the key says
		// which question they answer.
		c.named = rp.InputResponses
		if rp.RequestState != "" {
			st, serr := m.openState(rp.RequestState, req.Principal, msg.Method, req.Meta, time.Now())
			if serr != nil {
				m.deliver(req.Stream, messages.EncodeError(msg.ID, serr), true)
				return
			}
			// Without its continuation (expired, not kept, its node
			// lost), the handler runs again, with every answer so far —
			// unless the continuation answered already.
			again := func() {
				if m.wasAnswered(ctx, st.Cont) {
					m.deliver(req.Stream, messages.EncodeError(msg.ID, errAnswered), true)
					return
				}
				entries := m.spilledJournal(ctx, st)
				for _, a := range st.Outstanding {
					if r, ok := rp.InputResponses[a.Key]; ok && validAnswer(a.Method, r) {
						entries = append(entries, answered{Method: a.Method, Digest: a.Digest, Result: r})
					}
				}
				c.journal = newJournal(entries)
				if st.Seed != "" {
					c.seed = st.Seed
				}
				c.start(ctx)
			}
			if node := m.nodeOf(st.Cont); node != "" && node != m.opts.Node && m.opts.Forward != nil {
				if err := m.opts.Forward(ctx, node, req); err == nil {
					return
				}
				m.log.Debug("the node of a continuation did not take its retry: running the handler again here", "node", node)
				again()
				return
			}
			// A continuation that answered has ended: again refuses.
			if ref, ok := m.conts.Load(st.Cont); ok && st.Cont != "" {
				if ref.(*contRef).retry(ctx, st.Round, t, rp.InputResponses, again) {
					return
				}
			}
			again()
			return
		}
	}
	c.start(ctx)
}

// newSeed returns a random seed for a request's URL elicitation IDs.
func newSeed() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// goOff runs f on a goroutine of Config.Go (the root package reuses
// them), or a new one.
func (m *Modern) goOff(f func()) {
	if g := m.cfg.Go; g != nil {
		g(f)
		return
	}
	go f()
}

// deliver sends one frame to a stream.
func (m *Modern) deliver(stream messages.StreamID, data []byte, end bool) {
	m.cfg.Streams.DeliverStream(messages.StreamEvent{Stream: stream, Session: messages.ModernStreams, Signal: messages.SignalFrame, Frame: messages.Frame{Data: data, End: end}})
}

// nodeOf returns the node a continuation ID names ("" for none: a lone
// node's).
func (m *Modern) nodeOf(cont string) string {
	node, _, ok := strings.Cut(cont, ".")
	if !ok {
		return ""
	}
	return node
}

// newContID returns a new continuation ID, naming this node as a session
// ID does.
func (m *Modern) newContID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := base64.RawURLEncoding.EncodeToString(b[:])
	if m.opts.Node != "" {
		return m.opts.Node + "." + id
	}
	return id
}
