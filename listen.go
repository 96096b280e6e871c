package mcpactors

import (
	"context"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"slices"
	"sync"

	"github.com/mcp-actors/mcp-actors/messages"
)

// subscriptions/listen (2026-07-28): a long-lived request whose stream
// carries the change notifications its client opted in to. A listener is
// registered on the node that holds the request's stream before the
// acknowledgement is written, and is fed by the same broadcast that tells
// the node's legacy sessions (Server.broadcast, which every node runs for
// a change made on any node): each change reaches each listener once.
//
//	listen ──▶ filter honoured ──▶ register ──▶ acknowledged{subscriptionId} ──▶ stream
//	broadcast(method, uri) ──▶ each listener opted in ──▶ notification{_meta.subscriptionId}
//	client gone ──▶ unregister;  drain ──▶ result{subscriptionId}, end

// Bounds of the listens one node holds (they are not configurable).
const (
	defaultMaxListens             = 10000
	defaultMaxListensPerPrincipal = 100
)

// SubscriptionFilter is the notifications a listen opts in to.
type subscriptionFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitzero"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitzero"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitzero"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
}

// wants reports whether the filter opts in to method (for uri).
func (f *subscriptionFilter) wants(method, uri string) bool {
	switch method {
	case messages.MethodToolsListChanged:
		return f.ToolsListChanged
	case messages.MethodPromptsListChanged:
		return f.PromptsListChanged
	case messages.MethodResourcesListChanged:
		return f.ResourcesListChanged
	case messages.MethodResourceUpdated:
		return slices.Contains(f.ResourceSubscriptions, uri)
	}
	return false
}

// listener is one open subscriptions/listen.
type listener struct {
	id        messages.ID // the request's: the subscription's ID
	principal string
	stream    messages.StreamID
	filter    subscriptionFilter
}

// listeners are a node's open listens.
type listeners struct {
	mu           sync.Mutex
	all          map[*listener]struct{}
	perPrincipal map[string]int
	closed       bool
}

// listen serves subscriptions/listen: the acknowledgement, then the
// notifications the client opted in to, until the client goes (ctx) or
// the server drains.
func (s *Server) listen(ctx context.Context, req *messages.ModernRequest) {
	msg := req.Msg
	var p struct {
		Notifications *subscriptionFilter `json:"notifications"`
	}
	if perr := messages.DecodeParams(msg.Params, &p); perr != nil {
		s.deliverModern(req.Stream, messages.EncodeError(msg.ID, perr), true)
		return
	}
	if p.Notifications == nil {
		s.deliverModern(req.Stream, messages.EncodeError(msg.ID, messages.Errorf(messages.CodeInvalidParams,
			`invalid params: "notifications" is required (the notification types to receive)`)), true)
		return
	}
	l := &listener{id: msg.ID, principal: req.Principal, stream: req.Stream, filter: *p.Notifications}
	if e := s.listens.add(l); e != nil {
		s.deliverModern(req.Stream, messages.EncodeError(msg.ID, e), true)
		return
	}
	ack, err := messages.EncodeNotification(messages.MethodSubscriptionsAcknowledged, &struct {
		Meta          messages.Meta       `json:"_meta"`
		Notifications *subscriptionFilter `json:"notifications"`
	}{messages.Meta{messages.MetaKeySubscriptionID: jsontext.Value(msg.ID.Raw())}, &l.filter})
	if err != nil {
		s.listens.remove(l)
		s.deliverModern(req.Stream, messages.EncodeError(msg.ID, messages.ErrInternal), true)
		return
	}
	s.deliverModern(req.Stream, ack, false)
	context.AfterFunc(ctx, func() { s.listens.remove(l) })
}

// notifyListeners sends a change notification to every listener of this
// node that opted in to it, tagged with its subscription.
func (s *Server) notifyListeners(method string, params any, uri string) {
	ls := s.listens.matching(method, uri)
	if len(ls) == 0 {
		return
	}
	// The params once; each listener's copy differs only in its _meta.
	raw, err := messages.Marshal(params)
	if err != nil {
		return
	}
	var obj map[string]jsontext.Value
	if err := json.Unmarshal(raw, &obj); err != nil {
		return
	}
	for _, l := range ls {
		obj["_meta"] = jsontext.Value(`{"` + messages.MetaKeySubscriptionID + `":` + l.id.Raw() + `}`)
		frame, err := messages.EncodeNotification(method, obj)
		if err != nil {
			return
		}
		if !s.deliverModern(l.stream, frame, false) {
			s.listens.remove(l)
		}
	}
}

// endListens ends every listen of this node with its result (a graceful
// end: the server drains), and takes no more.
func (s *Server) endListens() {
	for _, l := range s.listens.closeAll() {
		res := []byte(`{"resultType":"complete","_meta":{"` + messages.MetaKeySubscriptionID + `":` + l.id.Raw() +
			`,"` + messages.MetaKeyServerInfo + `":` + string(s.serverInfoJSON()) + `}}`)
		frame, err := messages.EncodeResult(l.id, jsontext.Value(res))
		if err == nil {
			s.deliverModern(l.stream, frame, true)
		}
	}
}

// serverInfoJSON is the server's Implementation, encoded.
func (s *Server) serverInfoJSON() jsontext.Value {
	b, _ := messages.Marshal(s.info)
	return b
}

// deliverModern sends a frame to a stream of a modern request, and
// reports whether the stream took it.
func (s *Server) deliverModern(stream messages.StreamID, data []byte, end bool) bool {
	return s.router.DeliverStream(messages.StreamEvent{Stream: stream, Session: messages.ModernStreams,
		Signal: messages.SignalFrame, Frame: messages.Frame{Data: data, End: end}})
}

func (ls *listeners) add(l *listener) *messages.Error {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	switch {
	case ls.closed:
		return messages.Errorf(messages.CodeInvalidRequest, "invalid request: this node is draining; listen on another")
	case len(ls.all) >= defaultMaxListens:
		return messages.Errorf(messages.CodeInvalidRequest, "invalid request: this node has %d open listens, its bound", defaultMaxListens)
	case l.principal != "" && ls.perPrincipal[l.principal] >= defaultMaxListensPerPrincipal:
		// Without authentication every client is "": only the node's
		// bound holds.
		return messages.Errorf(messages.CodeInvalidRequest, "invalid request: %d open listens of one client, the bound", defaultMaxListensPerPrincipal)
	}
	if ls.all == nil {
		ls.all, ls.perPrincipal = make(map[*listener]struct{}), make(map[string]int)
	}
	ls.all[l] = struct{}{}
	ls.perPrincipal[l.principal]++
	return nil
}

func (ls *listeners) len() int {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return len(ls.all)
}

func (ls *listeners) remove(l *listener) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if _, ok := ls.all[l]; !ok {
		return
	}
	delete(ls.all, l)
	if ls.perPrincipal[l.principal]--; ls.perPrincipal[l.principal] <= 0 {
		delete(ls.perPrincipal, l.principal)
	}
}

func (ls *listeners) matching(method, uri string) []*listener {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	var out []*listener
	for l := range ls.all {
		if l.filter.wants(method, uri) {
			out = append(out, l)
		}
	}
	return out
}

// closeAll removes every listener and refuses new ones; it returns those
// removed.
func (ls *listeners) closeAll() []*listener {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.closed = true
	out := make([]*listener, 0, len(ls.all))
	for l := range ls.all {
		out = append(out, l)
	}
	clear(ls.all)
	clear(ls.perPrincipal)
	return out
}
