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

// TestLockedThreadIsNotReused checks the rule handler goroutines ask of
// handlers (handler_goroutines.go, README): work that changes its OS
// thread (its namespace or credentials, say) runs on a goroutine of its
// own that locks the thread and ends locked, so the thread goes with it
// and no other handler, on a reused goroutine or not, ever runs there.
func TestLockedThreadIsNotReused(t *testing.T) {
	srv := mcpactors.NewServer(messages.Implementation{Name: "threads", Version: "1"}, nil)
	for _, name := range []string{"lock", "tid"} {
		lock := name == "lock"
		require.NoError(t, srv.AddTool(&messages.Tool{Name: name},
			func(context.Context, *mcpactors.Session, *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
				tid := syscall.Gettid()
				if lock {
					done := make(chan int)
					go func() { // owned by the handler, which waits for it
						runtime.LockOSThread() // and never unlocked: the thread ends with the goroutine
						done <- syscall.Gettid()
					}()
					tid = <-done
				}
				return &messages.CallToolResult{Content: messages.ContentList{
					&messages.TextContent{Text: strconv.Itoa(tid)}}}, nil
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
