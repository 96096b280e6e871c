package main

import (
	"context"
	"fmt"
	"time"
)

// runIdle is -mode idle: open -sessions sessions (-conc at a time, each with
// its GET stream), wait -settle, print "IDLE_READY sessions=N" so that the
// script can read the server's memory, hold the sessions for -hold (or until
// SIGTERM), close them all and print the RESULT line.
func (l *loader) runIdle(ctx context.Context) {
	n := l.cfg.sessions
	hc := newHTTPClient(l.cfg.endpoints, 2*l.cfg.conc+16)
	c := l.host.newClient()

	t0 := time.Now()
	css, failed := l.openSessions(ctx, c, hc, n)
	setup := time.Since(t0)
	opened := n - failed
	fmt.Printf("opened %d/%d sessions in %v (%.0f/s, protocol %s)\n", opened, n, setup.Round(time.Millisecond), float64(opened)/setup.Seconds(), negotiated(css))
	sleepCtx(ctx, l.cfg.settle)
	fmt.Printf("IDLE_READY sessions=%d\n", opened)
	sleepCtx(ctx, l.cfg.hold)

	t1 := time.Now()
	l.closeAll(css)
	closeDur := time.Since(t1)
	l.errs.print()
	fmt.Printf("RESULT mode=idle tool=- nodes=%d sessions=%d opened=%d errors=%d setup_s=%.3f connects_per_s=%.1f close_s=%.3f proto=%s label=%s\n",
		len(l.cfg.endpoints), n, opened, failed, setup.Seconds(), float64(opened)/setup.Seconds(), closeDur.Seconds(), negotiated(css), l.cfg.label)
}

// sleepCtx waits for d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
