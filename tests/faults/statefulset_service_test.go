package faults_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"
)

// endpointDelay is how long a terminating pod stays in a Service's
// endpoints after its SIGTERM: the endpoints controller drops it at once,
// kube-proxy on every machine a moment later.
const endpointDelay = time.Second

// service is a Kubernetes Service over the pods, as its clients see it:
// the pods whose readiness probe passed (once) and has not failed
// failureThreshold times in a row since, and that are not terminating.
// Clients pick among them round-robin. It records every moment it was
// found with no endpoint at all.
type service struct {
	t        *testing.T
	nodes    []*node
	path     string
	period   time.Duration
	failures int

	mu          sync.Mutex
	ready       []bool
	fails       []int
	terminating []bool
	next        int
	empty       []time.Time // when a look found no endpoint
	changed     chan struct{}

	stop chan struct{}
	done chan struct{}
}

// newService starts probing nodes as the manifest's readiness probe does;
// it stops at the end of t.
func newService(t *testing.T, m manifest, nodes []*node) *service {
	s := &service{t: t, nodes: nodes, path: m.readyPath, period: m.readyPeriod, failures: m.readyFailures,
		ready: make([]bool, len(nodes)), fails: make([]int, len(nodes)), terminating: make([]bool, len(nodes)),
		changed: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go s.probe() // owned by s: close stops it, at the end of t at the latest
	t.Cleanup(s.close)
	return s
}

func (s *service) close() {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.done
}

// probe probes every pod that is not terminating each period.
func (s *service) probe() {
	defer close(s.done)
	tick := time.NewTicker(s.period)
	defer tick.Stop()
	for {
		for i, n := range s.nodes {
			code := 0
			if !s.isTerminating(i) {
				ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
				code, _, _ = n.get(ctx, s.path)
				cancel()
			}
			s.observe(i, code == http.StatusOK)
		}
		select {
		case <-s.stop:
			return
		case <-tick.C:
		}
	}
}

// observe records one probe of pod i.
func (s *service) observe(i int, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.terminating[i] {
		return
	}
	was := s.ready[i]
	if ok {
		s.ready[i], s.fails[i] = true, 0
	} else if s.fails[i]++; s.fails[i] >= s.failures {
		s.ready[i] = false
	}
	if s.ready[i] != was {
		s.noteChange()
	}
}

// noteChange wakes a waiter and records an empty Service. s.mu is held.
func (s *service) noteChange() {
	if len(s.endpointsLocked()) == 0 {
		s.empty = append(s.empty, time.Now())
	}
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

func (s *service) isTerminating(i int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.terminating[i]
}

// terminate drops pod i from the endpoints (it was sent SIGTERM
// endpointDelay ago).
func (s *service) terminate(i int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.terminating[i], s.ready[i] = true, false
	s.noteChange()
}

// created notes that pod i was created again: not ready until its probe
// passes.
func (s *service) created(i int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.terminating[i], s.ready[i], s.fails[i] = false, false, 0
}

func (s *service) endpointsLocked() []int {
	var out []int
	for i := range s.nodes {
		if s.ready[i] && !s.terminating[i] {
			out = append(out, i)
		}
	}
	return out
}

// endpoints returns the pods clients are sent to now.
func (s *service) endpoints() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.endpointsLocked()
}

// pick returns the next endpoint, round-robin; false when there is none.
func (s *service) pick() (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	eps := s.endpointsLocked()
	if len(eps) == 0 {
		return 0, false
	}
	s.next++
	return eps[s.next%len(eps)], true
}

// awaitReady waits until pod i is an endpoint, for readyTimeout at most.
func (s *service) awaitReady(i int) bool {
	timer := time.NewTimer(readyTimeout)
	defer timer.Stop()
	for {
		s.mu.Lock()
		ok := s.ready[i] && !s.terminating[i]
		s.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-s.changed:
		case <-timer.C:
			return false
		case <-s.t.Context().Done():
			return false
		}
	}
}

// emptied returns when the Service was found with no endpoint.
func (s *service) emptied() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.empty...)
}
