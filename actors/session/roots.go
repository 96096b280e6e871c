package session

import (
	"context"
	"log/slog"
	"runtime/debug"

	"github.com/mcp-actors/mcp-actors/messages"
)

// RootsListener is called after the client reports that its roots changed.
// Listeners run one after another, in registration order, off the mailbox;
// ctx ends with the session.
type RootsListener func(ctx context.Context, s *Session)

// rootsState is the session's roots cache and listeners.
type rootsState struct {
	cache     []*messages.Root
	valid     bool
	epoch     uint64 // bumped by every roots/list_changed
	listeners []rootsListenerEntry
	running   bool // a listener run is in progress
	again     bool // another change arrived during the run
}

type rootsListenerEntry struct {
	id uint64
	fn RootsListener
}

// rootsSnapshot answers getRoots.
type rootsSnapshot struct {
	roots []*messages.Root
	ok    bool
	epoch uint64
}

func (a *sessionActor) receiveRoots(m internalMessage) {
	r := &a.roots
	switch m := m.(type) {
	case *getRoots:
		m.reply <- rootsSnapshot{roots: r.cache, ok: r.valid, epoch: r.epoch}
	case *storeRoots:
		if m.epoch == r.epoch {
			r.cache, r.valid = m.roots, true
		}
	case *addRootsListener:
		r.listeners = append(r.listeners, rootsListenerEntry{id: m.id, fn: m.fn})
	case *removeRootsListener:
		for i, l := range r.listeners {
			if l.id == m.id {
				r.listeners = append(r.listeners[:i:i], r.listeners[i+1:]...)
				break
			}
		}
	case *rootsListenersDone:
		r.running = false
		if r.again {
			r.again = false
			a.runRootsListeners()
		}
	}
}

// rootsChanged drops the cache and runs the listeners.
func (a *sessionActor) rootsChanged() {
	r := &a.roots
	r.epoch++
	r.cache, r.valid = nil, false
	if r.running {
		r.again = true
		return
	}
	a.runRootsListeners()
}

func (a *sessionActor) runRootsListeners() {
	if len(a.roots.listeners) == 0 || a.state == stateClosed {
		return
	}
	a.roots.running = true
	listeners := append([]rootsListenerEntry(nil), a.roots.listeners...)
	if a.ctx == nil {
		a.ctx, a.cancel = context.WithCancel(context.Background())
	}
	go runListeners(a.ctx, &Session{ref: a.ref, info: a.info}, listeners, a.log)
}

func runListeners(ctx context.Context, s *Session, listeners []rootsListenerEntry, log *slog.Logger) {
	defer s.ref.post(&rootsListenersDone{})
	for _, l := range listeners {
		if ctx.Err() != nil {
			return
		}
		func() {
			defer func() {
				if p := recover(); p != nil {
					log.Error("roots listener panicked", "panic", p, "stack", string(debug.Stack()))
				}
			}()
			l.fn(ctx, s)
		}()
	}
}
