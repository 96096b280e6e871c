package session

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/mcp-actors/mcp-actors/messages"
)

// errAnswered refuses a retry of a round that was answered already.
var errAnswered = messages.Errorf(messages.CodeInvalidParams,
	"invalid params: this round of the request was answered already (send the latest requestState)")

// answeredSet is a set of continuation IDs, each until its expiry; it
// forgets the expired ones as it grows.
type answeredSet struct {
	mu   sync.Mutex
	ids  map[string]time.Time
	next time.Time // no sweep before then
}

func (s *answeredSet) add(id string, until, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ids == nil {
		s.ids = make(map[string]time.Time)
	}
	if now.After(s.next) {
		for k, t := range s.ids {
			if now.After(t) {
				delete(s.ids, k)
			}
		}
		s.next = now.Add(time.Minute)
	}
	s.ids[id] = until
}

func (s *answeredSet) has(id string, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.ids[id]
	return ok && !now.After(t)
}

// A continuation that answered is recorded in the node's memory
// (Modern.answered) and, with ModernOptions.RecordAnswers and a store
// (Spill: a cluster's JetStream bucket), cluster-wide before the answer
// leaves: a retry of its last round is refused on any node, also once the
// continuation's node is lost or restarted, rather than running the
// handler again.

// answeredKey is the store's key of an answered continuation.
func answeredKey(cont string) string { return "answered." + cont }

// storeTimeout bounds one write of the store (a spilled journal, an
// answered record).
const storeTimeout = 2 * time.Second

// recordAnswered records cont as answered in the store, if any, then
// sends frame, the answer, to stream; off the mailbox, on a goroutine
// Close waits for. A store that cannot be written delays nothing more:
// the answer leaves, and only this node refuses a replay.
func (m *Modern) recordAnswered(cont string, stream messages.StreamID, frame []byte) {
	if m.opts.Spill == nil || !m.opts.RecordAnswers || !m.runs.enter() { // closing: only this node refuses a replay
		m.deliver(stream, frame, true)
		return
	}
	m.goOff(func() {
		defer m.runs.leave()
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		defer cancel()
		if err := m.opts.Spill.Put(ctx, answeredKey(cont), []byte(m.opts.Node)); err != nil {
			m.log.Warn("an answered continuation could not be recorded for the cluster: only its node refuses a replay of its last round", "err", err)
		}
		m.deliver(stream, frame, true)
	})
}

// Store keeps values by key cluster-wide, each for a lifetime the store
// sets (a cluster's JetStream bucket: cluster.Journals): spilled
// journals, answered rounds, URL elicitations' completions. Get answers
// ErrNotStored for a key it does not hold.
type Store interface {
	Put(ctx context.Context, key string, value []byte) error
	Get(ctx context.Context, key string) ([]byte, error)
}

// ErrNotStored is what a Store answers for a key it does not hold.
var ErrNotStored = errors.New("session: not in the store")

// storeReadWait bounds how long wasAnswered waits for a store that does
// not answer: a cluster that lost the continuation's node may be electing
// the bucket's leader (a few seconds).
const storeReadWait = 10 * time.Second

// wasAnswered reports whether the continuation cont answered: as this
// node remembers, or as the store recorded it. A store that cannot be
// read is asked again until storeReadWait or ctx ends, then counts as no
// record (the handler runs again rather than the retry failing).
func (m *Modern) wasAnswered(ctx context.Context, cont string) bool {
	if cont == "" {
		return false
	}
	if m.answered.has(cont, time.Now()) {
		return true
	}
	if m.opts.Spill == nil || !m.opts.RecordAnswers {
		return false
	}
	deadline := time.Now().Add(storeReadWait)
	for {
		_, err := m.opts.Spill.Get(ctx, answeredKey(cont))
		switch {
		case err == nil:
			return true
		case errors.Is(err, ErrNotStored):
			return false
		case ctx.Err() != nil || time.Now().After(deadline):
			m.log.Warn("whether a continuation answered could not be read: its handler runs again", "err", err)
			return false
		}
		t := time.NewTimer(100 * time.Millisecond)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
}
