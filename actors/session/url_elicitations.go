package session

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"sync"
	"time"
)

// URLElicitations is a node's record of the URL elicitations whose out-of-band
// step is done, each kept for a while (a retry may come later), and of the
// handlers waiting for them. A cluster tells every node of each
// completion, and, with a store (SetStore), also records it there: a node
// that did not hear of it (restarted, or joined since) reads it back when
// a handler waits for that step. It is safe for concurrent use.
type URLElicitations struct {
	mu      sync.Mutex
	done    map[string]completion // id → when, by whom
	waiting map[*urlWait]struct{}
	// modernWait bounds how long a modern retry waits for its step
	// (URLWait).
	modernWait time.Duration
	keep       time.Duration
	store      Store
	log        *slog.Logger
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

// NewURLElicitations returns a registry whose completions are kept for keep;
// a modern retry waits up to wait for its step.
func NewURLElicitations(keep, wait time.Duration) *URLElicitations {
	return &URLElicitations{done: make(map[string]completion), waiting: make(map[*urlWait]struct{}), keep: keep, modernWait: wait}
}

// SetStore makes c record each completion in store (Record) and read
// there the ones this node did not hear of; entries must live as long as
// c keeps its own. Problems reading or writing it go to log. Call it
// before c is used.
func (c *URLElicitations) SetStore(store Store, log *slog.Logger) {
	c.store, c.log = store, log
}

// completionKey is the store's key of URL elicitation id's completion:
// the ID comes from a page's callback, so only its digest names a key.
func completionKey(id string) string {
	sum := sha256.Sum256([]byte(id))
	return "url-done." + hex.EncodeToString(sum[:16])
}

// Record writes that URL elicitation id of principal is done to the
// store, if c has one, so that a node that does not hear of it (Complete)
// finds it there.
func (c *URLElicitations) Record(ctx context.Context, id, principal string) error {
	if c.store == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	return c.store.Put(ctx, completionKey(id), []byte(principal))
}

// Complete records that URL elicitation id of principal is done and wakes
// what waits for it. It reports whether a handler of this node was
// waiting.
func (c *URLElicitations) Complete(id, principal string) bool {
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
// at once if the step is done already, as this node heard or, with
// lookup, as the store recorded it (a modern handler run again, perhaps
// on a node that was down when the step was done).
func (c *URLElicitations) watch(ctx context.Context, id, principal string, lookup bool) *urlWait {
	w := &urlWait{id: id, principal: principal, done: make(chan struct{})}
	c.mu.Lock()
	if d, ok := c.done[id]; ok && d.principal == principal {
		c.mu.Unlock()
		w.once.Do(func() { close(w.done) })
		return w
	}
	c.waiting[w] = struct{}{}
	c.mu.Unlock()
	// Registered first: a completion heard while the store is read wakes w.
	if lookup && c.stored(ctx, id, principal) {
		w.once.Do(func() { close(w.done) })
	}
	return w
}

// stored reports whether the store records id as done by principal. A
// store that cannot be read counts as no record: the handler waits for a
// completion it hears, or asks again.
func (c *URLElicitations) stored(ctx context.Context, id, principal string) bool {
	if c.store == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	v, err := c.store.Get(ctx, completionKey(id))
	switch {
	case err == nil:
		return string(v) == principal
	case !errors.Is(err, ErrNotStored) && c.log != nil:
		c.log.Warn("a URL elicitation's completion could not be read from the cluster's storage", "err", err)
	}
	return false
}

func (c *URLElicitations) unwatch(w *urlWait) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.waiting, w)
}
