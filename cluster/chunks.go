package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/mcp-actors/mcp-actors/actors/router"
)

// Messages larger than one NATS message. A NATS connection carries
// messages of at most its server's max_payload (nats.Conn.MaxPayload: 1 MiB
// unless the operator of the deployment set another), while a client's
// request may be as large as the HTTP endpoint accepts and a result as
// large as a handler makes. Every message a node routes to another — a
// session message (request-reply, or sent without waiting), a stream
// event — that does not fit is cut into chunks that do, published in
// order on the same subject; the receiving subscription puts them
// together and handles the whole message as if it had come in one.
// Chunking rather than raising max_payload: the limit is the deployment's
// (an external NATS is configured by its operator, and NATS advises
// against large messages: each is held whole in every buffer on its way,
// and delays what follows it on the connection), and a routed message
// stays a plain NATS message whatever its size.
//
//	publish(msg) ──fits?──yes──▶ PublishMsg(msg)                                   (no header: the usual path costs nothing)
//	                 └──no──▶ chunk 1/n … n-1/n ──▶ chunk n/n with msg's headers and reply ──▶ same subject
//	subscription ──▶ assemble: no Mcp-Chunk header ──▶ handler(msg)
//	                           chunk i/n of message id ──▶ partial[id] (in order, bounded, timed) ──i == n──▶ handler(whole)
//
// A message's chunks come from one publisher, on one connection, to one
// subject, so they arrive in order (NATS keeps the order of one
// publisher's messages); chunks of different messages may interleave. A
// message being put together is bounded: at most Options.MaxMessageBytes,
// all of them at most four times that, each complete within
// partialTimeout of its first chunk. A message that breaks a bound, or
// whose chunks come out of order (one was lost: a slow consumer, a route
// that flapped), is dropped whole and counted; what the sender then
// sees is what it sees of any message lost between nodes. A message over
// MaxMessageBytes is refused at the sender (router.ErrMessageTooLarge).

// headerChunk marks a chunk: "<message id> <i>/<n>", i from 1. The last
// chunk also carries the message's own headers and reply subject.
const headerChunk = "Mcp-Chunk"

// partialTimeout bounds how long a message being put together waits for
// its next chunk.
const partialTimeout = 30 * time.Second

// chunkReserve is kept free in every chunk for its Mcp-Chunk header and the
// NATS header line.
const chunkReserve = 256

// chunker cuts the messages a router publishes into chunks the NATS
// connection carries, and puts together those its subscriptions receive.
// Its methods are safe for concurrent use.
type chunker struct {
	nc      *nats.Conn
	limit   func() int // the largest NATS message: the connection's max payload
	log     *slog.Logger
	prefix  string // of this run's message IDs: "<node>.<boot>."
	max     int    // the largest message, whole
	total   int    // the most bytes held in messages being put together
	timeout time.Duration

	seq      atomic.Uint64 // the last message ID's number
	sent     atomic.Int64  // messages published in chunks
	received atomic.Int64  // messages put together
	dropped  atomic.Int64  // messages dropped before they were whole

	mu       sync.Mutex
	partial  map[string]*partial // message ID → message being put together
	buffered int                 // bytes reserved by partial
	lost     map[string]bool     // messages dropped lately: their chunks still to come are ignored
	lostIDs  []string            // lost's keys, oldest first
	closed   bool
}

// lostRetain is how many dropped messages a chunker remembers, so that
// each is counted once however many of its chunks follow.
const lostRetain = 256

// partial is a message being put together.
type partial struct {
	n     int    // chunks it has
	got   int    // chunks taken, in order
	data  []byte // what they carried; its capacity is reserved
	timer *time.Timer
}

// newChunker returns the chunker of a router on nc whose message IDs start
// with prefix, putting together messages of at most max bytes.
func newChunker(nc *nats.Conn, log *slog.Logger, prefix string, max int) *chunker {
	return &chunker{nc: nc, limit: func() int { return int(nc.MaxPayload()) }, log: log, prefix: prefix,
		max: max, total: 4 * max, timeout: partialTimeout, partial: map[string]*partial{}, lost: map[string]bool{}}
}

// headerSize is the size of h on the wire, as NATS counts it against the
// max payload.
func headerSize(h nats.Header) int {
	if len(h) == 0 {
		return 0
	}
	size := len("NATS/1.0\r\n") + len("\r\n")
	for k, vs := range h {
		for _, v := range vs {
			size += len(k) + len(v) + 4
		}
	}
	return size
}

// cut returns the chunks of msg, nil when it fits in one NATS message, or
// router.ErrMessageTooLarge.
func (c *chunker) cut(msg *nats.Msg) ([]*nats.Msg, error) {
	limit := c.limit()
	hdr := headerSize(msg.Header)
	if len(msg.Data)+hdr <= limit {
		return nil, nil
	}
	if len(msg.Data) > c.max {
		return nil, fmt.Errorf("cluster: %w: %d bytes, at most %d cross nodes (MaxMessageBytes)", router.ErrMessageTooLarge, len(msg.Data), c.max)
	}
	size := limit - hdr - chunkReserve - len(c.prefix)
	if size < 1024 {
		return nil, fmt.Errorf("cluster: the NATS max payload (%d bytes) leaves no room for chunks of a %d-byte message", limit, len(msg.Data))
	}
	n := (len(msg.Data) + size - 1) / size
	id := c.prefix + strconv.FormatUint(c.seq.Add(1), 10) + " "
	chunks := make([]*nats.Msg, n)
	for i := range n {
		ch := &nats.Msg{Subject: msg.Subject, Data: msg.Data[i*size : min((i+1)*size, len(msg.Data))], Header: nats.Header{}}
		if i == n-1 {
			for k, vs := range msg.Header {
				ch.Header[k] = vs
			}
			ch.Reply = msg.Reply
		}
		ch.Header.Set(headerChunk, id+strconv.Itoa(i+1)+"/"+strconv.Itoa(n))
		chunks[i] = ch
	}
	return chunks, nil
}

// publish sends msg without waiting, in chunks when it does not fit in
// one NATS message.
func (c *chunker) publish(msg *nats.Msg) error {
	chunks, err := c.cut(msg)
	if err != nil {
		return err
	}
	if chunks == nil {
		return c.nc.PublishMsg(msg)
	}
	for _, ch := range chunks {
		if err := c.nc.PublishMsg(ch); err != nil {
			return err
		}
	}
	c.sent.Add(1)
	return nil
}

// request sends msg, in chunks when it does not fit in one NATS message
// (the last one asks for the reply), and waits for the reply.
func (c *chunker) request(ctx context.Context, msg *nats.Msg) (*nats.Msg, error) {
	chunks, err := c.cut(msg)
	if err != nil {
		return nil, err
	}
	if chunks == nil {
		return c.nc.RequestMsgWithContext(ctx, msg)
	}
	for _, ch := range chunks[:len(chunks)-1] {
		if err := c.nc.PublishMsg(ch); err != nil {
			return nil, err
		}
	}
	c.sent.Add(1)
	return c.nc.RequestMsgWithContext(ctx, chunks[len(chunks)-1])
}

// subscribe subscribes h to subject, with the messages put together, and
// lets the subscription hold a few messages of the largest size while h
// is busy.
func (c *chunker) subscribe(subject string, h nats.MsgHandler) (*nats.Subscription, error) {
	sub, err := c.nc.Subscribe(subject, func(m *nats.Msg) {
		if whole := c.assemble(m); whole != nil {
			h(whole)
		}
	})
	if err != nil {
		return nil, err
	}
	msgs, bytes, err := sub.PendingLimits()
	if err == nil && bytes > 0 && bytes < 2*c.max {
		err = sub.SetPendingLimits(msgs, 2*c.max)
	}
	if err != nil {
		_ = sub.Unsubscribe()
		return nil, err
	}
	return sub, nil
}

// errBadChunk is why a chunk whose header cannot be read is dropped.
var errBadChunk = errors.New("a chunk header that cannot be read")

// parseChunk reads a chunk's header: its message's ID, its number and the
// number of chunks.
func parseChunk(v string) (id string, i, n int, err error) {
	id, pos, ok := strings.Cut(v, " ")
	if !ok {
		return "", 0, 0, errBadChunk
	}
	is, ns, ok := strings.Cut(pos, "/")
	if !ok {
		return "", 0, 0, errBadChunk
	}
	i, err1 := strconv.Atoi(is)
	n, err2 := strconv.Atoi(ns)
	if err1 != nil || err2 != nil || i < 1 || i > n {
		return "", 0, 0, errBadChunk
	}
	return id, i, n, nil
}

// assemble returns the message msg completes: msg itself when it is no
// chunk, nil while its message is not whole yet (or was dropped).
func (c *chunker) assemble(msg *nats.Msg) *nats.Msg {
	v := msg.Header.Get(headerChunk)
	if v == "" {
		return msg
	}
	id, i, n, err := parseChunk(v)
	if err != nil {
		c.dropped.Add(1)
		c.log.Warn("dropping a chunk whose header cannot be read", "subject", msg.Subject, "header", v)
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.lost[id] {
		return nil // the rest of a message dropped already
	}
	p := c.partial[id]
	switch {
	case p == nil && i == 1:
		reserve := min(n*len(msg.Data), c.max)
		if c.buffered+reserve > c.total {
			c.drop(id, msg.Subject, fmt.Sprintf("the messages being put together would hold more than %d bytes", c.total))
			return nil
		}
		p = &partial{n: n, data: make([]byte, 0, reserve)}
		c.partial[id] = p
		c.buffered += reserve
		p.timer = time.AfterFunc(c.timeout, func() { c.expire(id, p, msg.Subject) })
	case p == nil:
		c.drop(id, msg.Subject, fmt.Sprintf("chunk %d/%d came first: one was lost", i, n))
		return nil
	case p.n != n || p.got+1 != i:
		c.forget(id, p)
		c.drop(id, msg.Subject, fmt.Sprintf("chunk %d/%d came after chunk %d/%d: one was lost", i, n, p.got, p.n))
		return nil
	}
	switch {
	case len(p.data)+len(msg.Data) > c.max:
		c.forget(id, p)
		c.drop(id, msg.Subject, fmt.Sprintf("it is larger than %d bytes (MaxMessageBytes)", c.max))
		return nil
	case len(p.data)+len(msg.Data) > cap(p.data):
		// A publisher cuts chunks of one size, the last one shorter: the
		// first one's size times their number is what was reserved.
		c.forget(id, p)
		c.drop(id, msg.Subject, fmt.Sprintf("chunk %d/%d is larger than the first", i, n))
		return nil
	}
	p.data = append(p.data, msg.Data...)
	p.got = i
	if i < n {
		return nil
	}
	c.forget(id, p)
	c.received.Add(1)
	whole := &nats.Msg{Subject: msg.Subject, Reply: msg.Reply, Header: msg.Header, Data: p.data, Sub: msg.Sub}
	whole.Header.Del(headerChunk)
	return whole
}

// forget lets go of a message being put together. Call with mu held.
func (c *chunker) forget(id string, p *partial) {
	p.timer.Stop()
	delete(c.partial, id)
	c.buffered -= cap(p.data)
}

// expire drops message id if it is still being put together.
func (c *chunker) expire(id string, p *partial, subject string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.partial[id] != p {
		return
	}
	c.forget(id, p)
	c.drop(id, subject, fmt.Sprintf("its chunks did not all come within %v", c.timeout))
}

// drop counts and logs message id, dropped before it was whole, and
// remembers it so that its chunks still to come are ignored. Call with mu
// held.
func (c *chunker) drop(id, subject, why string) {
	c.dropped.Add(1)
	c.log.Warn("dropping a message received in chunks", "message", id, "subject", subject, "why", why)
	if len(c.lostIDs) == lostRetain {
		delete(c.lost, c.lostIDs[0])
		c.lostIDs = c.lostIDs[1:]
	}
	c.lost[id] = true
	c.lostIDs = append(c.lostIDs, id)
}

// close drops every message being put together, and whatever chunk comes
// from now on.
func (c *chunker) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for id, p := range c.partial {
		c.forget(id, p)
	}
}
