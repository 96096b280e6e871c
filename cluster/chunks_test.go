package cluster

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/actors/router"
)

// testChunker is a chunker without a connection whose NATS messages carry
// at most limit bytes, putting together messages of at most max.
func testChunker(limit, max int) *chunker {
	c := newChunker(nil, slog.New(slog.DiscardHandler), "n1.b00t.", max)
	c.limit = func() int { return limit }
	return c
}

// payload returns n bytes that differ from one offset to the next.
func payload(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}

// message is a routed message of n bytes with a header and a reply.
func message(n int) *nats.Msg {
	m := nats.NewMsg("mcpx.c.node.n2.session")
	m.Reply = "_INBOX.x.y"
	m.Header.Set(headerSession, "n2.abc")
	m.Data = payload(n)
	return m
}

// assembleAll hands chunks to c in order and returns what came out whole.
func assembleAll(c *chunker, chunks []*nats.Msg) []*nats.Msg {
	var whole []*nats.Msg
	for _, ch := range chunks {
		if m := c.assemble(ch); m != nil {
			whole = append(whole, m)
		}
	}
	return whole
}

func TestChunksCutAndPutTogether(t *testing.T) {
	const limit = 64 << 10
	for _, size := range []int{0, 1, limit / 2, limit - 200, limit - 100, limit + 1, 3 * limit, 3*limit + 17, 40 * limit} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			c := testChunker(limit, 8<<20)
			msg := message(size)
			chunks, err := c.cut(msg)
			require.NoError(t, err)
			if size+headerSize(msg.Header) <= limit {
				assert.Nil(t, chunks, "a message that fits goes as it is")
				assert.Same(t, msg, c.assemble(msg), "and a message that is no chunk comes out as it is")
				return
			}
			require.Greater(t, len(chunks), 1)
			for i, ch := range chunks {
				assert.LessOrEqual(t, len(ch.Data)+headerSize(ch.Header), limit, "chunk %d fits in one NATS message", i)
				assert.Equal(t, msg.Subject, ch.Subject)
				if i < len(chunks)-1 {
					assert.Empty(t, ch.Reply, "only the last chunk asks for the reply")
					assert.Empty(t, ch.Header.Get(headerSession), "only the last chunk carries the message's headers")
				}
			}
			whole := assembleAll(c, chunks)
			require.Len(t, whole, 1)
			assert.Equal(t, msg.Data, whole[0].Data)
			assert.Equal(t, msg.Reply, whole[0].Reply)
			assert.Equal(t, msg.Subject, whole[0].Subject)
			assert.Equal(t, "n2.abc", whole[0].Header.Get(headerSession))
			assert.Empty(t, whole[0].Header.Get(headerChunk))
			assert.Zero(t, c.held(), "nothing is held once the message is whole")
			assert.Empty(t, c.partial)
			assert.Equal(t, int64(1), c.received.Load())
		})
	}
}

// TestChunksOfManyMessagesInterleave: chunks of messages published at
// once by several goroutines (or nodes) interleave on a subject; each
// message is put together from its own, in its order.
func TestChunksOfManyMessagesInterleave(t *testing.T) {
	const limit = 4 << 10
	sender, receiver := testChunker(limit, 1<<20), testChunker(limit, 1<<20)
	var queues [][]*nats.Msg
	var want [][]byte
	for i := range 5 {
		msg := message(10*limit + i*1000)
		chunks, err := sender.cut(msg)
		require.NoError(t, err)
		queues = append(queues, chunks)
		want = append(want, msg.Data)
	}
	// Deal the chunks out at random, each message's in its order.
	rng := rand.New(rand.NewPCG(1, 2))
	var got [][]byte
	for len(queues) > 0 {
		k := rng.IntN(len(queues))
		if m := receiver.assemble(queues[k][0]); m != nil {
			got = append(got, m.Data)
		}
		if queues[k] = queues[k][1:]; len(queues[k]) == 0 {
			queues = append(queues[:k], queues[k+1:]...)
		}
	}
	assert.ElementsMatch(t, want, got)
	assert.Zero(t, receiver.dropped.Load())
	assert.Zero(t, receiver.held())
}

// TestChunksOutOfOrderDropTheMessage: a message one of whose chunks is
// lost (or comes out of order) is dropped whole and counted; the chunks of
// it that follow are ignored, and the next message comes through.
func TestChunksOutOfOrderDropTheMessage(t *testing.T) {
	const limit = 4 << 10
	sender := testChunker(limit, 1<<20)
	cut := func(n int) []*nats.Msg {
		chunks, err := sender.cut(message(n))
		require.NoError(t, err)
		return chunks
	}
	for _, tc := range []struct {
		name    string
		mangle  func([]*nats.Msg) []*nats.Msg
		dropped int64
	}{
		{"a chunk lost", func(c []*nats.Msg) []*nats.Msg { return append(c[:2:2], c[3:]...) }, 1},
		{"two swapped", func(c []*nats.Msg) []*nats.Msg { c[1], c[2] = c[2], c[1]; return c }, 1},
		{"the first lost", func(c []*nats.Msg) []*nats.Msg { return c[1:] }, 1},
		{"the first twice", func(c []*nats.Msg) []*nats.Msg { return append([]*nats.Msg{c[0]}, c...) }, 1},
		{"a chunk twice", func(c []*nats.Msg) []*nats.Msg { return append(c[:2:2], c[1:]...) }, 1},
		// The chunk that cannot be read, then its message.
		{"unreadable header", func(c []*nats.Msg) []*nats.Msg { c[1].Header.Set(headerChunk, "x 9"); return c }, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			receiver := testChunker(limit, 1<<20)
			assert.Empty(t, assembleAll(receiver, tc.mangle(cut(10*limit))))
			assert.Equal(t, tc.dropped, receiver.dropped.Load(), "counted once")
			assert.Zero(t, receiver.held())
			next := message(5 * limit)
			chunks, err := sender.cut(next)
			require.NoError(t, err)
			whole := assembleAll(receiver, chunks)
			require.Len(t, whole, 1, "the next message comes through")
			assert.Equal(t, next.Data, whole[0].Data)
		})
	}
}

// TestChunksBounds: a message larger than the bound is refused at the
// sender, and dropped by a receiver with a smaller one; the messages being
// put together hold at most four times the bound between them.
func TestChunksBounds(t *testing.T) {
	const limit, max = 4 << 10, 64 << 10
	sender := testChunker(limit, max)
	_, err := sender.cut(message(max + 1))
	require.ErrorIs(t, err, router.ErrMessageTooLarge)
	assert.ErrorContains(t, err, fmt.Sprintf("%d bytes, at most %d", max+1, max))

	t.Run("a receiver with a smaller bound", func(t *testing.T) {
		receiver := testChunker(limit, max/2)
		chunks, err := sender.cut(message(max))
		require.NoError(t, err)
		assert.Empty(t, assembleAll(receiver, chunks))
		assert.Equal(t, int64(1), receiver.dropped.Load())
		assert.Zero(t, receiver.held())
	})
	t.Run("messages being put together at once", func(t *testing.T) {
		receiver := testChunker(limit, max)
		var rest [][]*nats.Msg
		for range 5 { // the fifth would hold more than 4 × max
			chunks, err := sender.cut(message(max))
			require.NoError(t, err)
			assert.Nil(t, receiver.assemble(chunks[0]))
			rest = append(rest, chunks[1:])
		}
		assert.Equal(t, int64(1), receiver.dropped.Load())
		assert.LessOrEqual(t, receiver.held(), 4*max)
		whole := 0
		for _, chunks := range rest {
			whole += len(assembleAll(receiver, chunks))
		}
		assert.Equal(t, 4, whole, "the others are put together")
		assert.Zero(t, receiver.held())
	})
}

// TestChunksTimeOut: a message whose chunks stop coming is dropped after
// partialTimeout, and what it held is let go.
func TestChunksTimeOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const limit = 4 << 10
		sender, receiver := testChunker(limit, 1<<20), testChunker(limit, 1<<20)
		chunks, err := sender.cut(message(10 * limit))
		require.NoError(t, err)
		assert.Empty(t, assembleAll(receiver, chunks[:3]))
		assert.Positive(t, receiver.held())

		<-time.After(partialTimeout - time.Millisecond) // the bubble's clock: at once
		synctest.Wait()
		assert.Zero(t, receiver.dropped.Load(), "not before the timeout")
		<-time.After(time.Millisecond)
		synctest.Wait()
		assert.Equal(t, int64(1), receiver.dropped.Load())
		assert.Zero(t, receiver.held())
		assert.Empty(t, assembleAll(receiver, chunks[3:]), "what comes late is ignored")
		assert.Equal(t, int64(1), receiver.dropped.Load())

		// A message that completes in time leaves no timer behind.
		chunks, err = sender.cut(message(10 * limit))
		require.NoError(t, err)
		assert.Len(t, assembleAll(receiver, chunks), 1)
		receiver.close()
	})
}

// TestChunksOverNATS publishes and requests messages of several times the
// embedded server's max payload through a node's connection, from several
// goroutines at once: each arrives whole, and a request's reply comes
// back to its sender.
func TestChunksOverNATS(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := Start(ctx, Options{NodeID: "solo", DataDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	defer n.Close()
	limit := int(n.nc.MaxPayload())
	c := newChunker(n.nc, n.log, "solo.1.", 16*limit)
	defer c.close()

	var mu sync.Mutex
	got := map[string][]byte{}
	sub, err := c.subscribe("test.chunks", func(m *nats.Msg) {
		mu.Lock()
		got[m.Header.Get("Which")] = m.Data
		mu.Unlock()
		if m.Reply != "" {
			reply := nats.NewMsg(m.Reply)
			reply.Data = []byte(fmt.Sprint(len(m.Data)))
			_ = m.RespondMsg(reply)
		}
	})
	require.NoError(t, err)
	defer func() { _ = sub.Unsubscribe() }()

	sizes := []int{limit / 2, limit, 2*limit + 5, 3 * limit, 8 * limit}
	var wg sync.WaitGroup
	for i, size := range sizes {
		wg.Go(func() {
			m := nats.NewMsg("test.chunks")
			m.Header.Set("Which", fmt.Sprint("publish ", i))
			m.Data = payload(size)
			assert.NoError(t, c.publish(m))
		})
		wg.Go(func() {
			m := nats.NewMsg("test.chunks")
			m.Header.Set("Which", fmt.Sprint("request ", i))
			m.Data = payload(size)
			reply, err := c.request(ctx, m)
			if assert.NoError(t, err) {
				assert.Equal(t, fmt.Sprint(size), string(reply.Data), "the reply names what was received")
			}
		})
	}
	wg.Wait()
	require.NoError(t, n.nc.Flush())
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) == 2*len(sizes)
	}, 10*time.Second, 5*time.Millisecond)
	for i, size := range sizes {
		assert.True(t, bytes.Equal(payload(size), got[fmt.Sprint("publish ", i)]), "publish %d", i)
		assert.True(t, bytes.Equal(payload(size), got[fmt.Sprint("request ", i)]), "request %d", i)
	}
	assert.Equal(t, int64(8), c.sent.Load(), "the messages larger than one NATS message went in chunks")
	assert.Equal(t, int64(8), c.received.Load())
	assert.Zero(t, c.dropped.Load())
}

// held returns the bytes c holds in messages being put together, under
// its lock (its timers change them on their own goroutines).
func (c *chunker) held() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buffered
}
