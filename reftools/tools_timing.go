package reftools

import (
	"context"
	"encoding/json/jsontext"
	"fmt"
	"math"
	"time"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/messages"
)

// Timing of the reference tools.
const (
	// stepDelay separates the log messages of test_tool_with_logging and the
	// progress reports of test_tool_with_progress.
	stepDelay = 50 * time.Millisecond
	// slowTick separates test_slow's progress reports.
	slowTick = 100 * time.Millisecond
	// slowDefaultSeconds is test_slow's default run time.
	slowDefaultSeconds = 5.0
	// slowMaxSeconds bounds test_slow's run time.
	slowMaxSeconds = 3600.0
	// slowMaxSteps bounds test_slow's steps override.
	slowMaxSteps = 1_000_000
)

// slowInput is test_slow's input schema. "steps" is an override the
// benchmark peers share; clients normally leave it out.
var slowInput = jsontext.Value(`{"type":"object","properties":{` +
	`"seconds":{"type":"number","default":5,"description":"How long to run, from 0 to 3600; progress every 100 ms when the request has a progressToken"},` +
	`"steps":{"type":"integer","description":"Benchmark override: send exactly this many progress notifications, spread evenly over seconds"}` +
	`}}`)

// slowArgs are test_slow's arguments.
type slowArgs struct {
	Seconds *float64 `json:"seconds"`
	Steps   int      `json:"steps"`
}

// addTimingTools adds the tools that report while they run and the one that
// runs until it is done or cancelled.
func (s *refSet) addTimingTools() error {
	err := s.addTools([]tool{
		{&messages.Tool{Name: "test_tool_with_logging", Description: "Tests tool that emits log messages during execution", InputSchema: noArgs},
			func(ctx context.Context, sess *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
				steps := []string{"Tool execution started", "Tool processing data", "Tool execution completed"}
				for i, msg := range steps {
					if i > 0 {
						if err := sleep(ctx, stepDelay); err != nil {
							return nil, err
						}
					}
					if err := sess.Log(ctx, messages.LevelInfo, "", msg); err != nil {
						return nil, err
					}
				}
				return text("Tool with logging executed successfully"), nil
			}},
		{&messages.Tool{Name: "test_tool_with_progress", Description: "Tests tool that reports progress notifications", InputSchema: noArgs},
			func(ctx context.Context, sess *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
				for i, p := range []float64{0, 50, 100} {
					if i > 0 {
						if err := sleep(ctx, stepDelay); err != nil {
							return nil, err
						}
					}
					if err := sess.Progress(ctx, p, 100, fmt.Sprintf("Completed step %v of 100", p)); err != nil {
						return nil, err
					}
				}
				return text("Tool with progress executed successfully"), nil
			}},
	})
	if err != nil {
		return err
	}
	return mcpactors.AddTypedTool(s.srv,
		&messages.Tool{Name: "test_slow", Description: "Runs for the given seconds, reporting progress every 100 ms, then returns \"done\"; stops at once when cancelled", InputSchema: slowInput},
		func(ctx context.Context, sess *mcpactors.Session, in slowArgs) (*messages.CallToolResult, any, error) {
			seconds := slowDefaultSeconds
			if in.Seconds != nil {
				seconds = *in.Seconds
			}
			if seconds < 0 || seconds > slowMaxSeconds {
				return toolError("seconds must be between 0 and %v, got %v", slowMaxSeconds, seconds), nil, nil
			}
			if in.Steps < 0 || in.Steps > slowMaxSteps {
				return toolError("steps must be between 1 and %d, got %d", slowMaxSteps, in.Steps), nil, nil
			}
			if err := runSlow(ctx, sess, seconds, in.Steps); err != nil {
				return nil, nil, err
			}
			return text("done"), nil, nil
		})
}

// slowPlan says how test_slow runs: n progress reports, the i-th (from 1)
// at i×interval after the start, and the result at total.
//
// Without steps it reports every 100 ms while seconds last: n =
// floor(seconds×10), so 0.5 s gives 5 reports at 100 … 500 ms. With steps
// it sends exactly steps reports spread evenly over seconds (seconds 0:
// back to back).
func slowPlan(seconds float64, steps int) (n int, interval, total time.Duration) {
	total = time.Duration(seconds * float64(time.Second))
	if steps > 0 {
		return steps, total / time.Duration(steps), total
	}
	// The epsilon keeps 0.3×10 = 2.9999… from losing a report.
	return int(math.Floor(seconds*10 + 1e-9)), slowTick, total
}

// runSlow runs slowPlan, reporting progress i of n (a no-op without a
// progress token). Deadlines are computed from the start, so the schedule
// does not drift. It returns ctx.Err() as soon as ctx ends.
func runSlow(ctx context.Context, sess *mcpactors.Session, seconds float64, steps int) error {
	n, interval, total := slowPlan(seconds, steps)
	start := time.Now()
	for i := 1; i <= n; i++ {
		if err := sleepUntil(ctx, start.Add(time.Duration(i)*interval)); err != nil {
			return err
		}
		if err := sess.Progress(ctx, float64(i), float64(n), ""); err != nil {
			return err
		}
	}
	return sleepUntil(ctx, start.Add(total))
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	return sleepUntil(ctx, time.Now().Add(d))
}

// sleepUntil waits until t or until ctx ends, and returns ctx.Err() in the
// latter case (also when t has passed but ctx has ended).
func sleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
