package transport

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
