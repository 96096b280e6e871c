package mcpactors_test

import (
	"context"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/actors/router"
	"github.com/mcp-actors/mcp-actors/internal/access"
	"github.com/mcp-actors/mcp-actors/messages"
)

// stepper is a tool whose calls the test drives: a call named by its tag
// reports progress "<tag>:<step>" for each step the test gives it, and
// answers "<tag> done" when the test finishes it. Every node's server
// shares one stepper, so the test drives a call wherever it runs.
type stepper struct {
	mu    sync.Mutex
	calls map[string]*stepCall
}

type stepCall struct {
	started chan struct{} // closed once the handler runs
	steps   chan string
	finish  chan struct{}
}

// of returns the call of tag, made on first use.
func (s *stepper) of(tag string) *stepCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.calls == nil {
		s.calls = map[string]*stepCall{}
	}
	c := s.calls[tag]
	if c == nil {
		c = &stepCall{started: make(chan struct{}), steps: make(chan string, 16), finish: make(chan struct{})}
		s.calls[tag] = c
	}
	return c
}

// add registers the tool "steps" on srv.
func (s *stepper) add(srv *mcpactors.Server) {
	err := srv.AddTool(&messages.Tool{Name: "steps", InputSchema: jsontext.Value(`{"type":"object","properties":{"tag":{"type":"string"}}}`)},
		func(ctx context.Context, sess *mcpactors.Session, req *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			var args struct {
				Tag string `json:"tag"`
			}
			if err := json.Unmarshal(req.Arguments, &args); err != nil {
				return nil, err
			}
			c := s.of(args.Tag)
			close(c.started)
			for n := 1; ; n++ {
				select {
				case step := <-c.steps:
					if err := sess.Progress(ctx, float64(n), 0, args.Tag+":"+step); err != nil {
						return nil, err
					}
				case <-c.finish:
					return textResult(args.Tag + " done"), nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
		})
	if err != nil {
		panic(err)
	}
}

// started waits until the call of tag runs.
func (s *stepper) started(t *testing.T, tag string) {
	t.Helper()
	select {
	case <-s.of(tag).started:
	case <-time.After(httpWait):
		require.FailNow(t, "the call did not start", tag)
	}
}

// TestClusterRestartedNodeStreamsGetOnlyTheirOwnFrames: a session owned
// by n1 runs a long call whose stream is held by n2; n2 crashes and
// restarts under the same ID, and numbers its streams from 1 again, so
// that a new client's call on n2 gets the number of the old call's
// stream. The old call's next frame reaches n2, which holds no stream of
// its earlier run: the new client's stream gets only its own frames, and
// the frame is reported to the old session (it is not dropped as
// another session's: the stream's boot, not only its session, tells
// them apart). The owner then treats that call's client as gone: it sends
// the stream nothing more, and keeps what follows for the client to
// resume, which it does on n1 with the ID of the last event it saw.
func TestClusterRestartedNodeStreamsGetOnlyTheirOwnFrames(t *testing.T) {
	steps := &stepper{}
	c := startHTTPCluster(t, 3, "restart", steps.add, nil)
	n1, n2 := 0, 1

	// Session A, owned by n1. On n2 it makes stream 1 (a ping) and stream
	// 2, its long call.
	a := openSession(t, c.urls[n1], `{}`)
	require.True(t, strings.HasPrefix(a, "n1."))
	ping := startCall(t, c.urls[n2], a, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":1,"result":{}}`, ping.next().data)
	old := startCall(t, c.urls[n2], a, toolCall(2, "steps", `{"tag":"old"}`, "old"))
	steps.started(t, "old")
	steps.of("old").steps <- "1"
	seen := old.next()
	require.Equal(t, "old:1", progressMessage(t, seen))
	require.NotEmpty(t, seen.id, "the old call's stream can be resumed")

	c.crash(n2)
	c.restart(n2)

	// Session B, opened on the new n2 (its initialize is stream 1 there),
	// and its long call: stream 2 of n2's new run.
	b := openSession(t, c.urls[n2], `{}`)
	require.True(t, strings.HasPrefix(b, "n2."))
	fresh := startCall(t, c.urls[n2], b, toolCall(2, "steps", `{"tag":"new"}`, "new"))
	steps.started(t, "new")
	steps.of("new").steps <- "1"
	require.Equal(t, "new:1", progressMessage(t, fresh.next()))

	// The old call goes on, on n1: its frame for its stream on n2 …
	before := c.stats(n1)
	steps.of("old").steps <- "2"
	// … finds no stream of n2's run there, and n2 tells the session.
	require.Eventually(t, func() bool { return c.stats(n2).GoneStreams == 1 },
		httpWait, 10*time.Millisecond, "n2 tells the session that its stream is gone")
	assert.Zero(t, c.stats(n2).ForeignEvents, "the frame found no stream: it was not another session's")
	reported := c.stats(n1)
	assert.Equal(t, before.FramesOut+1, reported.FramesOut, "n1 sent the one frame")

	// The session has the report in its mailbox, before what follows: it
	// sends the old stream nothing more.
	steps.of("old").steps <- "3"
	close(steps.of("old").finish)
	steps.of("new").steps <- "2"
	close(steps.of("new").finish)
	var got []string
	for _, ev := range fresh.rest() {
		if m := decoded(t, ev); m.Method == messages.MethodProgress {
			got = append(got, progressMessage(t, ev))
		} else {
			got = append(got, firstText(t, callResult(t, m)))
		}
	}
	assert.Equal(t, []string{"new:2", "new done"}, got, "the new client gets its own frames, and nothing of the old call")

	// The old call's client resumes on n1, the owner (its replay crosses
	// no node): what followed the event it saw is there, the response
	// last, and none of it went to n2.
	resume := getStream(t, c.urls[n1], a, seen.id)
	var replayed []string
	for _, ev := range resume.rest() {
		if m := decoded(t, ev); m.Method == messages.MethodProgress {
			replayed = append(replayed, progressMessage(t, ev))
		} else {
			replayed = append(replayed, firstText(t, callResult(t, m)))
		}
	}
	assert.Equal(t, []string{"old:2", "old:3", "old done"}, replayed)
	assert.Equal(t, reported.FramesOut, c.stats(n1).FramesOut, "nothing more went to the gone stream")
}

// getStream opens a GET stream of session sid through url, resuming after
// lastEventID, and reads it like a call.
func getStream(t *testing.T, url, sid, lastEventID string) *call {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c := &call{t: t, events: make(chan sseEvent, 1024), status: make(chan int, 1), cancel: cancel, done: make(chan struct{})}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", messages.Version20251125)
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	go func() {
		defer close(c.done)
		defer close(c.events)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			c.status <- 0
			return
		}
		defer resp.Body.Close()
		c.status <- resp.StatusCode
		readSSE(resp.Body, c.events)
	}()
	t.Cleanup(c.stop)
	return c
}

// callResult decodes the tools/call result a response carries.
func callResult(t *testing.T, m *messages.Message) *messages.CallToolResult {
	t.Helper()
	require.Nil(t, m.Error, "an error response: %+v", m.Error)
	var res messages.CallToolResult
	require.NoError(t, json.Unmarshal(m.Result, &res))
	return &res
}

// TestClusterOwnerLearnsItsStreamIsGone: n2 holds the stream of a call
// of a session owned by n1, and lets it go without the session hearing
// of it (the transport's DetachStream lost between the nodes, say). The
// next frame for it reaches n2, which holds no such stream and tells the
// session; the session then treats the call's client as gone: nothing
// more goes to n2, and what follows waits in the session for the client
// to resume.
func TestClusterOwnerLearnsItsStreamIsGone(t *testing.T) {
	steps := &stepper{}
	c := startHTTPCluster(t, 2, "gone", steps.add, nil)
	n1, n2 := 0, 1
	a := openSession(t, c.urls[n1], `{}`)
	ctx, cancel := context.WithTimeout(context.Background(), httpWait)
	defer cancel()

	rt := access.Router(c.servers[n2])
	q := router.NewQueue(ctx, 64, nil)
	sid := rt.Streams().Register(a, q)
	req, derr := messages.Decode(toolCall(7, "steps", `{"tag":"lost"}`, "lost"))
	require.Nil(t, derr)
	require.NoError(t, rt.Deliver(ctx, a, &messages.HandleRequest{Msg: req, Stream: sid}))
	steps.started(t, "lost")
	steps.of("lost").steps <- "1"
	var seen messages.Frame
	for seen.Data == nil { // after the priming event
		batch, ok := q.Wait(ctx)
		require.True(t, ok)
		for _, ev := range batch {
			if ev.Signal == messages.SignalFrame && ev.Frame.Data != nil {
				seen = ev.Frame
			}
		}
	}
	require.Equal(t, "lost:1", progressMessage(t, sseEvent{id: seen.EventID, data: string(seen.Data)}))

	rt.Streams().Unregister(sid) // and the session is not told
	steps.of("lost").steps <- "2"
	require.Eventually(t, func() bool { return c.stats(n2).GoneStreams == 1 },
		httpWait, 10*time.Millisecond, "n2 tells the session that its stream is gone")
	out, in := c.stats(n1).FramesOut, c.stats(n2).FramesIn

	steps.of("lost").steps <- "3"
	close(steps.of("lost").finish)
	resume := getStream(t, c.urls[n1], a, seen.EventID)
	var replayed []string
	for _, ev := range resume.rest() {
		if m := decoded(t, ev); m.Method == messages.MethodProgress {
			replayed = append(replayed, progressMessage(t, ev))
		} else {
			replayed = append(replayed, firstText(t, callResult(t, m)))
		}
	}
	assert.Equal(t, []string{"lost:2", "lost:3", "lost done"}, replayed, "the client resumes what followed the event it saw")
	assert.Equal(t, out, c.stats(n1).FramesOut, "the owner sent the gone stream nothing more")
	assert.Equal(t, in, c.stats(n2).FramesIn)
	assert.Equal(t, int64(1), c.stats(n2).GoneStreams, "one report")
	assert.Empty(t, q.Take(), "the stream let go of got nothing more")
}
