package main

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"
)

// runCalls is -mode calls: open -sessions sessions, make -warmup unmeasured
// calls on each, then have every session call back to back until -duration
// (or -calls), and print the RESULT line.
func (l *loader) runCalls(ctx context.Context) {
	n := l.cfg.sessions
	hc := newHTTPClient(l.cfg.endpoints, 2*n+16)
	c := l.host.newClient()

	t0 := time.Now()
	css, failed := l.openSessions(ctx, c, hc, n)
	setup := time.Since(t0)
	fmt.Fprintf(os.Stderr, "opened %d/%d sessions in %v (protocol %s)\n", n-failed, n, setup.Round(time.Millisecond), negotiated(css))

	warmErrs := l.warmUp(ctx, css)

	// Measured phase: every session starts when the CPU clocks are read.
	per := make([]workerStats, n)
	var pace *rate.Limiter // -rate: one pace for all sessions
	if l.cfg.rate > 0 {
		pace = rate.NewLimiter(rate.Limit(l.cfg.rate), 1)
	}
	start := make(chan struct{})
	var deadline time.Time // written before start is closed
	var wg sync.WaitGroup
	for si, cs := range css {
		if cs == nil {
			continue
		}
		wg.Go(func() {
			<-start
			l.callLoop(ctx, cs, si, deadline, pace, &per[si])
		})
	}
	clock := startCPU(l.cfg.pids)
	deadline = clock.start.Add(l.cfg.duration)
	close(start)
	wg.Wait()
	clock.stop()
	if l.cfg.tool == "slow" {
		// Notifications are handled asynchronously; let late ones land.
		time.Sleep(200 * time.Millisecond)
	}

	all, errs := merge(per)
	ok := len(all)
	rate := float64(ok) / clock.elapsed.Seconds()
	l.closeAll(css)
	l.errs.print()

	extra := ""
	if l.cfg.tool == "slow" {
		extra = l.progressFields(per)
	}
	fmt.Printf("calls: %d ok, %d errors, %d warmup errors, %d sessions failed, %.2fs measured\n", ok, errs, warmErrs, failed, clock.elapsed.Seconds())
	fmt.Printf("calls/s: %.1f  p50=%dus p90=%dus p99=%dus max=%dus\n", rate, us(pct(all, .5)), us(pct(all, .9)), us(pct(all, .99)), us(pct(all, 1)))
	fmt.Printf("RESULT mode=calls tool=%s tool_name=%s nodes=%d sessions=%d calls=%d calls_per_s=%.1f p50_us=%d p90_us=%d p99_us=%d errors=%d warmup_errors=%d failed_sessions=%d setup_s=%.3f elapsed_s=%.2f proto=%s%s%s label=%s\n",
		l.cfg.tool, l.cfg.toolName(), len(l.cfg.endpoints), n, ok+errs, rate, us(pct(all, .5)), us(pct(all, .9)), us(pct(all, .99)),
		errs, warmErrs, failed, setup.Seconds(), clock.elapsed.Seconds(), negotiated(css), clock.fields(ok), extra, l.cfg.label)
}

// warmUp makes -warmup unmeasured calls on every open session, all sessions
// at once, and returns how many failed.
func (l *loader) warmUp(ctx context.Context, css []*mcp.ClientSession) int64 {
	var errs atomic.Int64
	var wg sync.WaitGroup
	for si, cs := range css {
		if cs == nil {
			continue
		}
		wg.Go(func() {
			for i := range l.cfg.warmup {
				if err := l.callOnce(ctx, cs, si, -1-i); err != nil {
					errs.Add(1)
					l.errs.add(fmt.Errorf("warmup %s: %w", l.cfg.tool, err))
				}
			}
		})
	}
	wg.Wait()
	return errs.Load()
}

// callLoop is one session's measured phase: back-to-back calls (or as
// pace allows) until the deadline, -calls, or ctx ends.
func (l *loader) callLoop(ctx context.Context, cs *mcp.ClientSession, si int, deadline time.Time, pace *rate.Limiter, st *workerStats) {
	st.lat = make([]time.Duration, 0, 1024)
	dctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	for i := 0; (l.cfg.calls == 0 || i < l.cfg.calls) && ctx.Err() == nil; i++ {
		if pace != nil && pace.Wait(dctx) != nil {
			break // the deadline comes before this call's turn
		}
		if time.Now().After(deadline) {
			break
		}
		t := time.Now()
		err := l.callOnce(ctx, cs, si, i)
		d := time.Since(t)
		if err != nil {
			st.errors++
			l.errs.add(fmt.Errorf("%s: %w", l.cfg.tool, err))
			continue
		}
		st.lat = append(st.lat, d)
		if l.cfg.tool == "slow" {
			st.okIdx = append(st.okIdx, i)
		}
	}
}

// progressFields account for test_slow's progress exactly: each successful
// measured call must have brought slowPlan() notifications with its own
// token. They are rendered for the RESULT line.
func (l *loader) progressFields(per []workerStats) string {
	want := l.slowPlan()
	var notes, expected, badCalls int
	for si, st := range per {
		for _, i := range st.okIdx {
			got := l.host.progressCount(progressToken(si, i))
			notes += got
			expected += want
			if got != want {
				badCalls++
			}
		}
	}
	return fmt.Sprintf(" progress_notes=%d progress_expected=%d progress_bad_calls=%d progress_per_call=%d", notes, expected, badCalls, want)
}

// slowPlan is the number of progress notifications one test_slow call
// sends: floor(seconds*10), or -steps when given, or none without a token.
func (l *loader) slowPlan() int {
	if !l.cfg.progress {
		return 0
	}
	if l.cfg.steps > 0 {
		return l.cfg.steps
	}
	return int(l.cfg.seconds*10 + 1e-9)
}
