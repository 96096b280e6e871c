package reftools

import (
	"context"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"log/slog"
	"time"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/actors/session"
	"github.com/mcp-actors/mcp-actors/messages"
)

// HoldRunMessage is the message of the line test_hold logs at info for
// each of its runs, answered or not:
//
//	msg="test_hold run" session=<session.LogID> run.node=<node> run.start=<unix ns> run.end=<unix ns> run.cancelled=<bool>
//
// in the text format; the JSON format nests the run as the answer has it,
// "run":{"node":…,"start":…,"end":…,"cancelled":…}. The session attribute
// is absent for a request of protocol 2026-07-28, which has no session.
const HoldRunMessage = "test_hold run"

// Bounds of test_hold's run time.
const (
	holdDefaultSeconds = 2.0
	holdMaxSeconds     = 3600.0
)

// holdInput is test_hold's input schema.
var holdInput = jsontext.Value(`{"type":"object","properties":{` +
	`"seconds":{"type":"number","minimum":0,"maximum":3600,"default":2,"description":"How long to hold, from 0 to 3600; a cancellation ends the hold sooner"}` +
	`}}`)

// holdArgs are test_hold's arguments.
type holdArgs struct {
	Seconds *float64 `json:"seconds"`
}

// holdRun is one run of test_hold, as it answers and logs it.
type holdRun struct {
	Node      string `json:"node"`  // WithNodeID
	Start     int64  `json:"start"` // Unix ns
	End       int64  `json:"end"`   // Unix ns, Start plus the run's monotonic duration
	Cancelled bool   `json:"cancelled"`
}

// addHoldTool adds test_hold, which records where and when a session's
// handler ran: of one session, a run on one node must never overlap a
// run on another (one owner at a time).
func (s *refSet) addHoldTool() error {
	return mcpactors.AddTypedTool(s.srv,
		&messages.Tool{Name: "test_hold", Description: "Holds for the given seconds (default 2) or until cancelled, then returns {\"node\",\"start\",\"end\",\"cancelled\"} as JSON text (times in Unix ns) and logs the same on its node", InputSchema: holdInput},
		func(ctx context.Context, sess *mcpactors.Session, in holdArgs) (*messages.CallToolResult, any, error) {
			seconds := holdDefaultSeconds
			if in.Seconds != nil {
				seconds = *in.Seconds
			}
			if seconds < 0 || seconds > holdMaxSeconds {
				return toolError("seconds must be between 0 and %v, got %v", holdMaxSeconds, seconds), nil, nil
			}
			run := s.hold(ctx, sess.ID(), time.Duration(seconds*float64(time.Second)))
			raw, err := json.Marshal(run)
			if err != nil {
				return nil, nil, err
			}
			return text(string(raw)), nil, nil
		})
}

// hold waits for d or until ctx ends, whichever comes first, then logs
// the run (HoldRunMessage) and returns it. The session is logged as its
// session.LogID: a session's ID appears in logs at debug level only.
func (s *refSet) hold(ctx context.Context, sessionID string, d time.Duration) holdRun {
	start := time.Now()
	err := sleepUntil(ctx, start.Add(d))
	run := holdRun{Node: s.opts.nodeID, Start: start.UnixNano(), Cancelled: err != nil}
	run.End = run.Start + int64(time.Since(start))
	var attrs []any
	if sessionID != "" {
		attrs = append(attrs, "session", session.LogID(sessionID))
	}
	attrs = append(attrs, slog.Group("run", "node", run.Node, "start", run.Start, "end", run.End, "cancelled", run.Cancelled))
	s.opts.log.Info(HoldRunMessage, attrs...)
	return run
}
