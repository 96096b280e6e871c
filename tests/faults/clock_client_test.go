package faults_test

import (
	"bytes"
	"context"
	json "encoding/json/v2"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/mcp-actors/mcp-actors/actors/router"
	"github.com/mcp-actors/mcp-actors/harness"
	"github.com/mcp-actors/mcp-actors/internal/access"
	"github.com/mcp-actors/mcp-actors/messages"
)

// clockStreamFrames bounds the frames a clockSession's request stream
// queues (a test_counter call sends one).
const clockStreamFrames = 1024

// clockSession is a session of an in-process cluster (TestClockNemesis):
// a harness.Client opened through one node, where the harness sends its
// own messages, and tool calls the test sends through any node the way
// the Streamable HTTP transport does — a stream registered on that node,
// the request delivered there — recording each in a history as
// client_test.go's raw client does. Not through the harness client's
// Call: a node whose lease may have lapsed refuses a delivery at once
// (503 over HTTP), which the harness client swallows, waiting out its
// bound, and the history must tell a refusal from silence. Driven by one
// goroutine at a time.
type clockSession struct {
	c    *harness.Cluster
	hist *history
	cl   *harness.Client
	name string // the client's name for it: request IDs start with it
	seq  int    // the last request number
}

// call calls tool with args on the session through node i and records
// it: a refused delivery refuses it (it never reached a handler), a
// result's single text is its value, an error or an isError result fail
// it, a stream that ends without its response fails it, nothing within
// bound gives it up. Frames that are neither its response nor its own
// progress are strays.
func (s *clockSession) call(ctx context.Context, i int, tool string, args map[string]any, bound time.Duration) {
	s.seq++
	reqID := fmt.Sprintf("%s-%d", s.name, s.seq)
	if args == nil {
		args = map[string]any{}
	}
	params, _ := json.Marshal(map[string]any{"name": tool, "arguments": args, "_meta": map[string]any{"progressToken": reqID}})
	id := s.cl.ID()
	n := s.hist.begin(id, s.c.Nodes[i].ID(), tool)
	msg, derr := messages.Decode(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%q,"method":"tools/call","params":%s}`, reqID, params))
	if derr != nil {
		s.hist.fail(n, derr, false)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	rt := access.Router(s.c.Servers[i])
	q := router.NewQueue(ctx, clockStreamFrames, nil)
	sid := rt.Streams().Register(id, q)
	defer rt.Streams().Unregister(sid)
	if err := rt.Deliver(ctx, id, &messages.HandleRequest{Msg: msg, Stream: sid}); err != nil {
		if ctx.Err() != nil {
			s.hist.giveUp(n, ctx.Err())
		} else {
			s.hist.refuse(n, fmt.Errorf("delivery refused: %w", err))
		}
		return
	}
	wantID, _ := json.Marshal(reqID)
	frames := 0
	for {
		batch, ok := q.Wait(ctx)
		if !ok {
			s.hist.giveUp(n, ctx.Err())
			return
		}
		for _, ev := range batch {
			switch {
			case ev.Signal == messages.SignalFrame:
				if ev.Frame.Data != nil {
					frames++
					s.take(n, reqID, wantID, ev.Frame.Data)
				}
				if ev.Frame.End {
					s.ended(n, nil)
					return
				}
			case ev.Signal == messages.SignalNotFound && frames == 0:
				s.hist.refuse(n, errors.New("no such session (HTTP 404)"))
				return
			case ev.Signal.Ends():
				s.ended(n, fmt.Errorf("the stream ended (%s) without an answer", ev.Signal))
				return
			}
		}
	}
}

// take records one frame of request n's stream.
func (s *clockSession) take(n int, reqID string, wantID, data []byte) {
	var m rpcMessage
	if err := json.Unmarshal(data, &m); err != nil {
		s.hist.stray(n, string(data))
		return
	}
	m.raw = string(data)
	switch {
	case m.Method == "notifications/progress" && m.Params.ProgressToken == reqID:
		s.hist.progressed(n)
	case m.Method != "", !bytes.Equal(m.ID, wantID):
		s.hist.stray(n, m.raw)
	case m.Error != nil:
		s.hist.fail(n, fmt.Errorf("JSON-RPC error %d: %s", m.Error.Code, m.Error.Message), true)
	case m.Result == nil:
		s.hist.fail(n, fmt.Errorf("a response with neither result nor error: %s", m.raw), true)
	case m.Result.IsError || len(m.Result.Content) != 1:
		s.hist.fail(n, fmt.Errorf("a tool error or an unexpected result: %s", m.raw), true)
	default:
		s.hist.answer(n, m.Result.Content[0].Text)
	}
}

// ended ends request n, if nothing else has, once its stream ended.
func (s *clockSession) ended(n int, err error) {
	if err == nil {
		err = errors.New("the response ended without an answer")
	}
	s.hist.fail(n, err, false)
}

// clockLoop drives s, opened through node home, over every node in turn
// from home, each call drawn from r (nemesisCall), bounded by callBound.
func (w *clientLoops) clockLoop(ctx context.Context, s *clockSession, home int, r *rand.Rand) {
	w.use(s.name, s.cl.ID())
	nodes := len(s.c.Nodes)
	w.loop(ctx, pace, func(ctx context.Context, k int) {
		tool, args := nemesisCall(r)
		s.call(ctx, (home+k)%nodes, tool, args, callBound)
	})
}
