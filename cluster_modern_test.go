package mcpactors_test

import (
	"context"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"fmt"
	"net/http"
	"net/url"
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

// Protocol 2026-07-28 across a cluster: every POST goes to the next node,
// so each retry lands away from the continuation it resumes.

// rotating sends each request to the next of urls, and records which.
type rotating struct {
	urls []string
	next atomic.Int64
	mu   sync.Mutex
	sent []int // the node of each request
	skip func(int) bool
}

func (r *rotating) RoundTrip(req *http.Request) (*http.Response, error) {
	var i int
	for {
		i = int(r.next.Add(1)-1) % len(r.urls)
		if r.skip == nil || !r.skip(i) {
			break
		}
	}
	u, _ := url.Parse(r.urls[i])
	req = req.Clone(req.Context())
	req.URL.Host, req.Host = u.Host, u.Host
	r.mu.Lock()
	r.sent = append(r.sent, i)
	r.mu.Unlock()
	return http.DefaultTransport.RoundTrip(req)
}

// chainTool asks the user, then samples with the answer; runs counts its
// runs.
func chainTool(runs *atomic.Int64) func(*mcpactors.Server) {
	return func(srv *mcpactors.Server) {
		def := &messages.Tool{Name: "chain", Description: "asks, then samples", InputSchema: []byte(`{"type":"object","properties":{}}`)}
		if err := srv.AddTool(def, func(ctx context.Context, sess *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			runs.Add(1)
			var a struct {
				Answer string `json:"answer"`
			}
			if _, err := sess.Elicit(ctx, "name?", &a); err != nil {
				return nil, err
			}
			res, err := sess.CreateMessage(ctx, &messages.CreateMessageParams{MaxTokens: 10,
				Messages: []*messages.SamplingMessage{{Role: messages.RoleUser, Content: messages.ContentList{&messages.TextContent{Text: a.Answer}}}}})
			if err != nil {
				return nil, err
			}
			return &messages.CallToolResult{Content: messages.ContentList{&messages.TextContent{Text: a.Answer + "/" + res.Content[0].(*messages.TextContent).Text}}}, nil
		}); err != nil {
			panic(err)
		}
	}
}

// modernClient connects the Go SDK client (2026-07-28) through rt; between
// rounds, before answering an elicitation, it calls between.
func modernClient(t *testing.T, rt http.RoundTripper, elicits, samples *atomic.Int64, between func()) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "cluster-modern", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			elicits.Add(1)
			if between != nil {
				between()
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "ada"}}, nil
		},
		CreateMessageHandler: func(_ context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			samples.Add(1)
			return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "sampled"}}, nil
		},
	})
	ctx, cancel := context.WithTimeout(t.Context(), httpWait)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://placeholder/mcp", HTTPClient: &http.Client{Transport: rt}}, nil)
	require.NoError(t, err)
	require.Equal(t, messages.Version20260728, cs.InitializeResult().ProtocolVersion)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func callText(t *testing.T, cs *mcp.ClientSession, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), httpWait)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name})
	require.NoError(t, err)
	require.Len(t, res.Content, 1)
	return res.Content[0].(*mcp.TextContent).Text
}

// TestModernAcrossNodes: each round's retry lands on another node, is
// forwarded to the continuation's, and the answer comes back on the
// retry's own stream; the handler runs once, each input is asked once.
func TestModernAcrossNodes(t *testing.T) {
	var runs, elicits, samples atomic.Int64
	c := startHTTPCluster(t, 3, "modern-across", chainTool(&runs), nil)
	rt := &rotating{urls: c.urls}
	cs := modernClient(t, rt, &elicits, &samples, nil)
	for range 3 {
		assert.Equal(t, "ada/sampled", callText(t, cs, "chain"))
	}
	assert.EqualValues(t, 3, runs.Load(), "one run per call: the retries reached their continuations")
	assert.EqualValues(t, 3, elicits.Load())
	assert.EqualValues(t, 3, samples.Load())
	rt.mu.Lock()
	defer rt.mu.Unlock()
	assert.Len(t, rt.sent, 1+3*3, "discover, then three POSTs per call")
}

// TestModernOwnerKilled kills the node that holds a call's continuation
// between its two rounds: the retry lands on a survivor, which runs the
// handler again from the journal in requestState — the question is not
// asked twice — and finishes the call there.
func TestModernOwnerKilled(t *testing.T) {
	var runs, elicits, samples atomic.Int64
	c := startHTTPCluster(t, 3, "modern-killed", chainTool(&runs), nil)
	rt := &rotating{urls: c.urls}
	var dead atomic.Int64
	dead.Store(-1)
	rt.skip = func(i int) bool { return int64(i) == dead.Load() }
	var once sync.Once
	cs := modernClient(t, rt, &elicits, &samples, func() {
		once.Do(func() {
			rt.mu.Lock()
			owner := rt.sent[len(rt.sent)-1] // the node that ran the call
			rt.mu.Unlock()
			dead.Store(int64(owner))
			c.crash(owner)
		})
	})
	assert.Equal(t, "ada/sampled", callText(t, cs, "chain"))
	assert.EqualValues(t, 2, runs.Load(), "run again once, on a survivor")
	assert.EqualValues(t, 1, elicits.Load(), "the question was asked once")
	assert.EqualValues(t, 1, samples.Load())
}

// TestModernParkingBoundAcrossNodes: with no handler kept between rounds,
// each retry — on another node — runs the handler again from the journal:
// three runs for two rounds, each input asked once.
func TestModernParkingBoundAcrossNodes(t *testing.T) {
	var runs, elicits, samples atomic.Int64
	c := startHTTPClusterWith(t, 3, "modern-unparked", chainTool(&runs), nil, &mcpactors.Options{MaxParked: -1})
	cs := modernClient(t, &rotating{urls: c.urls}, &elicits, &samples, nil)
	assert.Equal(t, "ada/sampled", callText(t, cs, "chain"))
	assert.EqualValues(t, 3, runs.Load())
	assert.EqualValues(t, 1, elicits.Load())
	assert.EqualValues(t, 1, samples.Load())
}

// TestModernListenAcrossNodes: listens on two nodes, a change made on a
// third: each listen gets it once, tagged with its subscription.
func TestModernListenAcrossNodes(t *testing.T) {
	var runs atomic.Int64
	c := startHTTPCluster(t, 3, "modern-listen", chainTool(&runs), nil)
	streams := []func() string{listenOn(t, c.urls[1], 5), listenOn(t, c.urls[2], 6)}
	for i, next := range streams {
		assert.Contains(t, next(), `"method":"notifications/subscriptions/acknowledged"`, "listen %d", i)
	}
	ctx, cancel := context.WithTimeout(t.Context(), httpWait)
	defer cancel()
	_, err := c.servers[0].ToggleTool(ctx, "chain")
	require.NoError(t, err)
	c.servers[0].NotifyResourceUpdated("test://sentinel")
	for i, next := range streams {
		id := `"io.modelcontextprotocol/subscriptionId":` + []string{"5", "6"}[i]
		var got []string
		for range 2 { // the two changes, in whatever order they reach the node
			m := next()
			assert.Contains(t, m, id, "listen %d", i)
			switch {
			case strings.Contains(m, `"method":"notifications/tools/list_changed"`):
				got = append(got, "tools")
			case strings.Contains(m, `"method":"notifications/resources/updated"`):
				got = append(got, "resource")
			}
		}
		assert.ElementsMatch(t, []string{"tools", "resource"}, got, "listen %d: each change once", i)
	}
}

// listenOn opens subscriptions/listen for tool list changes and the
// resource test://sentinel on url, and returns a reader of its messages.
func listenOn(t *testing.T, url string, id int) func() string {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	body := `{"jsonrpc":"2.0","id":` + fmt.Sprint(id) + `,"method":"subscriptions/listen","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"notifications":{"toolsListChanged":true,"resourceSubscriptions":["test://sentinel"]}}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", messages.Version20260728)
	req.Header.Set("Mcp-Method", messages.MethodSubscriptionsListen)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	require.Equal(t, http.StatusOK, resp.StatusCode)
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		_ = sse.Each(resp.Body, func(ev sse.Event) {
			if ev.HasData {
				lines <- string(ev.Data)
			}
		})
	}()
	return func() string {
		select {
		case l := <-lines:
			return l
		case <-time.After(httpWait):
			t.Fatal("no message on the listen stream")
			return ""
		}
	}
}

// connectAccountTool sends the user to a page (URL elicitation); runs
// counts its runs, when set.
func connectAccountTool(runs *atomic.Int64) func(*mcpactors.Server) {
	return func(srv *mcpactors.Server) {
		def := &messages.Tool{Name: "connect_account", Description: "sends the user to a page", InputSchema: []byte(`{"type":"object","properties":{}}`)}
		if err := srv.AddTool(def, func(ctx context.Context, sess *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			if runs != nil {
				runs.Add(1)
			}
			action, err := sess.ElicitURL(ctx, "Connect", func(id string) string { return "https://example.test/connect?id=" + id })
			if err != nil {
				return nil, err
			}
			return &messages.CallToolResult{Content: messages.ContentList{&messages.TextContent{Text: "connected: " + string(action)}}}, nil
		}); err != nil {
			panic(err)
		}
	}
}

// TestElicitURLCompletionReadAfterRestart: a URL elicitation's step is
// done, then a node restarts, forgetting what it heard; the retry lands
// there (no handler kept between rounds: it runs again from the journal)
// and reads the completion from the cluster's storage, rather than waiting
// for it and asking the user again.
func TestElicitURLCompletionReadAfterRestart(t *testing.T) {
	var runs atomic.Int64
	c := startHTTPClusterWith(t, 3, "modern-url-restart", connectAccountTool(&runs), nil,
		&mcpactors.Options{MaxParked: -1, URLElicitationWait: 3 * time.Second})
	const caps = `{"elicitation":{"url":{}}}`
	first := postModern(t, c.urls[0], 1, "connect_account", caps, "", "")
	require.Equal(t, "input_required", first.Result.ResultType)
	require.Len(t, first.Result.InputRequests, 1)
	var key, id string
	for k, v := range first.Result.InputRequests {
		var ir struct {
			Params struct {
				Mode string `json:"mode"`
				URL  string `json:"url"`
			} `json:"params"`
		}
		require.NoError(t, json.Unmarshal(v, &ir))
		require.Equal(t, "url", ir.Params.Mode)
		u, err := url.Parse(ir.Params.URL)
		require.NoError(t, err)
		key, id = k, u.Query().Get("id")
	}
	require.NotEmpty(t, id)

	ctx, cancel := context.WithTimeout(t.Context(), httpWait)
	defer cancel()
	require.NoError(t, c.servers[2].CompleteElicitation(ctx, "", id))
	c.crash(1)
	c.restart(1)
	done := postModern(t, c.urls[1], 2, "connect_account", caps, first.Result.RequestState, `{"`+key+`":{"action":"accept"}}`)
	require.Nil(t, done.Error)
	require.Equal(t, "complete", done.Result.ResultType, "the restarted node read the completion: the user is not asked again")
	assert.Equal(t, "connected: accept", done.Result.Content[0].Text)
	assert.EqualValues(t, 2, runs.Load(), "run once per round, the second time from the journal")
}

// TestElicitURLAcrossNodes: the page's callback completes a URL
// elicitation on a third node; the handler, on another, goes on.
func TestElicitURLAcrossNodes(t *testing.T) {
	c := startHTTPCluster(t, 3, "modern-url", connectAccountTool(nil), nil)
	var asked atomic.Int64
	client := mcp.NewClient(&mcp.Implementation{Name: "url", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(ctx context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			u, err := url.Parse(r.Params.URL)
			require.NoError(t, err)
			require.NoError(t, c.servers[2].CompleteElicitation(ctx, "", u.Query().Get("id")))
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	})
	ctx, cancel := context.WithTimeout(t.Context(), httpWait)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://placeholder/mcp", HTTPClient: &http.Client{Transport: &rotating{urls: c.urls}}}, nil)
	require.NoError(t, err)
	defer cs.Close()
	assert.Equal(t, "connected: accept", callText(t, cs, "connect_account"))
	assert.EqualValues(t, 1, asked.Load())
}

// TestModernJournalSpill: answers too large to ride in requestState are
// kept in the cluster's storage; with no handler kept between rounds,
// each retry, on another node, runs the handler again from the journal
// read back from there, and asks nothing twice.
func TestModernJournalSpill(t *testing.T) {
	var runs atomic.Int64
	c := startHTTPClusterWith(t, 3, "modern-spill", func(srv *mcpactors.Server) {
		def := &messages.Tool{Name: "three_questions", Description: "asks three times", InputSchema: []byte(`{"type":"object","properties":{}}`)}
		if err := srv.AddTool(def, func(ctx context.Context, sess *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			runs.Add(1)
			var got []string
			for i := range 3 {
				var a struct {
					Answer string `json:"answer"`
				}
				if _, err := sess.Elicit(ctx, fmt.Sprint("question ", i), &a); err != nil {
					return nil, err
				}
				got = append(got, fmt.Sprint(len(a.Answer)))
			}
			return &messages.CallToolResult{Content: messages.ContentList{&messages.TextContent{Text: strings.Join(got, ",")}}}, nil
		}); err != nil {
			panic(err)
		}
	}, nil, &mcpactors.Options{MaxParked: -1, JournalSpillBytes: 1024})
	big := strings.Repeat("x", 4000) // each answer alone is over the spill bound
	state, answers := "", ""
	for round := range 4 {
		out := postModernTool(t, c.urls[round%3], round, "three_questions", state, answers)
		if round == 3 {
			require.Equal(t, "complete", out.Result.ResultType)
			assert.Equal(t, "4000,4000,4000", out.Result.Content[0].Text, "every answer reached the handler")
			break
		}
		require.Equal(t, "input_required", out.Result.ResultType, "round %d", round)
		require.Len(t, out.Result.InputRequests, 1, "one new question per round: none asked twice")
		assert.Less(t, len(out.Result.RequestState), 2000, "round %d: the journal (%d bytes of answers) is not in requestState", round, 4000*round)
		state = out.Result.RequestState
		for key := range out.Result.InputRequests {
			answers = `{"` + key + `":{"action":"accept","content":{"answer":"` + big + `"}}}`
		}
	}
	assert.EqualValues(t, 4, runs.Load(), "run again from the journal after each round")
}

// modernToolAnswer is the answer to a 2026-07-28 tools/call, as far as
// the tests read it.
type modernToolAnswer struct {
	Result struct {
		ResultType    string                    `json:"resultType"`
		RequestState  string                    `json:"requestState"`
		InputRequests map[string]jsontext.Value `json:"inputRequests"`
		Content       []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"result"`
	Error *messages.Error `json:"error"`
}

// postModernTool sends a 2026-07-28 tools/call of tool to url, as a retry
// when state is set (answers being its inputResponses), and returns the
// answer.
func postModernTool(t *testing.T, url string, id int, tool, state, answers string) modernToolAnswer {
	t.Helper()
	return postModern(t, url, id, tool, `{"elicitation":{},"sampling":{}}`, state, answers)
}

// postModern is postModernTool from a client declaring caps.
func postModern(t *testing.T, url string, id int, tool, caps, state, answers string) modernToolAnswer {
	t.Helper()
	params := `{"name":"` + tool + `","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientCapabilities":` + caps + `}`
	if state != "" {
		params += `,"requestState":"` + state + `","inputResponses":` + answers
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}}`, id, params)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out modernToolAnswer
	require.NoError(t, json.UnmarshalRead(resp.Body, &out))
	return out
}

// TestModernAnsweredRoundRefusedAfterOwnerLost: with
// SingleUseRequestState, the last round of a call answered, the
// continuation's node is lost; the same retry again, on a survivor, is
// refused (the cluster recorded the answer) rather than running the
// handler a second time.
func TestModernAnsweredRoundRefusedAfterOwnerLost(t *testing.T) {
	var runs atomic.Int64
	c := startHTTPClusterWith(t, 3, "modern-answered", chainTool(&runs), nil, &mcpactors.Options{SingleUseRequestState: true})
	first := postModernTool(t, c.urls[0], 1, "chain", "", "")
	require.Equal(t, "input_required", first.Result.ResultType)
	elicited := postModernTool(t, c.urls[1], 2, "chain", first.Result.RequestState,
		`{"elicitation-1":{"action":"accept","content":{"answer":"ada"}}}`)
	require.Equal(t, "input_required", elicited.Result.ResultType, "the sampling round")
	var key string
	for k := range elicited.Result.InputRequests {
		key = k
	}
	last := `{"` + key + `":{"role":"assistant","model":"m","content":{"type":"text","text":"sampled"}}}`
	done := postModernTool(t, c.urls[2], 3, "chain", elicited.Result.RequestState, last)
	require.Equal(t, "complete", done.Result.ResultType)
	require.Equal(t, "ada/sampled", done.Result.Content[0].Text)

	again := postModernTool(t, c.urls[1], 4, "chain", elicited.Result.RequestState, last)
	require.NotNil(t, again.Error, "the node that answered refuses a replay")
	assert.EqualValues(t, messages.CodeInvalidParams, again.Error.Code)

	c.crash(0) // the continuation's node
	replay := postModernTool(t, c.urls[2], 5, "chain", elicited.Result.RequestState, last)
	require.NotNil(t, replay.Error, "a survivor refuses it too: %+v", replay.Result)
	assert.EqualValues(t, messages.CodeInvalidParams, replay.Error.Code)
	assert.Contains(t, replay.Error.Message, "answered already")
	assert.EqualValues(t, 1, runs.Load(), "the handler ran once")
}
