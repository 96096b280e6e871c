package interop_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The official Go SDK client at its default version (2026-07-28) against
// `mcp-actors serve --reference-tools`, with a client pinned to
// 2025-11-25 on the same endpoint at the same time: every input is asked
// once per call, whichever node a request lands on.

// modernCounts counts what a client is asked.
type modernCounts struct{ elicits, samples atomic.Int64 }

// connectModern connects a Go SDK client through rt at version (""
// its default, 2026-07-28), answering elicitation with the form's
// message, sampling with "sampled", roots with file:///interop.
func connectModern(t *testing.T, ctx context.Context, endpoint string, rt http.RoundTripper, version string, n *modernCounts) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "modern-interop", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			n.elicits.Add(1)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"username": r.Params.Message, "email": "e@example.com"}}, nil
		},
		CreateMessageHandler: func(_ context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			n.samples.Add(1)
			return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "sampled"}}, nil
		},
	})
	client.AddRoots(&mcp.Root{URI: "file:///interop", Name: "interop"})
	var opts *mcp.ClientSessionOptions
	if version != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: rt}}, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// modernCalls makes calls concurrent tool calls of the client features
// and checks each answer; it returns the elicitations and samplings the
// calls made.
func modernCalls(t *testing.T, ctx context.Context, cs *mcp.ClientSession, calls int) (elicit, sample int64) {
	t.Helper()
	var wg sync.WaitGroup
	var e, s atomic.Int64
	for i := range calls {
		wg.Go(func() {
			var name, want string
			var args map[string]any
			switch i % 4 {
			case 0:
				name, args, want = "test_elicitation", map[string]any{"message": fmt.Sprint("who-", i)}, fmt.Sprintf(`"username":"who-%d"`, i)
				e.Add(1)
			case 1:
				name, args, want = "test_sampling", map[string]any{"prompt": "p"}, "LLM response: sampled"
				s.Add(1)
			case 2:
				name, want = "test_roots", "file:///interop"
			default:
				name, args, want = "test_echo", map[string]any{"text": fmt.Sprint("echo-", i)}, fmt.Sprint("echo-", i)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
			if !assert.NoError(t, err, "%s #%d", name, i) {
				return
			}
			var b strings.Builder
			for _, c := range res.Content {
				if tc, ok := c.(*mcp.TextContent); ok {
					b.WriteString(tc.Text)
				}
			}
			assert.False(t, res.IsError, "%s #%d: %s", name, i, b.String())
			assert.Contains(t, b.String(), want, "%s #%d", name, i)
		})
	}
	wg.Wait()
	return e.Load(), s.Load()
}

// runModernAndLegacy runs a modern and a pinned legacy client at once
// through rt against endpoint.
func runModernAndLegacy(t *testing.T, endpoint string, rt http.RoundTripper) {
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	var modernN, legacyN modernCounts
	modern := connectModern(t, ctx, endpoint, rt, "", &modernN)
	legacy := connectModern(t, ctx, endpoint, rt, protocolVersion, &legacyN)
	assert.Equal(t, "2026-07-28", modern.InitializeResult().ProtocolVersion)
	assert.Empty(t, modern.ID(), "a modern client has no session")
	assert.Equal(t, protocolVersion, legacy.InitializeResult().ProtocolVersion)
	assert.NotEmpty(t, legacy.ID())
	var wg sync.WaitGroup
	for _, c := range []struct {
		cs *mcp.ClientSession
		n  *modernCounts
	}{{modern, &modernN}, {legacy, &legacyN}} {
		wg.Go(func() {
			e, s := modernCalls(t, ctx, c.cs, 24)
			assert.Equal(t, e, c.n.elicits.Load(), "each elicitation asked once")
			assert.Equal(t, s, c.n.samples.Load(), "each sampling asked once")
		})
	}
	wg.Wait()
}

func TestModernGoClient(t *testing.T) {
	srv := startServer(t)
	runModernAndLegacy(t, srv.url, http.DefaultTransport)
}

// TestClusterModernGoClient sends every HTTP request to the next of three
// nodes: each round's retry lands away from its continuation.
func TestClusterModernGoClient(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	nodes := startCluster(t)
	runModernAndLegacy(t, nodes[0].url, newRoundRobin(http.DefaultTransport, nodes))
}
