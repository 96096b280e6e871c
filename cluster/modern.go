package cluster

import (
	"context"
	"crypto/hkdf"
	"crypto/sha256"
	json "encoding/json/v2"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/mcp-actors/mcp-actors/messages"
)

// A modern request (2026-07-28) names no session; only the retry of one
// whose handler waits in a continuation has a node: the continuation's,
// named in its ID. The node holding the retry forwards it there
// (ForwardModern), the continuation's node serves it as if it had landed
// there (ServeModern), and its frames come back on the retry's own
// stream. The forward is a request: its reply says the node took it —
// lazily, as a routed session request is acknowledged (acks.go): when the
// answer is the stream's first event and comes within ackDelay, the reply
// carries it, and the usual retry crosses the route twice, there and
// back. The continuation's node ends the request once its stream has its
// answer; when the retry's client goes away before that, or its request
// ends, the holding node says so (the forwarded request's context ends
// there).
//
//	node B (retry, stream) ──forward{v, principal, msg, stream}──▶ node A: Modern.Serve
//	node B ◀──reply: ok, with the answer when it is the first event, or ok alone (then frames)── node A
//	node B request ends before its answer ──end{stream}──▶ node A: the forwarded context ends

// modernFormat is the format of a forwarded modern request this release
// writes and reads.
const modernFormat = 1

// forwardedModern is a forwarded modern request on the wire (JSON).
type forwardedModern struct {
	V            int               `json:"v"`
	Principal    string            `json:"principal,omitempty"`
	Msg          []byte            `json:"msg"` // the JSON-RPC request as the client sent it
	Stream       messages.StreamID `json:"stream"`
	ParamHeaders map[string]string `json:"paramHeaders,omitempty"`
}

// opCarried marks a forward's reply that carries the stream's first (and
// last) event.
const opCarried = "carried"

// modernEnd names a forwarded request whose client request has ended.
type modernEnd struct {
	V      int               `json:"v"`
	Stream messages.StreamID `json:"stream"`
}

// ErrNodeUnreachable reports a node that did not take a forwarded request
// in time (gone, cut off): the caller serves the request itself.
var ErrNodeUnreachable = errors.New("cluster: the node did not take the request")

// forwardTimeout bounds how long a node waits for another to take a
// forwarded request.
const forwardTimeout = 2 * time.Second

// ServeModern makes this node serve the modern requests other nodes
// forward to it with serve, each on a goroutine of its own, with a context
// that ends when its stream has its answer, when the forwarding node's
// request ends first, or after maxAge.
func (r *relay) ServeModern(serve func(ctx context.Context, req *messages.ModernRequest), maxAge time.Duration) error {
	sub, err := r.chunks.subscribe(r.node.subj.modern(r.node.ID()), func(msg *nats.Msg) {
		req, ok := decodeForwarded(msg.Data)
		if !ok {
			reply := nats.NewMsg(msg.Reply)
			reply.Header.Set(headerStatus, statusBad)
			_ = msg.RespondMsg(reply)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), maxAge)
		run := &fwdRequest{cancel: cancel}
		r.fwd.add(req.Stream, run)
		context.AfterFunc(ctx, func() { r.fwd.remove(req.Stream, run) })
		// Acknowledged by the stream's first event (acks.go), or after
		// ackDelay.
		r.ackDue.Store(req.Stream, &pendingAck{reply: msg.Reply, at: time.Now(), forwarded: true})
		r.stats.received.Add(1)
		// Off the subscription's goroutine: serving may read storage (a
		// spilled journal, an answered round) and must not hold up the
		// forwards behind it.
		if !r.goBackground(func() { serve(ctx, req) }) {
			cancel()
			r.ackDue.Delete(req.Stream)
			reply := nats.NewMsg(msg.Reply)
			reply.Header.Set(headerStatus, statusBad)
			_ = msg.RespondMsg(reply)
		}
	})
	if err != nil {
		return fmt.Errorf("cluster: subscribing to forwarded requests: %w", err)
	}
	r.subs = append(r.subs, sub)
	sub, err = r.node.nc.Subscribe(r.node.subj.modernEnd(r.node.ID()), func(msg *nats.Msg) {
		var end modernEnd
		if json.Unmarshal(msg.Data, &end) == nil && end.V == modernFormat {
			r.fwd.end(end.Stream)
		}
	})
	if err != nil {
		return fmt.Errorf("cluster: subscribing to forwarded requests' ends: %w", err)
	}
	r.subs = append(r.subs, sub)
	return r.node.nc.Flush()
}

// replyForwarded acknowledges the forwarded request of ev's stream, whose
// sender waits at reply: with ev in the reply when ev ends the stream and
// fits one message; with a plain reply otherwise, before ev is sent on.
// It reports whether the reply carried ev.
func (r *relay) replyForwarded(reply string, ev messages.StreamEvent) bool {
	m := nats.NewMsg(reply)
	m.Header.Set(headerStatus, statusOK)
	if ends(ev) {
		if data, err := messages.EncodeStreamEvent(ev); err == nil && int64(len(data)) <= r.node.nc.MaxPayload()/2 {
			m.Header.Set(headerOp, opCarried)
			m.Data = data
			if err := r.node.nc.PublishMsg(m); err == nil {
				return true
			}
			m.Header.Del(headerOp)
			m.Data = nil
		}
	}
	if err := r.node.nc.PublishMsg(m); err != nil {
		r.node.log.Debug("acknowledging a forwarded request failed", "err", err)
	}
	return false
}

// ends reports whether ev is the last event of its stream.
func ends(ev messages.StreamEvent) bool {
	return ev.Signal.Ends() || ev.Signal == messages.SignalFrame && ev.Frame.End
}

// endsModern reports whether ev is the last event of a modern request's
// stream (one a forward may have carried).
func endsModern(ev messages.StreamEvent) bool {
	return ev.Session == messages.ModernStreams && ends(ev)
}

// decodeForwarded reads a forwarded request; ok is false for one this
// release cannot read.
func decodeForwarded(data []byte) (req *messages.ModernRequest, ok bool) {
	var fm forwardedModern
	if err := json.Unmarshal(data, &fm); err != nil || fm.V != modernFormat {
		return nil, false
	}
	m, derr := messages.Decode(fm.Msg)
	if derr != nil {
		return nil, false
	}
	meta, perr := messages.ParseRequestMeta(m.Params)
	if perr != nil {
		return nil, false
	}
	return &messages.ModernRequest{Principal: fm.Principal, Msg: m, Meta: meta, Stream: fm.Stream, ParamHeaders: fm.ParamHeaders}, true
}

// forwarded are the forwarded requests this node serves, by stream.
type forwarded struct {
	mu      sync.Mutex
	running map[messages.StreamID]*fwdRequest
}

// fwdRequest is a forwarded request running here.
type fwdRequest struct{ cancel context.CancelFunc }

func (f *forwarded) add(s messages.StreamID, req *fwdRequest) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.running == nil {
		f.running = make(map[messages.StreamID]*fwdRequest)
	}
	f.running[s] = req
}

// remove forgets s's request, if req is still its (a retry forwarded
// again replaces it).
func (f *forwarded) remove(s messages.StreamID, req *fwdRequest) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.running[s] == req {
		delete(f.running, s)
	}
}

// end ends s's request, if it runs here.
func (f *forwarded) end(s messages.StreamID) {
	f.mu.Lock()
	req := f.running[s]
	f.mu.Unlock()
	if req != nil {
		req.cancel()
	}
}

// ForwardModern hands req to node, which serves it (ServeModern) and
// sends its frames to req.Stream; when ctx ends, node is told. It fails
// with ErrNodeUnreachable when node does not take it in time.
func (r *relay) ForwardModern(ctx context.Context, node string, req *messages.ModernRequest) error {
	raw, err := messages.Encode(req.Msg)
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	data, err := json.Marshal(&forwardedModern{V: modernFormat, Principal: req.Principal, Msg: raw, Stream: req.Stream, ParamHeaders: req.ParamHeaders})
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	msg := nats.NewMsg(r.node.subj.modern(node))
	msg.Data = data
	r.fwdOpen.Store(req.Stream, struct{}{})
	reply, _, err := r.hopRequest(ctx, forwardTimeout, msg)
	if err == nil && reply.Header.Get(headerStatus) != statusOK {
		err = fmt.Errorf("it answered %q", reply.Header.Get(headerStatus))
	}
	if err != nil {
		r.fwdOpen.Delete(req.Stream)
		return fmt.Errorf("%w: %w", ErrNodeUnreachable, err)
	}
	if reply.Header.Get(headerOp) == opCarried {
		if ev, err := messages.DecodeStreamEvent(reply.Data); err == nil {
			r.carried.Add(1)
			r.received(ev)
		} else {
			r.node.log.Warn("dropping a stream event that cannot be read", "err", err)
		}
	}
	end, _ := json.Marshal(&modernEnd{V: modernFormat, Stream: req.Stream})
	subject := r.node.subj.modernEnd(node)
	context.AfterFunc(ctx, func() {
		// The node ends the request itself once answered: it is told only
		// of a request that ends first.
		if _, open := r.fwdOpen.LoadAndDelete(req.Stream); open {
			_ = r.node.nc.Publish(subject, end)
		}
	})
	return nil
}

// StateKeys returns the keys for sealing the modern era's requestState
// that every node sharing this node's route secret derives alike
// (HKDF-SHA256 of the secret): current from the secret this node
// presents, previous (or nil) from the next one it accepts — during a
// rotation of the secret file (routesecret.go) what one secret sealed
// still opens. Both nil without a secret (routes authenticated by TLS
// alone, or a cluster on external NATS): then the nodes need a key given
// to each (mcp-actors serve --state-key-file). OnRouteSecrets tells when
// they change.
func (n *Node) StateKeys() (current, previous []byte) {
	secrets := []string{n.opts.Secret}
	if n.secrets != nil {
		secrets = n.secrets.all()
	}
	if secrets[0] == "" {
		return nil, nil
	}
	current = stateKey(secrets[0])
	if len(secrets) > 1 {
		previous = stateKey(secrets[1])
	}
	return current, previous
}

// stateKey derives a request state key from a route secret.
func stateKey(secret string) []byte {
	k, err := hkdf.Key(sha256.New, []byte(secret), []byte("mcp-actors"), "request state key v1", 32)
	if err != nil {
		panic(err) // only for a length SHA-256 cannot give
	}
	return k
}

// completionFormat is the format of a URL elicitation's completion told
// to every node.
const completionFormat = 1

// elicitationDone is a URL elicitation's completion on the wire (JSON).
type elicitationDone struct {
	V         int    `json:"v"`
	ID        string `json:"id"`
	Principal string `json:"principal,omitempty"`
}

// OnCompletion calls fn on this node for every URL elicitation completed
// on any node (PublishCompletion), this one included.
func (r *relay) OnCompletion(fn func(id, principal string)) error {
	sub, err := r.node.nc.Subscribe(r.node.subj.completions(), func(msg *nats.Msg) {
		var d elicitationDone
		if json.Unmarshal(msg.Data, &d) == nil && d.V == completionFormat && d.ID != "" {
			fn(d.ID, d.Principal)
		}
	})
	if err != nil {
		return fmt.Errorf("cluster: subscribing to elicitation completions: %w", err)
	}
	r.subs = append(r.subs, sub)
	return r.node.nc.Flush()
}

// PublishCompletion tells every node that URL elicitation id of principal
// is done; it returns once the NATS server has it, or ctx ends.
func (r *relay) PublishCompletion(ctx context.Context, id, principal string) error {
	data, err := json.Marshal(&elicitationDone{V: completionFormat, ID: id, Principal: principal})
	if err != nil {
		return err
	}
	if err := r.node.nc.Publish(r.node.subj.completions(), data); err != nil {
		return fmt.Errorf("cluster: telling the nodes of a completion: %w", err)
	}
	if _, ok := ctx.Deadline(); !ok { // NATS wants one
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, forwardTimeout)
		defer cancel()
	}
	return r.node.nc.FlushWithContext(ctx)
}
