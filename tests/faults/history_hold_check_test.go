package faults_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpsession "github.com/mcp-actors/mcp-actors/actors/session"
)

// at is second a of the hand-written histories, in local time as a run
// read from an answer or a log has it.
func at(a float64) time.Time { return t0.Add(time.Duration(a * float64(time.Second))).Local() }

// holdCall is a hand-written test_hold call of session s through node via,
// from second a to second b, answered with a run on node ran from second
// ra to second rb.
func holdCall(s, via string, a, b float64, ran string, ra, rb float64) op {
	o := call(s, via, a, b, fmt.Sprintf(`{"node":%q,"start":%d,"end":%d,"cancelled":false}`, ran, at(ra).UnixNano(), at(rb).UnixNano()))
	o.tool = holdTool
	return o
}

// logged is a run of session s that node's log holds, from second a to
// second b.
func logged(s, node string, a, b float64) holdRun {
	return holdRun{session: mcpsession.LogID(s), node: node, start: at(a), end: at(b), cancelled: true, from: node + "'s log"}
}

func TestHoldRuns(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ops    []op
		logged []holdRun
		want   []string
	}{
		{"runs on two nodes one after the other", numbered([]op{
			holdCall("a", "n1", 0, 2.1, "n1", 0, 2),
			holdCall("a", "n2", 3, 5.1, "n2", 3, 5),
		}), nil, nil},
		{"runs at once on one node", numbered([]op{
			holdCall("a", "n1", 0, 2.1, "n1", 0, 2),
			holdCall("a", "n2", 1, 3.1, "n1", 1, 3),
		}), nil, nil},
		{"runs of two sessions at once on two nodes", numbered([]op{
			holdCall("a", "n1", 0, 2.1, "n1", 0, 2),
			holdCall("b", "n2", 1, 3.1, "n2", 1, 3),
		}), nil, nil},
		{"a run answered and logged counts once", numbered([]op{
			holdCall("a", "n1", 0, 2.1, "n1", 0, 2),
		}), []holdRun{logged("a", "n1", 0, 2), logged("a", "n1", 0, 2)}, nil},
		{"runs at once on two nodes", numbered([]op{
			holdCall("a", "n1", 0, 2.1, "n1", 0, 2),
			holdCall("a", "n2", 1, 3.1, "n2", 1, 3),
		}), nil, []string{holdsOverlap}},
		{"a run within another's", numbered([]op{
			holdCall("a", "n1", 0, 10.1, "n1", 0, 10),
			holdCall("a", "n2", 1, 2.1, "n2", 1, 2),
			holdCall("a", "n3", 3, 4.1, "n3", 3, 4),
		}), nil, []string{holdsOverlap, holdsOverlap}},
		// The old owner's run was cut off from its client: only its
		// log has it.
		{"a logged run at once with an answered one", numbered([]op{
			holdCall("a", "n2", 1, 3.1, "n2", 1, 3),
		}), []holdRun{logged("a", "n1", 0, 2)}, []string{holdsOverlap}},
		{"logged runs at once", nil, []holdRun{logged("a", "n1", 0, 2), logged("a", "n2", 1.5, 3)}, []string{holdsOverlap}},
		{"an answer that is not a run", numbered([]op{
			func() op { o := call("a", "n1", 0, 1, "done"); o.tool = holdTool; return o }(),
			holdCall("a", "n1", 2, 3, "", 2, 3),
		}), nil, []string{notARun, notARun}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := check(tc.ops, tc.logged...)
			assert.Equal(t, tc.want, kinds(vs), "%v", vs)
		})
	}
}

// TestHoldOverlapNamesTheRuns: the violation says which session's runs,
// where and when, and lists the calls that answered them.
func TestHoldOverlapNamesTheRuns(t *testing.T) {
	vs := check(numbered([]op{holdCall("a", "n2", 1, 3.1, "n2", 1, 3)}), logged("a", "n1", 0, 2))
	require.Equal(t, []string{holdsOverlap}, kinds(vs))
	text := vs[0].String()
	clock := func(a float64) string { return at(a).Format("15:04:05.000") }
	assert.Contains(t, text, fmt.Sprintf("handler runs overlap across nodes: session %s: "+
		"n1 ran %s–%s (cancelled) [n1's log] and n2 ran %s–%s [#1], for 1s at once",
		mcpsession.LogID("a"), clock(0), clock(2), clock(1), clock(3)))
	require.Len(t, vs[0].ops, 1)
	assert.Equal(t, 1, vs[0].ops[0].n)
}

// TestLoggedHolds reads runs from lines as slog writes them, text and
// JSON, with the attributes reftools gives them.
func TestLoggedHolds(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			var h slog.Handler = slog.NewTextHandler(&buf, nil)
			if format == "json" {
				h = slog.NewJSONHandler(&buf, nil)
			}
			log := slog.New(h).With("node", "n1")
			log.Info("serving MCP over Streamable HTTP", "url", "http://127.0.0.1:1/mcp")
			log.Info(holdLogMessage, "session", mcpsession.LogID("a"),
				slog.Group("run", "node", "n1", "start", at(0).UnixNano(), "end", at(2).UnixNano(), "cancelled", true))
			log.Info("something else about test_hold run times", "n", 1)
			log.Info(holdLogMessage, slog.Group("run", "node", "n1", "start", at(3).UnixNano(), "end", at(4).UnixNano(), "cancelled", false))

			runs, err := loggedHolds("n1's log", buf.String())
			require.NoError(t, err, "%s", buf.String())
			require.Len(t, runs, 2)
			assert.Equal(t, logged("a", "n1", 0, 2), runs[0])
			assert.Equal(t, holdRun{node: "n1", start: at(3), end: at(4), from: "n1's log"}, runs[1], "a run of no session")
			assert.Empty(t, checkHolds(runs))
		})
	}
}

func TestLoggedHoldsRefusesABrokenLine(t *testing.T) {
	_, err := loggedHolds("n1's log", `time=x level=INFO msg="test_hold run" session=abc run.node=n1 run.start=12 run.end=`+"\n")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "n1's log, line 1")
}

// TestHoldRunsFrozen: a run that a freeze of its node caught, and that
// ended at once when the node ran again, counts as ended when the freeze
// began; one that went on after it, or a run on a node that was not
// frozen, is judged whole.
func TestHoldRunsFrozen(t *testing.T) {
	frozen := []span{{node: "n1", from: at(1), to: at(9)}}
	for _, tc := range []struct {
		name string
		ops  []op
		want []string
	}{
		{"ended at the resume", numbered([]op{
			holdCall("a", "n1", 0, 9.2, "n1", 0.5, 9.1),
			holdCall("a", "n2", 6, 7.1, "n2", 6, 7),
		}), nil},
		{"started as the freeze took effect", numbered([]op{
			holdCall("a", "n1", 1, 9.2, "n1", 1.02, 9.1),
			holdCall("a", "n2", 6, 7.1, "n2", 6, 7),
		}), nil},
		{"started well after the freeze was recorded", numbered([]op{
			holdCall("a", "n1", 1, 9.2, "n1", 1.5, 9.1),
			holdCall("a", "n2", 6, 7.1, "n2", 6, 7),
		}), []string{holdsOverlap}},
		{"went on after the resume", numbered([]op{
			holdCall("a", "n1", 0, 12.2, "n1", 0.5, 12),
			holdCall("a", "n2", 6, 7.1, "n2", 6, 7),
		}), []string{holdsOverlap}},
		{"another node's run across the freeze", numbered([]op{
			holdCall("a", "n3", 0, 9.2, "n3", 0.5, 9.1),
			holdCall("a", "n2", 6, 7.1, "n2", 6, 7),
		}), []string{holdsOverlap}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var kinds []string
			for _, v := range checkFrozen(tc.ops, frozen) {
				kinds = append(kinds, v.kind)
			}
			assert.Equal(t, tc.want, kinds)
			if tc.want == nil {
				assert.NotEmpty(t, checkFrozen(tc.ops, nil), "without the freeze, the runs overlap")
			}
		})
	}
}
