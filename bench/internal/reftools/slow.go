package reftools

import (
	"context"
	"math"
	"time"
)

// SlowDefaultSeconds is test_slow's default for "seconds".
const SlowDefaultSeconds = 5.0

// SlowTick is the interval between test_slow's progress notifications.
const SlowTick = 100 * time.Millisecond

// SlowPlan says how test_slow behaves: n progress notifications, the i-th
// (from 1) sent at i*interval after the start, and the result after total.
//
// Without steps: one notification every 100 ms until seconds have passed,
// so n = floor(seconds*10) (seconds=0.5 gives 5, at 100..500 ms).
// With steps > 0 (a peer-only override): exactly steps notifications spread
// evenly over seconds (seconds=0 sends them back to back).
func SlowPlan(seconds float64, steps int) (n int, interval, total time.Duration) {
	if seconds < 0 || math.IsNaN(seconds) {
		seconds = 0
	}
	total = time.Duration(seconds * float64(time.Second))
	if steps > 0 {
		return steps, total / time.Duration(steps), total
	}
	return int(math.Floor(seconds*10 + 1e-9)), SlowTick, total
}

// RunSlow runs test_slow: it calls notify(i, n) for i = 1..n on the plan's
// schedule (notify is nil when the request had no progressToken) and returns
// when the time is up, or with ctx's error as soon as ctx is done.
func RunSlow(ctx context.Context, seconds float64, steps int, notify func(i, n int) error) error {
	n, interval, total := SlowPlan(seconds, steps)
	start := time.Now()
	if notify != nil {
		for i := 1; i <= n; i++ {
			if err := sleepUntil(ctx, start.Add(time.Duration(i)*interval)); err != nil {
				return err
			}
			if err := notify(i, n); err != nil {
				return err
			}
		}
	}
	return sleepUntil(ctx, start.Add(total))
}

// sleepUntil waits until t or until ctx is done, whichever comes first.
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
