package session

import (
	"context"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-actors/mcp-actors/messages"
)

// turn is the request a modern call answers now: the first request, then
// each retry that resumes it.
type turn struct {
	id     messages.ID
	meta   *messages.RequestMeta
	stream messages.StreamID
}

// modernCall is one run of a handler for a modern request: what its
// Session reads and sends through. Until the handler asks the client for
// input, its frames go straight to the request's stream; from then on
// through its continuation actor (cont), which knows which stream is the
// client's.
type modernCall struct {
	m       *Modern
	req     *messages.ModernRequest // the request that started the run
	mrtr    bool                    // its method may ask for input
	cur     atomic.Pointer[turn]
	cancel  context.CancelFunc // ends the handler's context
	started time.Time          // when the run started (with an Observer)

	// named are the request's inputResponses, for calls whose input key
	// the handler names (InputKey).
	named map[string]jsontext.Value
	// reqDigest is digest's, made once.
	reqDigest  reqDigests
	digestOnce sync.Once
	// seed makes the IDs of the run's URL elicitations (the nth is the
	// same on every run of the request's handler), made at the first
	// (guarded by mu); urlCalls counts them.
	seed     string
	urlCalls atomic.Int64
	used     []answered // the named answers taken, for the journal of later rounds

	mu      sync.Mutex
	journal *journal // answers given back before asking (a run again); nil: none
	cont    *contRef // set at the first input call the journal does not answer
	done    bool     // answered without a continuation
	unwatch func() bool
}

// meta is the _meta of the request being answered.
func (c *modernCall) meta() *messages.RequestMeta { return c.cur.Load().meta }

// turnNow is the request being answered.
func (c *modernCall) turnNow() *turn { return c.cur.Load() }

// start runs the handler on a goroutine of its own (Config.Go). Its
// context is not the client's request's, which ends with the first
// answer while the handler may wait for a retry; the client's going away
// before the answer cancels it (streamGone). Once Close has begun, the
// request is answered with an error instead.
func (c *modernCall) start(ctx context.Context) {
	if !c.m.runs.enter() {
		t := c.cur.Load()
		c.m.deliver(t.stream, messages.EncodeError(t.id, errShuttingDown), true)
		return
	}
	hctx := context.Background()
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		hctx = trace.ContextWithSpanContext(hctx, sc)
	}
	hctx, c.cancel = context.WithCancel(hctx)
	if c.m.cfg.Observer != nil {
		c.started = time.Now()
	}
	t := c.cur.Load()
	c.unwatch = context.AfterFunc(ctx, func() { c.streamGone(t.stream) })
	sess := &Session{req: &requestScope{id: t.id, method: c.req.Msg.Method}, mod: c}
	c.m.running.Store(c, struct{}{})
	run := func() {
		defer c.m.runs.leave()
		defer c.m.running.Delete(c)
		c.run(hctx, sess)
	}
	if g := c.m.cfg.Go; g != nil {
		g(run)
	} else {
		go run()
	}
}

// run runs the handler and sends what it returns. A panic is logged and
// answered with an internal error.
func (c *modernCall) run(ctx context.Context, sess *Session) {
	var res any
	var err error
	defer func() {
		if p := recover(); p != nil {
			c.m.log.Error("handler panicked", "method", c.req.Msg.Method, "panic", p, "stack", string(debug.Stack()))
			res, err = nil, messages.ErrInternal
		}
		if obs := c.m.cfg.Observer; obs != nil {
			outcome := OutcomeOK
			switch r, _ := res.(*messages.CallToolResult); {
			case ctx.Err() != nil:
				outcome = OutcomeCancelled
			case err != nil || (r != nil && r.IsError):
				outcome = OutcomeError
			}
			r := RequestReport{Method: c.req.Msg.Method, Outcome: outcome, Duration: time.Since(c.started)}
			if r.Method == messages.MethodCallTool {
				r.Tool = c.req.Meta.Name // read with the request's _meta
			}
			obs.RequestHandled(r)
		}
		c.finish(res, err)
	}()
	res, err = c.m.cfg.Handler.Serve(ctx, sess, c.req.Msg)
}

// finish sends the handler's answer: to the stream of the request, or
// through the continuation, which knows the stream of the last retry.
func (c *modernCall) finish(res any, err error) {
	c.mu.Lock()
	cont := c.cont
	c.done = cont == nil
	c.mu.Unlock()
	c.unwatch()
	if cont != nil {
		cont.post(&handlerDone{res: res, err: err})
		return
	}
	c.cancel()
	t := c.cur.Load()
	c.m.deliver(t.stream, c.m.answer(c, t, res, err), true)
}

// send sends a frame of the request's (progress, a log message) to the
// client's stream; while the handler waits for a retry there is none, and
// the frame is dropped.
func (c *modernCall) send(frame []byte) {
	c.mu.Lock()
	cont := c.cont
	if cont == nil && !c.done {
		c.m.deliver(c.cur.Load().stream, frame, false)
	}
	c.mu.Unlock()
	if cont != nil {
		cont.post(&contFrame{data: frame})
	}
}

// streamGone is told that the client of stream went away. Before any
// input call, that cancels the request (closing the stream is how a
// client of Streamable HTTP cancels); later, the continuation decides.
func (c *modernCall) streamGone(stream messages.StreamID) {
	c.mu.Lock()
	cont, done := c.cont, c.done
	c.mu.Unlock()
	switch {
	case cont != nil:
		cont.post(&contStreamGone{stream: stream})
	case !done:
		c.cancel()
	}
}

// input asks the client for input: from the journal when it has the
// answer; otherwise in the next round of the continuation (made at the
// first such call), and waits for the answer.
func (c *modernCall) input(ctx context.Context, method string, params any) (jsontext.Value, error) {
	if !c.mrtr {
		return nil, fmt.Errorf("calling %q: %w", method, ErrNoInput)
	}
	raw, err := messages.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("calling %q: encoding its params: %w", method, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	digest := callDigest(method, raw)
	key := inputKeyOf(ctx)
	c.mu.Lock()
	if c.journal != nil {
		if a, ok := c.journal.take(method, digest); ok {
			c.mu.Unlock()
			return a, nil
		}
	}
	if a, ok := c.named[key]; ok && key != "" && validAnswer(method, a) {
		delete(c.named, key) // one answer, one call
		c.used = append(c.used, answered{Method: method, Digest: digest, Result: a})
		c.mu.Unlock()
		return a, nil
	}
	if c.done {
		c.mu.Unlock()
		return nil, context.Canceled
	}
	if c.cont == nil {
		c.cont = c.m.spawn(c)
	}
	cont := c.cont
	c.mu.Unlock()
	reply := make(chan inputAnswer, 1)
	cont.post(&inputCall{method: method, params: raw, digest: digest, reply: reply, key: key})
	select {
	case a := <-reply:
		return a.result, a.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// inputKey is the context key of InputKey.
type inputKey struct{}

// InputKey returns a context under which a call for the client's input
// (Elicit, CreateMessage, ListRoots) made while serving a modern request
// is named key in the input_required result's inputRequests (by default
// the runtime names it, "elicitation-1"). A retry's inputResponses under
// key answer it even without requestState, as a client that knows the
// server's questions may send them. Legacy sessions ignore it.
func InputKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, inputKey{}, key)
}

func inputKeyOf(ctx context.Context) string {
	k, _ := ctx.Value(inputKey{}).(string)
	return k
}

// validAnswer reports whether raw has the shape of an answer to method:
// an ElicitResult (an object with an action), a CreateMessageResult (an
// object with a role and content), a ListRootsResult (an object with a
// roots array). Anything else is not an answer: the question is asked
// again.
func validAnswer(method string, raw jsontext.Value) bool {
	var a struct {
		Action  *string          `json:"action"`
		Role    *string          `json:"role"`
		Content jsontext.Value   `json:"content"`
		Roots   []jsontext.Value `json:"roots"`
	}
	if json.Unmarshal(raw, &a) != nil {
		return false
	}
	switch method {
	case messages.MethodElicit:
		return a.Action != nil
	case messages.MethodCreateMessage:
		return a.Role != nil && len(a.Content) > 0
	case messages.MethodListRoots:
		return a.Roots != nil
	}
	return true
}

// newState returns the requestState of round of this run, valid until
// expires: bound to the request that started the run (principal, method,
// digests) and carrying the seed of its URL elicitations.
func (c *modernCall) newState(round int, expires time.Time) *requestState {
	d := c.digest()
	return &requestState{
		Round: round, Principal: c.req.Principal, Method: c.req.Msg.Method,
		Digest: d.canonical, RawDigest: d.raw, Expires: expires.UnixMilli(), Seed: c.seedIfAny(),
	}
}

// digest returns the digests of the request that started the run (its
// requestState's binding), computed once.
func (c *modernCall) digest() reqDigests {
	c.digestOnce.Do(func() {
		c.reqDigest = reqDigests{
			canonical: requestDigest(c.req.Msg.Method, c.req.Meta),
			raw:       rawRequestDigest(c.req.Msg.Method, c.req.Meta),
		}
	})
	return c.reqDigest
}

// seedOf returns the seed of the request's URL elicitation IDs, made now
// if the request has none yet.
func (c *modernCall) seedOf() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seed == "" {
		c.seed = newSeed()
	}
	return c.seed
}

// seedIfAny returns the seed, or "" if no URL elicitation made one.
func (c *modernCall) seedIfAny() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seed
}
