package cluster

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The event log's writer: every event a session logs is queued here, and
// one goroutine writes the queue to the event log stream, one batch at a
// time. The first event of a batch waits Options.EventDelay for others
// to join it, and while a batch waits for its acknowledgement the next
// events queue up, so many events — of many sessions — become one
// JetStream atomic batch: one replication round (one raft entry) for the
// batch instead of one per event, the stream's per-session subjects kept,
// so a takeover reads one session's events as before (events.go). Each
// round costs every replica about as much as a few hundred microseconds
// of CPU here whatever its size, so the delay bounds the log's cost by
// time rather than by events. A stream that does not take atomic batches
// (a NATS server before 2.12) gets the events one by one.
//
//	LogEvent ──enqueue──▶ pending ──run: wait EventDelay (or a full batch), take ≤ maxBatch──▶ publish, the last with Nats-Batch-Commit ──▶ wait for its ack ──▶ next batch
//
// Appends stay asynchronous and best effort, as the hot path never waits
// for them: a batch the stream refuses is lost and counted
// (mcp_cluster_write_failures_total); a node that is lost loses what it
// had not written yet.
type eventLogWriter struct {
	node   *Node
	wake   chan struct{} // a send wakes run
	full   chan struct{} // a send ends the wait for a batch to gather
	prefix string        // of this node's batch IDs: unique per process

	mu      sync.Mutex
	pending []*nats.Msg
	lost    bool // the node was killed: nothing more is written

	written  atomic.Int64 // batches written: the last batch's ID, and metrics
	durable  atomic.Int64 // events whose batch JetStream acknowledged
	tooLarge atomic.Int64 // events left out for being larger than one durable write
	warned   atomic.Bool  // tooLarge was logged
}

// Bounds of the event log's writer.
const (
	maxBatch   = 256             // events per batch (servers take at most 1,000)
	maxPending = 16384           // events queued; beyond, new ones are dropped and counted
	batchAck   = 2 * time.Second // how long a batch's acknowledgement is waited for before the next
)

func newEventWriter(n *Node) *eventLogWriter {
	return &eventLogWriter{node: n, wake: make(chan struct{}, 1), full: make(chan struct{}, 1), prefix: randomID(8) + "."}
}

// enqueue queues m for the log. An event larger than one durable write
// (sizes.go) is left out, alone: in a batch it would fail every event of
// the batch, other sessions' too.
func (w *eventLogWriter) enqueue(m *nats.Msg) {
	if max := w.node.maxDurable(); len(m.Data) > max {
		w.tooLarge.Add(1)
		if !w.warned.Swap(true) {
			w.node.log.Warn("an event larger than one JetStream message is left out of the event log (warned once; counted in mcp_cluster_events_too_large_total)",
				"bytes", len(m.Data), "max", max)
		}
		return
	}
	w.mu.Lock()
	if w.lost {
		w.mu.Unlock()
		return
	}
	if len(w.pending) >= maxPending {
		w.mu.Unlock()
		w.node.asyncFailures.Add(1)
		w.node.log.Debug("the event log's queue is full: an event is dropped", "subject", m.Subject)
		return
	}
	w.pending = append(w.pending, m)
	queued := len(w.pending)
	w.mu.Unlock()
	switch queued {
	case 1:
		signal(w.wake)
	case maxBatch:
		signal(w.full)
	}
}

// signal sends on ch unless a send is pending already.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// lose drops what is queued and everything enqueued from now on, as a
// node's crash does (Node.Kill).
func (w *eventLogWriter) lose() {
	w.mu.Lock()
	w.pending, w.lost = nil, true
	w.mu.Unlock()
}

// run writes the queue until the node stops, once the stream exists; what
// is queued then is written without waiting (Close waits for the
// acknowledgements of everything written without waiting).
func (w *eventLogWriter) run() {
	defer w.node.stopped.Done()
	select {
	case <-w.node.up:
	case <-w.node.stop:
		return
	}
	for w.next() {
		for w.write(true) {
		}
	}
	for w.write(false) {
	}
}

// next waits for an event to be queued, then lets others join it for
// Options.EventDelay, or until a batch is full. It reports false when the
// node stops meanwhile.
func (w *eventLogWriter) next() bool {
	select {
	case <-w.wake:
	case <-w.node.stop:
		return false
	}
	d := w.node.opts.EventDelay
	if d <= 0 {
		return true
	}
	select {
	case <-w.full: // left from a batch written already
	default:
	}
	w.mu.Lock()
	full := len(w.pending) >= maxBatch
	w.mu.Unlock()
	if full {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-w.full:
	case <-w.node.stop:
		return false
	}
	return true
}

// write publishes up to maxBatch queued events and, with wait, waits for
// the acknowledgement. It reports whether there was anything to write.
func (w *eventLogWriter) write(wait bool) bool {
	w.mu.Lock()
	batch := w.pending[:min(len(w.pending), maxBatch)]
	if len(batch) == 0 {
		w.mu.Unlock()
		return false
	}
	w.pending = w.pending[len(batch):]
	if len(w.pending) == 0 {
		w.pending = nil // let the array go; the next append starts small
	}
	id := w.prefix + strconv.FormatInt(w.written.Add(1), 10)
	w.mu.Unlock()

	n := w.node
	if !n.Standalone() && !n.acting() {
		// The lease may have lapsed: these sessions may be another node's
		// by now, and their events are not this node's to write.
		w.failed(len(batch), errLeaseLapsed)
		return true
	}
	last := batch[len(batch)-1]
	if len(batch) > 1 && n.atomicEvents.Load() {
		for i, m := range batch {
			m.Header = nats.Header{"Nats-Batch-Id": {id}, "Nats-Batch-Sequence": {strconv.Itoa(i + 1)}}
		}
		last.Header.Set("Nats-Batch-Commit", "1")
		for _, m := range batch[:len(batch)-1] {
			if err := n.nc.PublishMsg(m); err != nil {
				w.failed(len(batch), err)
				return true
			}
		}
	} else {
		for _, m := range batch[:len(batch)-1] { // a stream without atomic batches
			if _, err := n.js.PublishMsgAsync(m); err != nil {
				w.failed(1, err)
			}
		}
	}
	ack, err := n.js.PublishMsgAsync(last)
	if err != nil {
		w.failed(len(batch), err)
		return true
	}
	if !wait {
		return true
	}
	t := time.NewTimer(batchAck)
	defer t.Stop()
	select {
	case <-ack.Ok():
		w.durable.Add(int64(len(batch)))
	case <-ack.Err(): // counted and logged by the JetStream context's handler
	case <-t.C:
	case <-n.ctx.Done():
	}
	return true
}

// failed counts events that could not be written.
func (w *eventLogWriter) failed(events int, err error) {
	w.node.asyncFailures.Add(int64(events))
	w.node.log.Debug("appending to the event log failed", "events", events, "err", err)
}

// eventStreamConfig is the configuration of the event log stream.
func (n *Node) eventStreamConfig() jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name: n.subj.bucket("events"), Description: "mcp-actors session event logs (Last-Event-ID resumption on any node)",
		Subjects: []string{n.subj.events(">")}, Storage: n.opts.eventStorage(), Replicas: n.opts.Replicas,
		MaxAge: n.opts.EventMaxAge, MaxMsgsPerSubject: int64(n.opts.EventsPerSession), MaxBytes: n.opts.EventBytes,
		Discard: jetstream.DiscardOld, AllowDirect: true, AllowAtomicPublish: true,
	}
}
