package reftools_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/messages"
)

// TestModernNothingLeft: a continuation whose client never retries costs
// nothing once its requestState expires, and a closed listen nothing once
// its client has gone: no goroutine, no actor, no registration is left.
func TestModernNothingLeft(t *testing.T) {
	before := goleak.IgnoreCurrent()
	url, srv := wireServerOf(t, &mcpactors.Options{RequestStateTTL: 50 * time.Millisecond}, nil, false)
	for i := range 5 {
		a := send(t, url, i, elicitCall("never answered", ""))
		require.Equal(t, "input_required", a.str("resultType"), a.raw)
	}
	assert.Equal(t, 5, srv.Parked())

	ctx, cancel := context.WithCancel(t.Context())
	c := wireCall{method: messages.MethodSubscriptionsListen, params: `{"notifications":{"toolsListChanged":true}}`}
	resp := openPost(t, ctx, url, 9, c)
	require.Eventually(t, func() bool { return srv.Listens() == 1 }, 5*time.Second, time.Millisecond)
	cancel()
	resp.Body.Close()

	require.Eventually(t, func() bool { return srv.Parked() == 0 && srv.Listens() == 0 }, 5*time.Second, 5*time.Millisecond,
		"expired continuations and closed listens are gone")
	http.DefaultClient.CloseIdleConnections()
	// What the server keeps while it runs is not left over by these
	// requests: the handler pool's idle workers (a handler still waiting
	// would show modernCall.input, not the pool's receive, on top), and
	// the test's HTTP listener and connections.
	goleak.VerifyNone(t, before,
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*goWorker).run.func1"),
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).purgeStaleWorkers"),
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).ticktock"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"))
}
