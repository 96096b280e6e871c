package harness_test

import (
	"context"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-actors/mcp-actors/harness"
	"github.com/mcp-actors/mcp-actors/internal/access"
	"github.com/mcp-actors/mcp-actors/messages"
)

// TestClusterThousandSessions opens 1,000 sessions on a three-node
// in-process cluster, session i through node i%3 (which owns it), and
// drives them 32 at a time with every later message (requests,
// notifications, the client's answers to server-to-client requests, the
// close) sent through a node drawn at random: the handshake, an echo of a
// text only that session knows, an elicitation and a sampling request
// whose answers name the session. Every answer is checked, and at the end
// each session has exactly one owner, the node it was opened on.
//
// The node of each message is a function of the seed, the session and the
// message's number, so a failure replays with CLUSTER_SPREAD_SEED set to
// the seed the test logs.
func TestClusterThousandSessions(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster and drives 1,000 sessions")
	}
	const (
		sessions = 1000
		nodes    = 3
		workers  = 32
		maxFails = 20 // failures reported before the test gives up
	)
	seed := rand.Uint64()
	if s := os.Getenv("CLUSTER_SPREAD_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("CLUSTER_SPREAD_SEED=%q: %v", s, err)
		}
	}
	t.Logf("seed %d (replay with CLUSTER_SPREAD_SEED=%d)", seed, seed)

	cl := harness.NewCluster(t, nodes, newTestServer)
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	// via[k] counts the messages sent through node k after the opens;
	// routed those that went through a node other than the owner.
	var via [nodes]atomic.Int64
	var routed atomic.Int64
	picker := func(i int) func(n uint64, nodes int) int {
		return func(n uint64, nodes int) int {
			if n == 0 {
				return i % nodes // the open: node i%3 owns the session
			}
			k := rand.New(rand.NewPCG(seed, uint64(i)<<32|n)).IntN(nodes)
			via[k].Add(1)
			if k != i%nodes {
				routed.Add(1)
			}
			return k
		}
	}

	var fails atomic.Int64
	fail := func(i int, c *harness.Client, format string, args ...any) {
		if n := fails.Add(1); n <= maxFails {
			t.Errorf("session %d (%s, opened on node %d): %s", i, c.ID(), i%nodes, fmt.Sprintf(format, args...))
			if n == maxFails {
				t.Errorf("%d failures: giving up", n)
				cancel()
			}
		}
	}

	type job struct {
		i int
		c *harness.Client
	}
	clients := make([]*harness.Client, sessions)
	jobs := make(chan job)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for j := range jobs {
				if ctx.Err() == nil {
					drive(ctx, j.i, j.c, fail)
				}
			}
		})
	}
	// Sessions are opened here, on the test's goroutine (Cluster.Open
	// fails the test with Fatalf), while the workers drive those opened
	// before.
	for i := range sessions {
		c := cl.Open(
			harness.WithNodes(picker(i)),
			harness.WithElicitation(func(p *messages.ElicitParams) (*messages.ElicitResult, error) {
				return &messages.ElicitResult{Action: messages.ElicitAccept,
					Content: jsontext.Value(fmt.Sprintf(`{"name":"s%d"}`, i))}, nil
			}),
			harness.WithSampling(func(p *messages.CreateMessageParams) (*messages.CreateMessageResult, error) {
				prompt := ""
				if len(p.Messages) == 1 && len(p.Messages[0].Content) == 1 {
					if tc, ok := p.Messages[0].Content[0].(*messages.TextContent); ok {
						prompt = tc.Text
					}
				}
				return &messages.CreateMessageResult{Role: messages.RoleAssistant, Model: fmt.Sprintf("m%d", i),
					Content: messages.ContentList{&messages.TextContent{Text: "re: " + prompt}}}, nil
			}),
		)
		clients[i] = c
		select {
		case jobs <- job{i, c}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	close(jobs)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		t.Fatalf("after %v, %d failures: %v", time.Since(start).Round(time.Millisecond), fails.Load(), err)
	}
	if n := fails.Load(); n > 0 {
		t.Fatalf("%d of %d sessions failed", n, sessions)
	}
	driven := time.Since(start)

	// Each session has one owner, the node it was opened through, whose ID
	// the session's names.
	var owned [nodes]int
	for i, c := range clients {
		owner := -1
		for k, srv := range cl.Servers {
			if _, ok := access.Session(srv, c.ID()); ok {
				if owner != -1 {
					t.Errorf("session %d (%s) is on nodes %d and %d", i, c.ID(), owner, k)
				}
				owner = k
			}
		}
		switch {
		case owner == -1:
			t.Errorf("session %d (%s) is on no node", i, c.ID())
		case owner != i%nodes:
			t.Errorf("session %d (%s) was opened on node %d but is on node %d", i, c.ID(), i%nodes, owner)
		default:
			owned[owner]++
		}
		if want := cl.Nodes[i%nodes].ID() + "."; !strings.HasPrefix(c.ID(), want) {
			t.Errorf("session %d: ID %q does not name its node (%q)", i, c.ID(), want)
		}
	}
	for k, n := range owned {
		if want := sessions/nodes + btoi(k < sessions%nodes); n != want {
			t.Errorf("node %d owns %d sessions, want %d", k, n, want)
		}
	}

	// Close them all, as many at a time as they were driven: each end
	// reaches the client's standalone stream on the owner.
	closing := make(chan *harness.Client)
	var cwg sync.WaitGroup
	var unended atomic.Int64
	for range workers {
		cwg.Go(func() {
			for c := range closing {
				c.Close()
				select {
				case <-c.Done():
				default:
					unended.Add(1)
				}
			}
		})
	}
	for _, c := range clients {
		closing <- c
	}
	close(closing)
	cwg.Wait()
	if n := unended.Load(); n > 0 {
		t.Errorf("%d sessions did not end when closed", n)
	}
	t.Logf("%d sessions driven in %v, closed in %v; messages through the nodes %d/%d/%d, %d of them routed to another owner; owned %v",
		sessions, driven.Round(time.Millisecond), (time.Since(start) - driven).Round(time.Millisecond),
		via[0].Load(), via[1].Load(), via[2].Load(), routed.Load(), owned)
}

// drive runs session i's exchange: the handshake, an echo, an elicitation
// and a sampling request, each answer checked.
func drive(ctx context.Context, i int, c *harness.Client, fail func(int, *harness.Client, string, ...any)) {
	if err := c.Initialize(ctx); err != nil {
		fail(i, c, "%v", err)
		return
	}
	if v := c.InitializeResult.ProtocolVersion; v != messages.LatestVersion {
		fail(i, c, "initialize: protocol version %q, want %q", v, messages.LatestVersion)
	}

	want := fmt.Sprintf("echo %d %s", i, c.ID())
	if got, err := callText(ctx, c, messages.StringID(fmt.Sprintf("echo-%d", i)), "echo", map[string]string{"text": want}); err != nil {
		fail(i, c, "echo: %v", err)
		return
	} else if got != want {
		fail(i, c, "echo: got %q, want %q", got, want)
	}

	// The handler asks the client on the stream of the tools/call, which
	// the node that call went through holds; the answer goes back through
	// another node picked at random.
	id := messages.StringID(fmt.Sprintf("ask-user-%d", i))
	want = fmt.Sprintf(`action=accept content={"name":"s%d"}`, i)
	if got, err := callText(ctx, c, id, "ask_user", nil); err != nil {
		fail(i, c, "ask_user: %v", err)
		return
	} else if got != want {
		fail(i, c, "ask_user: got %q, want %q", got, want)
	}
	var asked int
	for _, r := range c.Received() {
		if r.Msg != nil && r.Msg.Kind() == messages.KindRequest && r.Msg.Method == messages.MethodElicit {
			asked++
			if r.Stream != id.Raw() {
				fail(i, c, "elicitation/create came on stream %q, want the tools/call's (%s)", r.Stream, id.Raw())
			}
		}
	}
	if asked != 1 {
		fail(i, c, "%d elicitation/create requests, want 1", asked)
	}

	want = fmt.Sprintf("m%d: re: prompt %d", i, i)
	if got, err := callText(ctx, c, messages.StringID(fmt.Sprintf("ask-llm-%d", i)), "ask_llm", map[string]string{"prompt": fmt.Sprintf("prompt %d", i)}); err != nil {
		fail(i, c, "ask_llm: %v", err)
	} else if got != want {
		fail(i, c, "ask_llm: got %q, want %q", got, want)
	}
}

// callText calls a tool with request ID id and returns the text of its
// one-block result; a JSON-RPC error or a tool error is an error.
func callText(ctx context.Context, c *harness.Client, id messages.ID, tool string, args any) (string, error) {
	if err := c.SendRequest(id, messages.MethodCallTool, callTool(tool, args)); err != nil {
		return "", err
	}
	r, err := c.WaitResponse(ctx, id, 0)
	if err != nil {
		return "", err
	}
	if r.Msg.Error != nil {
		return "", r.Msg.Error
	}
	var res messages.CallToolResult
	if err := json.Unmarshal(r.Msg.Result, &res); err != nil {
		return "", fmt.Errorf("decoding the result: %w", err)
	}
	if len(res.Content) != 1 {
		return "", fmt.Errorf("%d content blocks, want 1: %s", len(res.Content), r.Msg.Result)
	}
	tc, ok := res.Content[0].(*messages.TextContent)
	if !ok {
		return "", fmt.Errorf("content is %T, want text: %s", res.Content[0], r.Msg.Result)
	}
	if res.IsError {
		return "", fmt.Errorf("tool error: %s", tc.Text)
	}
	return tc.Text, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
