package session

import (
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
