package transport

import "time"

// SetLearnAfter sets how long a handler must hold the loop to be reported
// as one that stalls, until the returned restore is called.
func SetLearnAfter(d time.Duration) (restore func()) {
	old := learnAfter.Swap(int64(d))
	return func() { learnAfter.Store(old) }
}

// Suspensions reports how often a handler served by s gave its thread back
// while it waited for its client (see task).
func Suspensions(s *LoopServer) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.p == nil {
		return 0
	}
	return s.p.tasks.suspended.Load()
}

// Handoffs reports how often s's loop went to another runner because a
// request held it (see watchdog).
func Handoffs(s *LoopServer) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.p == nil {
		return 0
	}
	return s.p.handoffs.Load()
}
