package session

import (
	"context"

	"github.com/mcp-actors/mcp-actors/messages"
)

// RootsOption configures ListRoots.
type RootsOption func(*rootsOptions)

type rootsOptions struct{ fresh bool }

// FreshRoots makes ListRoots ask the client even when roots are cached.
func FreshRoots() RootsOption { return func(o *rootsOptions) { o.fresh = true } }

// ListRoots returns the client's roots. The answer is cached until the
// client sends notifications/roots/list_changed; FreshRoots bypasses the
// cache. A client without the roots capability gets nothing sent and the
// error names the capability.
func (s *Session) ListRoots(ctx context.Context, opts ...RootsOption) ([]*messages.Root, error) {
	var o rootsOptions
	for _, opt := range opts {
		opt(&o)
	}
	if !s.ClientCapabilities().SupportsRoots() {
		return nil, s.missing("roots")
	}
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	var epoch uint64
	if s.mod != nil {
		o.fresh = true // no session to cache them in
	}
	if !o.fresh {
		get := &getRoots{reply: make(chan rootsSnapshot, 1)}
		s.ref.post(get)
		select {
		case snap := <-get.reply:
			if snap.ok {
				return snap.roots, nil
			}
			epoch = snap.epoch
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-s.ref.Done():
			return nil, ErrSessionClosed
		}
	}
	var res messages.ListRootsResult
	if err := s.callInto(ctx, messages.MethodListRoots, &messages.ListRootsParams{}, &res); err != nil {
		return nil, err
	}
	if !o.fresh {
		s.ref.post(&storeRoots{epoch: epoch, roots: res.Roots})
	}
	return res.Roots, nil
}

// OnRootsChanged registers fn to run after each notifications/roots/
// list_changed, after the listeners registered before it. The returned
// function unregisters it.
//
// A modern request (2026-07-28) has no session, and its client sends no
// such notification: fn is never called.
func (s *Session) OnRootsChanged(fn RootsListener) (unregister func()) {
	if s.mod != nil {
		return func() {}
	}
	id := listenerIDs.Add(1)
	s.ref.post(&addRootsListener{id: id, fn: fn})
	return func() { s.ref.post(&removeRootsListener{id: id}) }
}
