package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What the host answers, and what the checks in call.go expect back.
const (
	sampledText = "sampled text from the bench client"
	benchEmail  = "bench@example.com"
	rootA       = "file:///srv/bench/a"
	rootB       = "file:///srv/bench/b"
)

// host plays the application side of every client session: it answers the
// server's elicitation, sampling and roots requests the same way every time,
// counts them per session, and counts progress notifications per token.
type host struct {
	sessions sync.Map // *mcp.ClientSession -> *sessionCounters

	progMu   sync.Mutex
	progress map[string]int // progressToken -> notifications received; guarded by progMu
}

// sessionCounters count the server-to-client requests one session has
// answered, so that every call can be checked to have caused exactly one.
type sessionCounters struct {
	elicit, sample, roots atomic.Int64
}

func newHost() *host { return &host{progress: map[string]int{}} }

// counters returns the counters of s, or nil when s is not a client session.
func (h *host) counters(s mcp.Session) *sessionCounters {
	cs, ok := s.(*mcp.ClientSession)
	if !ok || cs == nil {
		return nil
	}
	if v, ok := h.sessions.Load(cs); ok {
		return v.(*sessionCounters)
	}
	v, _ := h.sessions.LoadOrStore(cs, &sessionCounters{})
	return v.(*sessionCounters)
}

// progressCount is how many progress notifications arrived for tok.
func (h *host) progressCount(tok string) int {
	h.progMu.Lock()
	defer h.progMu.Unlock()
	return h.progress[tok]
}

// progressToken names the progress of call i on session sess. Warm-up calls
// have negative i, so their notifications never mix with measured ones.
func progressToken(sess, i int) string { return fmt.Sprintf("p-%d-%d", sess, i) }

// newClient returns a go-sdk client whose handlers answer as the host.
func (h *host) newClient() *mcp.Client {
	c := mcp.NewClient(&mcp.Implementation{Name: "bench-load", Version: "v0.0.1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if sc := h.counters(req.Session); sc != nil {
				sc.elicit.Add(1)
			}
			return &mcp.ElicitResult{Action: "accept", Content: fillForm(req.Params.RequestedSchema)}, nil
		},
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			if sc := h.counters(req.Session); sc != nil {
				sc.sample.Add(1)
			}
			return &mcp.CreateMessageResult{
				Model:   "bench-model",
				Role:    "assistant",
				Content: &mcp.TextContent{Text: sampledText},
			}, nil
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			tok := fmt.Sprint(req.Params.ProgressToken)
			h.progMu.Lock()
			h.progress[tok]++
			h.progMu.Unlock()
		},
	})
	c.AddRoots(&mcp.Root{URI: rootA, Name: "a"}, &mcp.Root{URI: rootB, Name: "b"})
	// The SDK answers roots/list itself; count it on the way in.
	c.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "roots/list" {
				if sc := h.counters(req.GetSession()); sc != nil {
					sc.roots.Add(1)
				}
			}
			return next(ctx, method, req)
		}
	})
	return c
}
