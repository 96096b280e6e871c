package reftools_test

import (
	"context"
	json "encoding/json/v2"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/actors/session"
	"github.com/mcp-actors/mcp-actors/harness"
	"github.com/mcp-actors/mcp-actors/messages"
	"github.com/mcp-actors/mcp-actors/reftools"
)

// holdNode is the node ID the test_hold tests register the set with.
const holdNode = "n7"

// holdRun is test_hold's answer, and what it logs as the run group.
type holdRun struct {
	Node      string `json:"node"`
	Start     int64  `json:"start"`
	End       int64  `json:"end"`
	Cancelled bool   `json:"cancelled"`
}

// loggedRun is one line test_hold logged.
type loggedRun struct {
	level   slog.Level
	session string
	run     holdRun
}

// holdLog is a slog.Handler that passes on the runs test_hold logs and
// drops every other record.
type holdLog struct{ runs chan loggedRun }

func (holdLog) Enabled(context.Context, slog.Level) bool { return true }
func (h holdLog) WithAttrs([]slog.Attr) slog.Handler     { return h }
func (h holdLog) WithGroup(string) slog.Handler          { return h }

func (h holdLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message != reftools.HoldRunMessage {
		return nil
	}
	l := loggedRun{level: r.Level}
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "session":
			l.session = a.Value.String()
		case "run":
			for _, g := range a.Value.Group() {
				switch g.Key {
				case "node":
					l.run.Node = g.Value.String()
				case "start":
					l.run.Start = g.Value.Int64()
				case "end":
					l.run.End = g.Value.Int64()
				case "cancelled":
					l.run.Cancelled = g.Value.Bool()
				}
			}
		}
		return true
	})
	h.runs <- l
	return nil
}

// newHoldHarness starts a server with the reference set registered as
// node holdNode, logging test_hold's runs to the returned channel.
func newHoldHarness(t *testing.T) (*harness.Harness, <-chan loggedRun) {
	t.Helper()
	log := holdLog{runs: make(chan loggedRun, 16)}
	srv := mcpactors.NewServer(messages.Implementation{Name: "reftools-test", Version: "0.0.0"}, nil)
	require.NoError(t, reftools.Register(srv, reftools.WithNodeID(holdNode), reftools.WithLogger(slog.New(log))))
	return harness.New(t, srv), log.runs
}

// nextRun waits (bounded) for the next run test_hold logs.
func nextRun(t *testing.T, runs <-chan loggedRun) loggedRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	select {
	case l := <-runs:
		return l
	case <-ctx.Done():
		require.FailNow(t, "test_hold logged no run")
		return loggedRun{}
	}
}

func TestHold(t *testing.T) {
	for _, tc := range []struct {
		name    string
		seconds float64
		cancel  bool          // cancel the call (notifications/cancelled) once sent: no answer comes
		atLeast time.Duration // the run's least length
	}{
		{"a short hold", 0.02, false, 20 * time.Millisecond},
		{"no hold", 0, false, 0},
		{"cancelled", 60, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, runs := newHoldHarness(t)
			c := h.Connect()
			before := time.Now().UnixNano()
			id := messages.StringID("hold")
			require.NoError(t, c.SendRequest(id, messages.MethodCallTool, callParams("test_hold", map[string]any{"seconds": tc.seconds}, nil)))
			if tc.cancel {
				c.Cancel(id, "test")
			}
			logged := nextRun(t, runs)
			after := time.Now().UnixNano()

			run := logged.run
			assert.Equal(t, slog.LevelInfo, logged.level)
			assert.Equal(t, session.LogID(c.ID()), logged.session, "the session, as its log ID")
			assert.Equal(t, holdNode, run.Node)
			assert.Equal(t, tc.cancel, run.Cancelled)
			assert.GreaterOrEqual(t, run.Start, before)
			assert.GreaterOrEqual(t, run.End, run.Start)
			assert.LessOrEqual(t, run.End, after)
			assert.GreaterOrEqual(t, time.Duration(run.End-run.Start), tc.atLeast)
			if tc.cancel {
				return // a cancelled request is not answered
			}
			res := callResult(t, responseTo(t, c, id))
			require.False(t, res.IsError, "%+v", res.Content)
			require.Len(t, res.Content, 1)
			var answered holdRun
			require.NoError(t, json.Unmarshal([]byte(res.Content[0].Text), &answered, json.RejectUnknownMembers(true)))
			assert.Equal(t, run, answered, "the answer is the run logged")
		})
	}
}

// TestHoldAnswer: the answer is exactly the four fields, in order.
func TestHoldAnswer(t *testing.T) {
	h, runs := newHoldHarness(t)
	got := callText(t, h.Connect(), "test_hold", map[string]any{"seconds": 0})
	run := nextRun(t, runs).run
	want, err := json.Marshal(run)
	require.NoError(t, err)
	assert.Regexp(t, `^\{"node":"n7","start":\d+,"end":\d+,"cancelled":false\}$`, got)
	assert.JSONEq(t, string(want), got)
}

// TestHoldWithoutNode: registered without WithNodeID (stdio, a server on
// its own), test_hold reports no node.
func TestHoldWithoutNode(t *testing.T) {
	got := callText(t, newHarness(t).Connect(), "test_hold", map[string]any{"seconds": 0})
	var run holdRun
	require.NoError(t, json.Unmarshal([]byte(got), &run))
	assert.Empty(t, run.Node)
	assert.False(t, run.Cancelled)
}

func TestHoldRejectsBadArguments(t *testing.T) {
	h, runs := newHoldHarness(t)
	c := h.Connect()
	for _, args := range []map[string]any{
		{"seconds": -1},
		{"seconds": -0.001},
		{"seconds": 3600.5},
		{"seconds": "1"},
		{"seconds": true},
		{"seconds": nil},
	} {
		res := call(t, c, "test_hold", args)
		assert.True(t, res.IsError, "%v", args)
		if assert.Len(t, res.Content, 1, "%v", args) {
			assert.Contains(t, res.Content[0].Text, "invalid arguments", "%v", args)
		}
	}
	assert.Empty(t, runs, "nothing ran")
}
