package session_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/actors/session"
	"github.com/mcp-actors/mcp-actors/harness"
	"github.com/mcp-actors/mcp-actors/messages"
)

func TestRootsCacheAndListeners(t *testing.T) {
	ctx := context.Background()
	fired := make(chan string, 16)
	srv := newServer(t, func(ctx context.Context, s *mcpactors.Session, req *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
		var args struct {
			Op string `json:"op"`
		}
		_ = jsonUnmarshal(req.Arguments, &args)
		switch args.Op {
		case "listen":
			s.OnRootsChanged(func(ctx context.Context, s *mcpactors.Session) { fired <- "first" })
			unregister := s.OnRootsChanged(func(ctx context.Context, s *mcpactors.Session) { fired <- "removed" })
			s.OnRootsChanged(func(ctx context.Context, s *mcpactors.Session) {
				roots, err := s.ListRoots(ctx)
				if err == nil {
					fired <- "second:" + roots[0].URI
				}
			})
			unregister()
			return text("listening"), nil
		case "fresh":
			roots, err := s.ListRoots(ctx, mcpactors.FreshRoots())
			if err != nil {
				return nil, err
			}
			return text(roots[0].URI), nil
		}
		roots, err := s.ListRoots(ctx)
		if err != nil {
			return nil, err
		}
		return text(roots[0].URI), nil
	})
	var mu sync.Mutex
	current := "file:///one"
	c := harness.New(t, srv).Connect(harness.WithRoots(func() []*messages.Root {
		mu.Lock()
		defer mu.Unlock()
		return []*messages.Root{{URI: current, Name: "root"}}
	}))
	countLists := func() int {
		n := 0
		for _, m := range methods(c) {
			if m == messages.MethodListRoots {
				n++
			}
		}
		return n
	}

	assert.Equal(t, "file:///one", callRun(t, c, nil))
	assert.Equal(t, "file:///one", callRun(t, c, nil))
	assert.Equal(t, 1, countLists(), "the second ListRoots is served from the cache")
	assert.Equal(t, "file:///one", callRun(t, c, map[string]string{"op": "fresh"}))
	assert.Equal(t, 2, countLists(), "FreshRoots bypasses the cache")

	assert.Equal(t, "listening", callRun(t, c, map[string]string{"op": "listen"}))
	mu.Lock()
	current = "file:///two"
	mu.Unlock()
	c.Notify(messages.MethodRootsListChanged, nil)
	assert.Equal(t, "first", <-fired, "listeners run in registration order")
	assert.Equal(t, "second:file:///two", <-fired, "the cache was dropped: the listener sees the new roots")
	assert.Equal(t, "file:///two", callRun(t, c, nil))
	_, err := c.Call(ctx, messages.MethodPing, nil)
	require.NoError(t, err)
	assert.Empty(t, fired, "an unregistered listener does not run")
}

func TestCapabilityChecks(t *testing.T) {
	type form struct {
		Name string `json:"name"`
	}
	errs := make(chan error, 1)
	srv := newServer(t, func(ctx context.Context, s *mcpactors.Session, req *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
		var args struct {
			Op string `json:"op"`
		}
		_ = jsonUnmarshal(req.Arguments, &args)
		var err error
		switch args.Op {
		case "roots":
			_, err = s.ListRoots(ctx)
		case "sampling":
			_, err = s.CreateMessage(ctx, &messages.CreateMessageParams{MaxTokens: 1})
		case "sampling.tools":
			_, err = s.CreateMessage(ctx, &messages.CreateMessageParams{MaxTokens: 1, Tools: []*messages.Tool{{Name: "t"}}})
		case "elicitation.form":
			_, err = s.Elicit(ctx, "who?", &form{})
		case "elicitation.url":
			_, err = s.ElicitForm(ctx, &messages.ElicitParams{Mode: "url", Message: "go", URL: "https://example.com", ElicitationID: "e1"})
		}
		errs <- err
		return text("checked"), nil
	})
	h := harness.New(t, srv)
	for _, tc := range []struct {
		op   string
		caps messages.ClientCapabilities
	}{
		{"roots", messages.ClientCapabilities{}},
		{"sampling", messages.ClientCapabilities{}},
		{"sampling.tools", messages.ClientCapabilities{Sampling: &messages.SamplingCapabilities{}}},
		{"elicitation.form", messages.ClientCapabilities{Elicitation: &messages.ElicitationCapabilities{URL: &messages.Empty{}}}},
		{"elicitation.url", messages.ClientCapabilities{Elicitation: &messages.ElicitationCapabilities{}}},
	} {
		t.Run(tc.op, func(t *testing.T) {
			c := h.Connect(harness.WithCapabilities(tc.caps))
			assert.Equal(t, "checked", callRun(t, c, map[string]string{"op": tc.op}))
			err := <-errs
			require.ErrorIs(t, err, session.ErrCapability)
			assert.Contains(t, err.Error(), tc.op)
			for _, m := range methods(c) {
				assert.NotContains(t, []string{messages.MethodListRoots, messages.MethodCreateMessage, messages.MethodElicit}, m, "nothing is sent")
			}
		})
	}
}
