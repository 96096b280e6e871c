package reftools_test

import (
	"bufio"
	"context"
	json "encoding/json/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/internal/sse"
	"github.com/mcp-actors/mcp-actors/messages"
)

// Rounds of input_required as a client of 2026-07-28 sees them: how many
// POSTs a call takes, how often each input is asked, how often the
// handler runs.

// countingRT counts the POSTs of tools/call.
type countingRT struct{ calls atomic.Int64 }

func (c *countingRT) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("Mcp-Method") == messages.MethodCallTool {
		c.calls.Add(1)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// roundsClient connects the Go SDK client (2026-07-28) to url, counting
// its tools/call POSTs and the elicitations and samplings it answers.
type roundsClient struct {
	cs              *mcp.ClientSession
	rt              *countingRT
	elicits, sample atomic.Int64
}

func newRoundsClient(t *testing.T, url string) *roundsClient {
	t.Helper()
	rc := &roundsClient{rt: &countingRT{}}
	client := mcp.NewClient(&mcp.Implementation{Name: "rounds", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			rc.elicits.Add(1)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": r.Params.Message}}, nil
		},
		CreateMessageHandler: func(_ context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			rc.sample.Add(1)
			return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "sampled"}}, nil
		},
	})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: rc.rt}}, nil)
	require.NoError(t, err)
	require.Equal(t, messages.Version20260728, cs.InitializeResult().ProtocolVersion)
	t.Cleanup(func() { _ = cs.Close() })
	rc.cs = cs
	return rc
}

func (rc *roundsClient) call(t *testing.T, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	res, err := rc.cs.CallTool(ctx, &mcp.CallToolParams{Name: name})
	require.NoError(t, err)
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	require.False(t, res.IsError, b.String())
	return b.String()
}

type answer struct {
	Answer string `json:"answer"`
}

// roundTools adds the tools of these tests; runs counts the handler runs
// of each.
func roundTools(runs *sync.Map) func(*mcpactors.Server) {
	count := func(name string) {
		n, _ := runs.LoadOrStore(name, new(atomic.Int64))
		n.(*atomic.Int64).Add(1)
	}
	return func(srv *mcpactors.Server) {
		noArgs := &messages.Tool{InputSchema: []byte(`{"type":"object","properties":{}}`)}
		add := func(name string, h mcpactors.ToolHandler) {
			def := *noArgs
			def.Name, def.Description = name, name
			if err := srv.AddTool(&def, h); err != nil {
				panic(err)
			}
		}
		// Two questions at once: they share a round.
		add("pair", func(ctx context.Context, sess *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			count("pair")
			var wg sync.WaitGroup
			got := make([]string, 2)
			errs := make([]error, 2)
			for i, q := range []string{"first", "second"} {
				wg.Go(func() {
					var a answer
					_, errs[i] = sess.Elicit(ctx, q, &a)
					got[i] = a.Answer
				})
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					return nil, err
				}
			}
			return &messages.CallToolResult{Content: messages.ContentList{&messages.TextContent{Text: got[0] + "+" + got[1]}}}, nil
		})
		// One question, then a sampling that depends on it: two rounds.
		add("chain", func(ctx context.Context, sess *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			count("chain")
			var a answer
			if _, err := sess.Elicit(ctx, "name?", &a); err != nil {
				return nil, err
			}
			res, err := sess.CreateMessage(ctx, &messages.CreateMessageParams{MaxTokens: 10,
				Messages: []*messages.SamplingMessage{{Role: messages.RoleUser, Content: messages.ContentList{&messages.TextContent{Text: a.Answer}}}}})
			if err != nil {
				return nil, err
			}
			text := ""
			for _, c := range res.Content {
				if tc, ok := c.(*messages.TextContent); ok {
					text = tc.Text
				}
			}
			return &messages.CallToolResult{Content: messages.ContentList{&messages.TextContent{Text: a.Answer + "/" + text}}}, nil
		})
		// A long call that notices its cancellation.
		add("wait", func(ctx context.Context, sess *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			count("wait")
			_ = sess.Progress(ctx, 1, 0, "started")
			<-ctx.Done()
			count("wait cancelled")
			return nil, ctx.Err()
		})
	}
}

func runsOf(runs *sync.Map, name string) int64 {
	n, ok := runs.Load(name)
	if !ok {
		return 0
	}
	return n.(*atomic.Int64).Load()
}

func TestModernRoundShared(t *testing.T) {
	var runs sync.Map
	rc := newRoundsClient(t, wireServerWith(t, nil, roundTools(&runs), false))
	assert.Equal(t, "first+second", rc.call(t, "pair"))
	assert.EqualValues(t, 2, rc.rt.calls.Load(), "one round: the call and its retry")
	assert.EqualValues(t, 2, rc.elicits.Load(), "each question asked once")
	assert.EqualValues(t, 1, runsOf(&runs, "pair"), "the handler ran once, kept between the rounds")
}

func TestModernTwoRounds(t *testing.T) {
	var runs sync.Map
	rc := newRoundsClient(t, wireServerWith(t, nil, roundTools(&runs), false))
	assert.Equal(t, "name?/sampled", rc.call(t, "chain"))
	assert.EqualValues(t, 3, rc.rt.calls.Load(), "two rounds")
	assert.EqualValues(t, 1, rc.elicits.Load())
	assert.EqualValues(t, 1, rc.sample.Load())
	assert.EqualValues(t, 1, runsOf(&runs, "chain"))
}

// TestModernJournal keeps no handler between rounds (the parking bound
// is reached at once): each retry runs the handler again, and the
// journal in requestState answers what was asked before, so that no
// input is asked twice.
func TestModernJournal(t *testing.T) {
	var runs sync.Map
	rc := newRoundsClient(t, wireServerWith(t, &mcpactors.Options{MaxParked: -1}, roundTools(&runs), false))
	assert.Equal(t, "name?/sampled", rc.call(t, "chain"))
	assert.Equal(t, "first+second", rc.call(t, "pair"))
	assert.EqualValues(t, 5, rc.rt.calls.Load(), "three POSTs for chain, two for pair")
	assert.EqualValues(t, 3, rc.elicits.Load(), "each question asked once")
	assert.EqualValues(t, 1, rc.sample.Load())
	assert.EqualValues(t, 3, runsOf(&runs, "chain"), "run again after each round")
	assert.EqualValues(t, 2, runsOf(&runs, "pair"))
}

// TestModernCancelByClosing closes the stream of a running call: the
// handler's context ends (closing the stream is how a client of
// Streamable HTTP cancels).
func TestModernCancelByClosing(t *testing.T) {
	var runs sync.Map
	url := wireServerWith(t, nil, roundTools(&runs), false)
	ctx, cancel := context.WithCancel(t.Context())
	c := wireCall{method: "tools/call", name: "wait", params: `{"name":"wait"}`, extraMeta: `"progressToken":"p1",`}
	resp := openPost(t, ctx, url, 1, c)
	defer resp.Body.Close()
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	require.NoError(t, err)
	assert.Contains(t, line, "event: message", "the progress notification comes first")
	cancel() // the client goes away with the progress notification read
	require.Eventually(t, func() bool { return runsOf(&runs, "wait cancelled") == 1 }, 5*time.Second, 5*time.Millisecond,
		"the handler's context ended")
}

// TestModernProgressAndLogs: notifications of a request go on its own
// stream — progress with the request's token, log messages only at or
// above the request's logLevel, none without one.
func TestModernProgressAndLogs(t *testing.T) {
	url := wireServer(t, false)
	events := func(c wireCall) []string {
		a := send(t, url, 1, c)
		require.Equal(t, 200, a.status)
		var out []string
		for _, ev := range sse.Parse([]byte(a.raw)) {
			if ev.HasData {
				out = append(out, string(ev.Data))
			}
		}
		if len(out) == 0 {
			out = []string{strings.TrimSpace(a.raw)} // a JSON answer
		}
		return out
	}
	progress := events(wireCall{method: "tools/call", name: "test_tool_with_progress", params: `{"name":"test_tool_with_progress"}`, extraMeta: `"progressToken":7,`})
	require.Len(t, progress, 4, "three progress notifications, then the result")
	for _, p := range progress[:3] {
		assert.Contains(t, p, `"method":"notifications/progress"`)
		assert.Contains(t, p, `"progressToken":7`)
	}
	assert.Contains(t, progress[3], `"resultType":"complete"`)

	logs := events(wireCall{method: "tools/call", name: "test_tool_with_logging", params: `{"name":"test_tool_with_logging"}`, extraMeta: `"io.modelcontextprotocol/logLevel":"info",`})
	require.Len(t, logs, 4, "three log messages, then the result")
	assert.Contains(t, logs[0], `"method":"notifications/message"`)
	quiet := events(wireCall{method: "tools/call", name: "test_tool_with_logging", params: `{"name":"test_tool_with_logging"}`, extraMeta: `"io.modelcontextprotocol/logLevel":"error",`})
	assert.Len(t, quiet, 1, "nothing below the request's level: %v", quiet)
	none := events(wireCall{method: "tools/call", name: "test_tool_with_logging", params: `{"name":"test_tool_with_logging"}`})
	assert.Len(t, none, 1, "no log messages without a logLevel: %v", none)
}

// TestModernSamplingWithTools: a sampling request that offers the model
// tools needs sampling.tools in the request's own capabilities: without
// it -32021 names it; with it the input request carries the tools.
func TestModernSamplingWithTools(t *testing.T) {
	url := wireServerWith(t, nil, func(srv *mcpactors.Server) {
		def := &messages.Tool{Name: "sample_with_tools", Description: "samples, offering the model a tool", InputSchema: []byte(`{"type":"object","properties":{}}`)}
		require.NoError(t, srv.AddTool(def, func(ctx context.Context, sess *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			res, err := sess.CreateMessage(ctx, &messages.CreateMessageParams{MaxTokens: 10,
				Messages: []*messages.SamplingMessage{{Role: messages.RoleUser, Content: messages.ContentList{&messages.TextContent{Text: "weather?"}}}},
				Tools:    []*messages.Tool{{Name: "get_weather", InputSchema: []byte(`{"type":"object","properties":{}}`)}}})
			if err != nil {
				return nil, err
			}
			return &messages.CallToolResult{Content: messages.ContentList{&messages.TextContent{Text: string(res.Role)}}}, nil
		}))
	}, false)
	call := wireCall{method: "tools/call", name: "sample_with_tools", params: `{"name":"sample_with_tools"}`, caps: `{"sampling":{}}`}
	refused := send(t, url, 1, call)
	assert.Equal(t, 400, refused.status, refused.raw)
	assert.EqualValues(t, messages.CodeMissingClientCapability, refused.code())
	if refused.msg.Error != nil {
		assert.JSONEq(t, `{"requiredCapabilities":{"sampling":{"tools":{}}}}`, string(refused.msg.Error.Data))
	}
	call.caps = `{"sampling":{"tools":{}}}`
	asked := send(t, url, 2, call)
	require.Equal(t, "input_required", asked.str("resultType"), asked.raw)
	assert.Contains(t, string(asked.msg.Result["inputRequests"]), `"tools":[{"name":"get_weather"`)
}

// TestModernRetryTakesOver: a second retry of the round in progress takes
// its stream over — the first ends without an answer, the second gets the
// result — and the handler runs once.
func TestModernRetryTakesOver(t *testing.T) {
	passed, release := make(chan struct{}), make(chan struct{})
	var runs atomic.Int64
	url := wireServerWith(t, nil, func(srv *mcpactors.Server) {
		def := &messages.Tool{Name: "ask_then_wait", Description: "asks, then waits to be released", InputSchema: []byte(`{"type":"object","properties":{}}`)}
		require.NoError(t, srv.AddTool(def, func(ctx context.Context, sess *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			runs.Add(1)
			var a answer
			if _, err := sess.Elicit(ctx, "q", &a); err != nil {
				return nil, err
			}
			close(passed)
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return &messages.CallToolResult{Content: messages.ContentList{&messages.TextContent{Text: "done: " + a.Answer}}}, nil
		}))
	}, false)
	call := wireCall{method: "tools/call", name: "ask_then_wait", params: `{"name":"ask_then_wait"}`, caps: `{"elicitation":{}}`}
	first := send(t, url, 1, call)
	state := first.str("requestState")
	require.NotEmpty(t, state, first.raw)
	var key string
	var reqs map[string]any
	require.NoError(t, json.Unmarshal(first.msg.Result["inputRequests"], &reqs))
	for k := range reqs {
		key = k
	}
	retry := retryOf(call, state, `{"`+key+`":{"action":"accept","content":{"answer":"a"}}}`)
	results := make(chan *wireAnswer, 2)
	go func() { results <- send(t, url, 2, retry) }()
	<-passed // the first retry answered the question: its stream is the client's
	go func() { results <- send(t, url, 3, retry) }()
	taken := <-results // the first retry's stream ends, with nothing
	assert.Empty(t, taken.msg.Result, "the stream taken over ends without an answer: %s", taken.raw)
	close(release)
	done := <-results
	assert.Contains(t, done.raw, "done: a", "the second retry gets the result")
	assert.EqualValues(t, 1, runs.Load())
}
