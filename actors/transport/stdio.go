package transport

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/mcp-actors/mcp-actors/actors/router"
	"github.com/mcp-actors/mcp-actors/messages"
)

// ErrOutputOverflow is returned by ServeStdio when more than
// StdioOptions.MaxQueuedBytes of output waited for a client that was not
// reading its stdin.
var ErrOutputOverflow = errors.New("transport: output queue overflowed: the client is not reading")

// StdioOptions configure ServeStdio. Zero fields take the defaults.
type StdioOptions struct {
	// MaxLineBytes bounds one incoming message (default 4 MiB). A longer
	// line is skipped and answered with a -32600 error.
	MaxLineBytes int
	// MaxQueuedBytes bounds the output not yet written (default 64 MiB). A
	// client that stops reading its stdin past it ends the session.
	MaxQueuedBytes int
	// DrainTimeout is how long, after EOF on the input, requests already
	// running may take to finish and send their responses (default 5 s).
	// Server-to-client calls fail at EOF: nobody is left to answer them.
	DrainTimeout time.Duration
	// Logger receives transport diagnostics; nil discards them.
	Logger *slog.Logger
	// Modern, when set, serves the requests of protocol 2026-07-28 (their
	// _meta names a version; server/discover), beside the legacy session
	// on the same connection; nil: they go to the session.
	Modern ModernServer
}

// flushTimeout bounds how long ServeStdio waits, once the session has
// ended, for queued output to reach a client that may have stopped reading.
const flushTimeout = 5 * time.Second

// ServeStdio opens a session through rt and serves it over
// newline-delimited JSON: one message per line from r, one per line to w. Nothing but MCP messages is
// written to w. It returns when r reaches EOF (nil), ctx ends (ctx.Err()),
// reading fails, the session ends (nil), or the output queue overflows
// (ErrOutputOverflow). In every case the session is closed, r is closed if
// it is an io.Closer and was not read to its end, and everything queued for
// w has been written before it returns — except on overflow, when w is
// closed if it is an io.Closer and the queue is dropped.
func ServeStdio(ctx context.Context, r io.Reader, w io.Writer, rt router.Router, opts *StdioOptions) error {
	var o StdioOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = 4 << 20
	}
	if o.MaxQueuedBytes <= 0 {
		o.MaxQueuedBytes = 64 << 20
	}
	if o.DrainTimeout <= 0 {
		o.DrainTimeout = 5 * time.Second
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}

	id, err := rt.Open(ctx, router.OpenOptions{})
	if err != nil {
		return fmt.Errorf("stdio: opening a session: %w", err)
	}
	ref := stdioSession{rt: rt, id: id}
	out := newLineSink(w, o.MaxQueuedBytes)
	sid := rt.Streams().Register(id, out)
	defer rt.Streams().Unregister(sid)
	var writerDone sync.WaitGroup
	writerDone.Add(1)
	go func() {
		defer writerDone.Done()
		if err := out.run(); err != nil {
			log.Warn("stdio: writing failed; closing the session", "err", err)
			ref.Send(&messages.CloseSession{Reason: "stdout failed"})
		}
	}()
	ref.Send(&messages.AttachStream{Stream: sid})

	var mod *stdioModern
	if o.Modern != nil {
		mod = &stdioModern{srv: o.Modern, streams: rt.Streams(), out: out, running: make(map[string]*lineStream)}
		defer mod.cancelAll()
	}
	readErr := make(chan error, 1)
	go func() { readErr <- readLines(r, o.MaxLineBytes, ref, out, mod) }()

	readDone := false
	select {
	case err = <-readErr:
		readDone = true
		if errors.Is(err, io.EOF) {
			err = nil
			// Let the requests already running answer before the end.
			ref.Send(&messages.CloseSession{Reason: "end of input", Grace: o.DrainTimeout})
		}
	case <-ctx.Done():
		err = ctx.Err()
	case <-out.ended:
	case <-out.overflow:
	}
	if err != nil || !readDone {
		ref.Send(&messages.CloseSession{Reason: "stdio ended"})
	}
	select {
	case <-out.ended:
	case <-out.overflow: // the session stopped writing to out: it is closing
	case <-ctx.Done():
		ref.Send(&messages.CloseSession{Reason: "stdio ended"})
		select {
		case <-out.ended:
		case <-out.overflow:
		}
	}
	out.Close() // the session closed it too; this makes sure
	if !waitWriter(&writerDone, out.overflow) {
		// The writer is stuck in a write the client will never read: close
		// w to unblock it rather than wait for it.
		if c, ok := w.(io.Closer); ok {
			_ = c.Close()
		}
		writerDone.Wait()
	}
	select {
	case <-out.overflow:
		if err == nil {
			err = ErrOutputOverflow
		}
	default:
	}
	if c, ok := r.(io.Closer); ok && !readDone {
		_ = c.Close() // unblocks the reader, which would go on consuming r
	}
	return err
}

// waitWriter waits for the writer to drain, and reports false if the
// output overflowed or the client did not take it within flushTimeout.
func waitWriter(done *sync.WaitGroup, overflow <-chan struct{}) bool {
	finished := make(chan struct{})
	go func() { done.Wait(); close(finished) }()
	timer := time.NewTimer(flushTimeout)
	defer timer.Stop()
	select {
	case <-finished:
		return true
	case <-overflow:
	case <-timer.C:
	}
	return false
}

// readLines reads messages until EOF or a read error and hands them to the
// session. Malformed lines are answered on out and reading goes on.
func readLines(r io.Reader, maxLine int, ref stdioSession, out *lineSink, mod *stdioModern) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, tooLong, err := readLine(br, maxLine)
		if tooLong {
			out.Deliver(messages.Frame{Data: messages.EncodeError(messages.ID{},
				messages.Errorf(messages.CodeInvalidRequest, "invalid request: message exceeds %d bytes", maxLine))})
		} else if len(bytes.TrimSpace(line)) > 0 {
			deliverLine(line, ref, out, mod)
		}
		if err != nil {
			return err
		}
		if out.hasEnded() {
			return nil
		}
	}
}

// readLine returns the next line without its line ending ("\n" or "\r\n").
// A line longer than max without it is consumed and reported with tooLong,
// without being kept in memory.
func readLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max+2 { // +2: room for "\r\n"
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) > max {
			tooLong, line = true, nil
		}
		return line, tooLong, err
	}
}

// deliverLine decodes one line and sends it to the session.
func deliverLine(line []byte, ref stdioSession, out *lineSink, mod *stdioModern) {
	if messages.IsBatch(line) {
		out.Deliver(messages.Frame{Data: messages.EncodeError(messages.ID{},
			messages.Errorf(messages.CodeInvalidRequest, "invalid request: JSON-RPC batches are not supported"))})
		return
	}
	m, derr := messages.Decode(line)
	if derr != nil {
		id := messages.ID{}
		if m != nil {
			id = m.ID
		}
		out.Deliver(messages.Frame{Data: messages.EncodeError(id, derr)})
		return
	}
	if mod != nil && mod.serves(m) {
		return
	}
	switch m.Kind() {
	case messages.KindRequest:
		ref.Send(&messages.HandleRequest{Msg: m}) // answered on the standalone stream
	case messages.KindNotification:
		ref.Send(&messages.HandleNotification{Msg: m})
	case messages.KindResponse, messages.KindError:
		ref.Send(&messages.DeliverResponse{Msg: m})
	default: // Decode returns only the kinds above
		panic(fmt.Sprintf("transport: decoded a message of kind %v", m.Kind()))
	}
}

// stdioSession is the one session a stdio transport serves.
type stdioSession struct {
	rt router.Router
	id string
}

// Send delivers m to the session; a session that has ended takes nothing.
func (s stdioSession) Send(m messages.ActorMessage) {
	_ = s.rt.Deliver(context.Background(), s.id, m)
}

// lineSink is the stream of a stdio session: it queues frames for w and
// writes them, one per line, on the goroutine that runs it. Receive and
// Deliver never block.
type lineSink struct {
	w        io.Writer
	maxBytes int

	overflow chan struct{} // closed by Deliver when the queue overflows
	ended    chan struct{} // closed when the session ends the stream
	endOnce  sync.Once

	mu     sync.Mutex
	wake   chan struct{} // signalled when the queue grows or the sink closes
	queue  [][]byte
	bytes  int
	closed bool
	failed bool // the queue overflowed
}

func newLineSink(w io.Writer, maxBytes int) *lineSink {
	return &lineSink{w: w, maxBytes: maxBytes, wake: make(chan struct{}, 1), overflow: make(chan struct{}), ended: make(chan struct{})}
}

// Receive implements router.Receiver: frames are written, and a signal
// that ends the stream means the session has ended.
func (s *lineSink) Receive(ev messages.StreamEvent) bool {
	switch {
	case ev.Signal == messages.SignalFrame:
		if ev.Frame.Data == nil {
			return true // a priming event: nothing to write on stdio
		}
		return s.Deliver(ev.Frame)
	case ev.Signal.Ends():
		s.endOnce.Do(func() { close(s.ended) })
		s.Close()
	}
	return true
}

// Gone implements router.Receiver: the client of stdio is there until its
// output fails.
func (s *lineSink) Gone() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed
}

// hasEnded reports whether the session has ended the stream.
func (s *lineSink) hasEnded() bool {
	select {
	case <-s.ended:
		return true
	default:
		return false
	}
}

// Deliver queues f for writing.
func (s *lineSink) Deliver(f messages.Frame) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	ok := s.bytes+len(f.Data) <= s.maxBytes
	if ok {
		s.queue = append(s.queue, f.Data)
		s.bytes += len(f.Data)
	} else {
		s.failed, s.closed = true, true
		close(s.overflow) // once: the sink is closed now
	}
	s.signal()
	return ok
}

// Close stops accepting frames; those queued are still written.
func (s *lineSink) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.signal()
}

func (s *lineSink) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// run writes queued frames until the sink is closed and drained.
func (s *lineSink) run() error {
	bw := bufio.NewWriter(s.w)
	for {
		s.mu.Lock()
		batch, closed, failed := s.queue, s.closed, s.failed
		s.queue, s.bytes = nil, 0
		s.mu.Unlock()
		for _, data := range batch {
			bw.Write(data)
			bw.WriteByte('\n')
		}
		if err := bw.Flush(); err != nil {
			s.Close()
			return err
		}
		if failed {
			return fmt.Errorf("stdio: more than %d bytes queued for a client that is not reading", s.maxBytes)
		}
		if closed && len(batch) == 0 {
			return nil
		}
		if len(batch) == 0 {
			<-s.wake
		}
	}
}
