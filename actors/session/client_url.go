package session

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/mcp-actors/mcp-actors/messages"
)

// URL-mode elicitation: the user is sent to a page of the server's own
// (an OAuth flow, a payment, a secret typed out of the client's sight);
// the page's handler tells the server when the step is done
// (Completions.Complete, from any node's HTTP callback in a cluster), and
// the handler that asked goes on.
//
//	legacy:  elicitation/create{mode:url, url, elicitationId} ─accept─▶ wait ─complete─▶ notifications/elicitation/complete, go on
//	modern:  input request{mode:url, url} ─retry(accept)─▶ wait (bounded) ─complete─▶ go on
//	                                                           └─not yet─▶ ask again (next round)

// ElicitURL asks the user, through the client, to open the page url(id)
// for an out-of-band step, and returns once the step is done: when the
// server's code calls Completions.Complete with id and the principal of
// this request (the page's callback knows id from the URL it was given).
// It returns early with the user's decline or cancel, or ctx's end. The
// client must have declared elicitation.url. In the modern era a retry
// that comes before the step is done waits for it up to URLWait, then the
// client is asked again (same URL, same id).
func (s *Session) ElicitURL(ctx context.Context, message string, url func(id string) string) (messages.ElicitAction, error) {
	if !s.ClientCapabilities().SupportsURLElicitation() {
		return messages.ElicitCancel, s.missing("elicitation.url")
	}
	comp := s.completions()
	if comp == nil {
		return messages.ElicitCancel, fmt.Errorf("session: URL elicitation needs Config.Completions")
	}
	id := s.elicitationID()
	p := &messages.ElicitParams{Mode: messages.ElicitModeURL, Message: message, URL: url(id)}
	if s.mod == nil {
		p.ElicitationID = id // 2026-07-28 has no elicitationId: requestState correlates
	}
	principal := s.principal()
	w := comp.watch(id, principal)
	defer comp.unwatch(w)
	for {
		var res messages.ElicitResult
		if err := s.callInto(ctx, messages.MethodElicit, p, &res); err != nil {
			return messages.ElicitCancel, err
		}
		if res.Action != messages.ElicitAccept {
			return res.Action, nil
		}
		done, err := s.waitStep(ctx, w, comp.modernWait)
		if err != nil {
			return messages.ElicitCancel, err
		}
		if done {
			if s.mod == nil {
				s.notifyComplete(id)
			}
			return messages.ElicitAccept, nil
		}
		// Modern, not done yet: ask again in the next round.
	}
}

// waitStep waits for the out-of-band step w: until ctx ends in a session,
// at most bound in a modern request (whose client then is asked again).
func (s *Session) waitStep(ctx context.Context, w *urlWait, bound time.Duration) (done bool, err error) {
	var timeout <-chan time.Time
	if s.mod != nil {
		t := time.NewTimer(bound)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-w.done:
		return true, nil
	case <-timeout:
		return false, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// completions returns the server's URL elicitation registry.
func (s *Session) completions() *Completions {
	if s.mod != nil {
		return s.mod.m.cfg.Completions
	}
	return s.ref.completions
}

// principal returns who the request is from.
func (s *Session) principal() string {
	if s.mod != nil {
		return s.mod.req.Principal
	}
	return s.ref.principal
}

// elicitationID returns the ID of a new URL elicitation: random in a
// session; in a modern request the same for the same call on every run of
// its handler (from the request's seed, carried in requestState), so that
// a run again asks for the same URL.
func (s *Session) elicitationID() string {
	if s.mod == nil {
		var b [16]byte
		_, _ = rand.Read(b[:])
		return base64.RawURLEncoding.EncodeToString(b[:])
	}
	n := s.mod.urlCalls.Add(1)
	sum := sha256.Sum256([]byte(s.mod.seedOf() + "/" + strconv.FormatInt(n, 10)))
	return base64.RawURLEncoding.EncodeToString(sum[:16])
}

// notifyComplete tells a legacy session's client that elicitation id is
// done (notifications/elicitation/complete, 2025-11-25 on).
func (s *Session) notifyComplete(id string) {
	if s.ProtocolVersion() < messages.Version20251125 {
		return
	}
	frame, err := messages.EncodeNotification(messages.MethodElicitationComplete, &messages.ElicitationCompleteParams{ElicitationID: id})
	if err == nil {
		s.ref.post(&sendFrame{data: frame})
	}
}

// Completions is a node's record of the URL elicitations whose out-of-band
// step is done, each kept for a while (a retry may come later), and of the
// handlers waiting for them. A cluster tells every node of each
// completion. It is safe for concurrent use.
type Completions struct {
	mu      sync.Mutex
	done    map[string]completion // id → when, by whom
	waiting map[*urlWait]struct{}
	// modernWait bounds how long a modern retry waits for its step
	// (URLWait).
	modernWait time.Duration
	keep       time.Duration
}

type completion struct {
	principal string
	at        time.Time
}

type urlWait struct {
	id, principal string
	done          chan struct{}
	once          sync.Once
}

// NewCompletions returns a registry whose completions are kept for keep;
// a modern retry waits up to wait for its step.
func NewCompletions(keep, wait time.Duration) *Completions {
	return &Completions{done: make(map[string]completion), waiting: make(map[*urlWait]struct{}), keep: keep, modernWait: wait}
}

// Complete records that URL elicitation id of principal is done and wakes
// what waits for it. It reports whether a handler of this node was
// waiting.
func (c *Completions) Complete(id, principal string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	for k, d := range c.done {
		if now.Sub(d.at) > c.keep {
			delete(c.done, k)
		}
	}
	c.done[id] = completion{principal: principal, at: now}
	woke := false
	for w := range c.waiting {
		if w.id == id && w.principal == principal {
			w.once.Do(func() { close(w.done) })
			woke = true
		}
	}
	return woke
}

// watch registers a wait for id of principal; its done channel is closed
// at once if the step is done already.
func (c *Completions) watch(id, principal string) *urlWait {
	w := &urlWait{id: id, principal: principal, done: make(chan struct{})}
	c.mu.Lock()
	defer c.mu.Unlock()
	if d, ok := c.done[id]; ok && d.principal == principal {
		w.once.Do(func() { close(w.done) })
		return w
	}
	c.waiting[w] = struct{}{}
	return w
}

func (c *Completions) unwatch(w *urlWait) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.waiting, w)
}
