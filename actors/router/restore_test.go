package router_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/actors/router"
	"github.com/mcp-actors/mcp-actors/actors/session"
	"github.com/mcp-actors/mcp-actors/internal/access"
	"github.com/mcp-actors/mcp-actors/messages"
)

// TestLocalConcurrentRestores: many restores of one session at once —
// as concurrent messages for a session taken over do — start it once,
// while the server broadcasts to every open session: no broadcast reaches
// a session before its actor runs, and closing one run of the session
// never removes the next one. Run it with -race -count=50.
func TestLocalConcurrentRestores(t *testing.T) {
	srv := newServer(t, nil)
	local, ok := access.Router(srv).(*router.Local)
	require.True(t, ok, "a server on its own routes through a Local")
	restored := func() router.OpenOptions {
		return router.OpenOptions{Principal: "p", Resumable: true,
			Restore: &session.State{ProtocolVersion: messages.Version20251125, Subscriptions: []string{"test://r"}}}
	}

	stop := make(chan struct{})
	var broadcasts sync.WaitGroup
	broadcasts.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				srv.NotifyResourceUpdated("test://r") // reaches every open session subscribed
			}
		}
	})
	defer func() {
		close(stop)
		broadcasts.Wait()
	}()

	for round := range 3 {
		var restores sync.WaitGroup
		for range 8 {
			restores.Go(func() { assert.NoError(t, local.Restore("s1", restored())) })
		}
		restores.Wait()
		require.Equal(t, 1, local.Len(), "round %d: restored once", round)
		ref, ok := local.Session("s1")
		require.True(t, ok)
		require.NotNil(t, ref.PID(), "round %d: the session's actor runs", round)

		// Closed for handover, then restored again at once: the closing
		// run's end removes nothing of the new one.
		ref.Send(&messages.CloseSession{Reason: "handover", Handover: true})
		require.NoError(t, local.Restore("s1", restored()))
		<-ref.Done()
		next, ok := local.Session("s1")
		if !ok || next == ref {
			// The close had not begun when Restore looked: that run is
			// gone now, and a later restore starts the session again.
			require.NoError(t, local.Restore("s1", restored()))
			next, ok = local.Session("s1")
		}
		require.True(t, ok, "round %d: the new run is listed after the old one ended", round)
		require.NotSame(t, ref, next)
		require.Equal(t, 1, local.Len(), "round %d: one live run", round)
		require.Eventually(t, func() bool { return srv.OpenSessions() == 1 }, waitTimeout, time.Millisecond, "round %d: the server lists the new run", round)
		next.Send(&messages.CloseSession{Reason: "round over", Handover: true})
		<-next.Done()
		require.Eventually(t, func() bool { return local.Len() == 0 && srv.OpenSessions() == 0 }, waitTimeout, time.Millisecond)
	}

}

// TestRestoredSessionRunsNoRequestTwice: a request that was running on the
// lost node when the session's State was written, and is delivered again
// to the restored session, is answered with an error rather than run a
// second time (it may have taken effect); other requests, and the same ID
// sent afresh after that answer, run.
func TestRestoredSessionRunsNoRequestTwice(t *testing.T) {
	srv := newServer(t, nil)
	rt := access.Router(srv)
	local, ok := rt.(*router.Local)
	require.True(t, ok)
	require.NoError(t, local.Restore("s1", router.OpenOptions{Principal: "p", Resumable: true,
		Restore: &session.State{ProtocolVersion: messages.Version20251125, Running: []messages.ID{messages.IntID(5)}}}))

	res := response(t, roundTrip(t, rt, "s1", "p", call(5, messages.MethodListTools, "")))
	require.NotNil(t, res.Error, "the request that ran on the lost node")
	assert.Equal(t, int64(messages.CodeInternalError), res.Error.Code)
	assert.Contains(t, res.Error.Message, "may have taken effect")

	res = response(t, roundTrip(t, rt, "s1", "p", call(6, messages.MethodListTools, "")))
	assert.Nil(t, res.Error, "another request runs")
	res = response(t, roundTrip(t, rt, "s1", "p", call(5, messages.MethodListTools, "")))
	assert.Nil(t, res.Error, "the same ID sent afresh runs")
}
