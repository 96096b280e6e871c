package reftools

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

func TestSlowPlan(t *testing.T) {
	tests := []struct {
		seconds  float64
		steps    int
		n        int
		interval time.Duration
		total    time.Duration
	}{
		{seconds: 0.5, n: 5, interval: SlowTick, total: 500 * time.Millisecond},
		{seconds: 0.3, n: 3, interval: SlowTick, total: 300 * time.Millisecond},
		{seconds: 0.05, n: 0, interval: SlowTick, total: 50 * time.Millisecond},
		{seconds: -1, n: 0, interval: SlowTick, total: 0},
		{seconds: 1, steps: 4, n: 4, interval: 250 * time.Millisecond, total: time.Second},
		{seconds: 0, steps: 50, n: 50, interval: 0, total: 0},
	}
	for _, tt := range tests {
		n, interval, total := SlowPlan(tt.seconds, tt.steps)
		if n != tt.n || interval != tt.interval || total != tt.total {
			t.Errorf("SlowPlan(%v, %d) = %d, %v, %v; want %d, %v, %v",
				tt.seconds, tt.steps, n, interval, total, tt.n, tt.interval, tt.total)
		}
	}
}

// TestRunSlowTiming checks that progress i is sent at i*100 ms and that the
// call returns after the given seconds.
func TestRunSlowTiming(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var at []time.Duration
		err := RunSlow(t.Context(), 0.5, 0, func(i, n int) error {
			at = append(at, time.Since(start))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := time.Since(start); got != 500*time.Millisecond {
			t.Errorf("returned after %v, want 500ms", got)
		}
		if len(at) != 5 {
			t.Fatalf("%d notifications, want 5", len(at))
		}
		for i, d := range at {
			if want := time.Duration(i+1) * SlowTick; d != want {
				t.Errorf("notification %d at %v, want %v", i+1, d, want)
			}
		}
	})
}

// TestRunSlowCancelled checks that a cancelled call stops at once.
func TestRunSlowCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		start := time.Now()
		time.AfterFunc(250*time.Millisecond, cancel)
		notes := 0
		err := RunSlow(ctx, 5, 0, func(i, n int) error { notes++; return nil })
		if err != context.Canceled {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		if got := time.Since(start); got != 250*time.Millisecond || notes != 2 {
			t.Errorf("stopped after %v with %d notifications, want 250ms and 2", got, notes)
		}
	})
}
