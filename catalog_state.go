package mcpactors

import (
	"context"
	"encoding/base64"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/mcp-actors/mcp-actors/internal/clusterapi"
	"github.com/mcp-actors/mcp-actors/messages"
)

// The catalog's shared state: which tools are enabled, and how often each
// resource has changed. On one server it is kept here; in a cluster it is
// replicated (package cluster keeps it: clusterapi.Relay's UpdateTool), so
// that every node lists the same tools and every session on every node is
// told of a change once.
//
//	SetToolEnabled / ToggleTool ──▶ cluster: tool on|off    ──▶ every node: list changes ──▶ tools/list_changed
//	NotifyResourceUpdated       ──▶ cluster: resource version ──▶ every node: subscribers  ──▶ resources/updated

// catalogState is where the shared state lives when it is replicated.
type catalogState interface {
	UpdateTool(ctx context.Context, name string, cur bool, next func(on bool) bool) (bool, error)
	BumpResource(ctx context.Context, uri string, local uint64) (uint64, error)
	WatchCatalog(w clusterapi.CatalogWatch)
}

// SetToolEnabled lists the tool name (added with AddTool) or hides it: a
// disabled tool is neither listed nor callable, and its handler is kept
// for when it is enabled again. Every open session — in a cluster, on every
// node — is told the tool list changed.
func (s *Server) SetToolEnabled(ctx context.Context, name string, enabled bool) error {
	_, err := s.updateTool(ctx, name, func(bool) bool { return enabled })
	return err
}

// ToggleTool enables the tool name if it is disabled and disables it if
// it is enabled (atomically across a cluster), and returns whether it is
// enabled now.
func (s *Server) ToggleTool(ctx context.Context, name string) (bool, error) {
	return s.updateTool(ctx, name, func(on bool) bool { return !on })
}

func (s *Server) updateTool(ctx context.Context, name string, next func(bool) bool) (bool, error) {
	if !s.knowsTool(name) {
		return false, fmt.Errorf("%w: no tool %q was added", ErrInvalidItem, name)
	}
	if s.state == nil {
		s.mu.Lock()
		on := next(s.HasTool(name))
		changed := s.setToolLocked(name, on)
		s.mu.Unlock()
		if changed {
			s.broadcast(messages.MethodToolsListChanged, &messages.ListChangedParams{}, "")
		}
		return on, nil
	}
	on, err := s.state.UpdateTool(ctx, name, s.HasTool(name), next)
	if err != nil {
		return false, err
	}
	s.applyTool(name, on) // here at once; the others when the change reaches them
	return on, nil
}

// knowsTool reports whether a tool was added, enabled or not.
func (s *Server) knowsTool(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, disabled := s.disabled[name]
	return disabled || s.HasTool(name)
}

// applyTool enables or disables a tool here, and tells the open sessions
// if that changed anything.
func (s *Server) applyTool(name string, on bool) {
	s.mu.Lock()
	changed := s.setToolLocked(name, on)
	s.mu.Unlock()
	if changed {
		s.broadcast(messages.MethodToolsListChanged, &messages.ListChangedParams{}, "")
	}
}

// setToolLocked moves a tool between the catalog and the disabled tools and
// reports whether it moved. Call with mu held.
func (s *Server) setToolLocked(name string, on bool) bool {
	if on {
		t, ok := s.disabled[name]
		if !ok {
			return false
		}
		delete(s.disabled, name)
		s.tools.Store(s.tools.Load().with(name, t))
		return true
	}
	t, ok := s.tools.Load().get(name)
	if !ok {
		return false
	}
	next, _ := s.tools.Load().without(name)
	s.tools.Store(next)
	if s.disabled == nil {
		s.disabled = map[string]*tool{}
	}
	s.disabled[name] = t
	return true
}

// NotifyResourceUpdated records that the resource uri changed (its
// version goes up: ResourceVersion) and sends notifications/resources/
// updated to every open session subscribed to it — in a cluster, on every
// node.
func (s *Server) NotifyResourceUpdated(uri string) {
	if s.state == nil {
		s.bumpVersion(uri, 0)
		return
	}
	version, err := s.state.BumpResource(context.Background(), uri, s.ResourceVersion(uri))
	if err != nil {
		s.log.Error("replicating a resource update failed; only this node's sessions are told", "uri", uri, "err", err)
		s.bumpVersion(uri, 0)
		return
	}
	s.bumpVersion(uri, version)
}

// ResourceVersion returns how often the resource uri has changed
// (NotifyResourceUpdated), cluster-wide: a handler can serve content that
// follows it on every node.
func (s *Server) ResourceVersion(uri string) uint64 {
	if v, ok := s.versions.Load(uri); ok {
		return v.(uint64)
	}
	return 0
}

// bumpVersion sets uri's version to v (0: one more than now) and tells the
// subscribed sessions, if the version went up.
func (s *Server) bumpVersion(uri string, v uint64) {
	s.mu.Lock()
	cur := s.ResourceVersion(uri)
	if v == 0 {
		v = cur + 1
	}
	if v <= cur {
		s.mu.Unlock()
		return
	}
	s.versions.Store(uri, v)
	s.mu.Unlock()
	s.broadcast(messages.MethodResourceUpdated, &messages.ResourceUpdatedParams{URI: uri}, uri)
}

// The keys of a session's catalog mark: the tool list's fingerprint under
// markTools, and each subscribed resource's version under markKey(uri).
const (
	markTools          = "tools"
	markResourcePrefix = "res."
)

// markKey is the key of a resource's version in a session's catalog mark.
func markKey(uri string) string {
	return markResourcePrefix + base64.RawURLEncoding.EncodeToString([]byte(uri))
}

// markURI is the URI of a resource's mark key, and whether key is one.
func markURI(key string) (string, bool) {
	enc, ok := strings.CutPrefix(key, markResourcePrefix)
	if !ok {
		return "", false
	}
	uri, err := base64.RawURLEncoding.DecodeString(enc)
	return string(uri), err == nil
}

// catalogMark is a session's catalog mark (session.Config.Mark): the
// fingerprint of the tool list and the version of each resource it
// subscribes to, as this node knows them now.
func (s *Server) catalogMark(subscriptions []string) map[string]string {
	m := make(map[string]string, 1+len(subscriptions))
	m[markTools] = s.toolsFingerprint()
	for _, uri := range subscriptions {
		m[markKey(uri)] = strconv.FormatUint(s.ResourceVersion(uri), 10)
	}
	return m
}

// catchUp returns what a session restored after the loss of its node
// must be told (session.Config.CatchUp) of what changed in the catalog
// since its mark:
// the broadcasts of a change made while it had no node reached no one.
// A change its lost node told it of after its last State write is told
// again — once more is harmless (the client lists or reads again); never
// is not. A mark of a State written without one says nothing.
func (s *Server) catchUp(mark map[string]string) []*messages.NotifyClient {
	if mark == nil {
		return nil
	}
	var out []*messages.NotifyClient
	notify := func(method string, params any, uri string) {
		if m := s.notification(method, params, uri); m != nil {
			out = append(out, m)
		}
	}
	if fp, ok := mark[markTools]; ok && fp != s.toolsFingerprint() {
		notify(messages.MethodToolsListChanged, &messages.ListChangedParams{}, "")
	}
	for key, v := range mark {
		uri, ok := markURI(key)
		seen, err := strconv.ParseUint(v, 10, 64)
		if ok && err == nil && s.ResourceVersion(uri) > seen {
			notify(messages.MethodResourceUpdated, &messages.ResourceUpdatedParams{URI: uri}, uri)
		}
	}
	return out
}

// toolsFingerprint identifies the list of enabled tools: the FNV-1a hash
// of their names, in order.
func (s *Server) toolsFingerprint() string {
	h := fnv.New64a()
	for _, name := range s.tools.Load().keys {
		_, _ = h.Write([]byte(name))
		_, _ = h.Write([]byte{0})
	}
	return strconv.FormatUint(h.Sum64(), 16)
}
