//go:build linux

package mcpactors_test

import (
	"context"
	"runtime"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/harness"
	"github.com/mcp-actors/mcp-actors/messages"
)

// TestLockedThreadIsNotReused checks that, with
// Options.FreshHandlerGoroutines, a handler that locks its OS thread and
// returns without unlocking it (a library that changes the thread's
// namespace or credentials might) does not hand that thread to other
// handlers: each handler runs on a goroutine of its own, and a goroutine
// that ends locked takes its thread with it.
func TestLockedThreadIsNotReused(t *testing.T) {
	srv := mcpactors.NewServer(messages.Implementation{Name: "threads", Version: "1"},
		&mcpactors.Options{FreshHandlerGoroutines: true})
	for _, name := range []string{"lock", "tid"} {
		lock := name == "lock"
		require.NoError(t, srv.AddTool(&messages.Tool{Name: name},
			func(context.Context, *mcpactors.Session, *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
				if lock {
					runtime.LockOSThread() // and never unlocked
				}
				return &messages.CallToolResult{Content: messages.ContentList{
					&messages.TextContent{Text: strconv.Itoa(syscall.Gettid())}}}, nil
			}))
	}
	h := harness.New(t, srv)
	ctx := context.Background()
	call := func(c *harness.Client, tool string) string {
		var res messages.CallToolResult
		require.NoError(t, c.CallResult(ctx, messages.MethodCallTool, map[string]any{"name": tool}, &res))
		return res.Content[0].(*messages.TextContent).Text
	}
	locker, other := h.Connect(), h.Connect()
	locked := map[string]bool{}
	for range 20 {
		locked[call(locker, "lock")] = true
	}
	for i := range 500 {
		tid := call(other, "tid")
		assert.False(t, locked[tid], "call %d ran on thread %s, which a handler left locked", i, tid)
	}
}
