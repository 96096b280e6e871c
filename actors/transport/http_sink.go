package transport

import (
	"context"
	"sync"

	"github.com/mcp-actors/mcp-actors/messages"
)

// httpSink carries one stream's frames from the session actor to the
// goroutine serving the HTTP response. Deliver and Close are called by the
// actor and never block; the response goroutine takes frames in batches. A
// sink holds at most max frames: past that the client is not keeping up,
// the sink refuses the frame and closes, and the session keeps the frames
// in its event log for the client to resume.
type httpSink struct {
	max  int
	wake chan struct{} // capacity 1: "there is something to look at"
	// waiter, when set, suspends the goroutine waiting on the sink (a
	// LoopServer task), which signal resumes.
	waiter messages.Suspender

	mu     sync.Mutex
	queue  []messages.Frame
	spare  []messages.Frame // the previous batch's slice, reused
	closed bool

	// A request's handler handed over with Run (messages.Runner), and how
	// it runs: inline while the waiting goroutine runs it; aside starts a
	// second goroutine to stream frames delivered meanwhile, at most once.
	job      func() []byte
	noRun    bool // refuse jobs (a batch: its requests run side by side)
	inline   bool
	aside    func()
	starter  directStarter // instead of aside: frames are written as delivered
	direct   *directStream // started by starter at the first frame
	streamed bool
	// cheap: the transport streams a job's frames without a goroutine
	// (messages.InlineStreamer).
	cheap bool
}

// StreamsInline implements messages.InlineStreamer.
func (s *httpSink) StreamsInline() bool { return s.cheap }

// Run takes the request's handler for the goroutine waiting on the sink.
func (s *httpSink) Run(job func() []byte) bool {
	if s.noRun {
		return false
	}
	s.mu.Lock()
	s.job = job
	s.mu.Unlock()
	s.signal()
	return true
}

// takeJob returns the handler Run left, once.
func (s *httpSink) takeJob() func() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	job := s.job
	s.job = nil
	return job
}

// first waits for the request's first news: its handler to run (Run),
// frames, or the sink's closing. The session may hand the job over after
// the request was sent, when its mailbox was busy with another goroutine.
func (s *httpSink) first(ctx context.Context) (job func() []byte, frames []messages.Frame, closed, ok bool) {
	return s.next(ctx, true)
}

// directStarter starts a directStream for the exchange a sink serves.
type directStarter interface {
	newDirect() *directStream // nil if it cannot
}

// beginInline says the waiting goroutine now runs the job; a frame
// delivered until endInline calls aside (once), or, with starter, starts
// a directStream that writes it and the stream's later frames.
func (s *httpSink) beginInline(aside func(), starter directStarter) {
	s.mu.Lock()
	s.inline, s.aside, s.starter = true, aside, starter
	s.mu.Unlock()
	s.Stalled() // from now on, stalls are the job's
}

// staller is a waiter that tells whether it held its thread too long.
type staller interface{ takeStall() bool }

// Stalled implements messages.StallReporter.
func (s *httpSink) Stalled() bool {
	st, ok := s.waiter.(staller)
	return ok && st.takeStall()
}

// Suspender implements messages.Suspending: the job runs inline on the
// goroutine that waits on the sink, so the waiter suspends it too.
func (s *httpSink) Suspender() messages.Suspender {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.inline {
		return nil
	}
	return s.waiter
}

// directStream returns the stream the first frame started, if any.
func (s *httpSink) directStream() *directStream {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.direct
}

// endInline says the job returned, and reports whether frames were
// delivered meanwhile. A direct stream that has begun goes on receiving
// the stream's frames until it ends.
func (s *httpSink) endInline() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.streamed {
		s.inline, s.aside, s.starter = false, nil, nil
	}
	return s.streamed
}

func newHTTPSink(max int) *httpSink {
	return &httpSink{max: max, wake: make(chan struct{}, 1)}
}

// Deliver queues f, or refuses it when the sink is closed or full.
func (s *httpSink) Deliver(f messages.Frame) bool {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return false
	}
	if s.inline && s.starter != nil {
		s.streamed = true
		if s.direct == nil {
			if s.direct = s.starter.newDirect(); s.direct == nil {
				s.closed = true // cannot happen: the exchange said it could
				s.mu.Unlock()
				return false
			}
		}
		ok := s.direct.deliver(f)
		s.closed = s.closed || !ok
		s.mu.Unlock()
		return ok
	}
	ok := len(s.queue) < s.max
	if ok {
		s.queue = append(s.queue, f)
	} else {
		s.closed = true
	}
	if s.inline && !s.streamed {
		// Under the lock: endInline must see what aside set up. aside only
		// starts a goroutine.
		s.streamed = true
		s.aside()
	}
	s.mu.Unlock()
	s.signal()
	return ok
}

// Close ends the stream; queued frames are still written.
func (s *httpSink) Close() {
	s.mu.Lock()
	s.closed = true
	if s.inline && s.direct != nil {
		s.direct.close()
	}
	s.mu.Unlock()
	s.signal()
}

func (s *httpSink) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
	if s.waiter != nil {
		s.waiter.Resume()
	}
}

// take returns the frames queued so far and whether the sink is closed.
// The returned slice is valid until the next take.
func (s *httpSink) take() ([]messages.Frame, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	batch := s.queue
	s.queue = s.spare[:0]
	clear(batch[len(batch):cap(batch)])
	s.spare = batch
	return batch, s.closed
}

// wait returns the next batch, waiting until there is one, the sink closes,
// or ctx ends (then ok is false).
func (s *httpSink) wait(ctx context.Context) (frames []messages.Frame, closed, ok bool) {
	_, frames, closed, ok = s.next(ctx, false)
	return frames, closed, ok
}

// next waits for a job (withJob), a batch or the sink's closing, or until
// ctx ends (then ok is false).
func (s *httpSink) next(ctx context.Context, withJob bool) (job func() []byte, frames []messages.Frame, closed, ok bool) {
	suspend := s.waiter != nil
	var stop func() bool
	defer func() {
		if stop != nil {
			stop()
		}
	}()
	for {
		if withJob {
			if job = s.takeJob(); job != nil {
				return job, nil, false, true
			}
		}
		if frames, closed = s.take(); len(frames) > 0 || closed {
			return nil, frames, closed, true
		}
		if suspend {
			select {
			case <-s.wake:
				continue
			case <-ctx.Done():
				return nil, nil, false, false
			default:
			}
			if stop == nil {
				stop = context.AfterFunc(ctx, s.waiter.Resume)
			}
			suspend = s.waiter.Suspend()
			continue
		}
		select {
		case <-s.wake:
		case <-ctx.Done():
			return nil, nil, false, false
		}
	}
}
