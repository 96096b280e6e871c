package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// runConnect is -mode connect: -sessions workers each loop connect
// (initialize + initialized, then the SDK opens the GET stream) and close
// (DELETE) until -duration (or -calls), and print the RESULT line. The
// latency measured is the connect's.
func (l *loader) runConnect(ctx context.Context) {
	w := l.cfg.sessions
	hc := newHTTPClient(l.cfg.endpoints, 2*w+16)
	c := l.host.newClient()

	// Warm-up: a few unmeasured handshakes.
	for range min(w, 4) {
		if cs, err := l.connect(ctx, c, hc); err == nil {
			_ = cs.Close()
		}
	}

	per := make([]workerStats, w)
	var protoSeen atomic.Value // string: the first negotiated version
	var wg sync.WaitGroup
	clock := startCPU(l.cfg.pids)
	deadline := clock.start.Add(l.cfg.duration)
	for wi := range w {
		wg.Go(func() {
			st := &per[wi]
			for i := 0; (l.cfg.calls == 0 || i < l.cfg.calls) && ctx.Err() == nil && time.Now().Before(deadline); i++ {
				t := time.Now()
				cs, err := l.connect(ctx, c, hc)
				d := time.Since(t)
				if err != nil {
					st.errors++
					l.errs.add(fmt.Errorf("connect: %w", err))
					continue
				}
				st.lat = append(st.lat, d)
				if protoSeen.Load() == nil {
					protoSeen.Store(cs.InitializeResult().ProtocolVersion)
				}
				if err := cs.Close(); err != nil {
					l.errs.add(fmt.Errorf("close: %w", err))
				}
			}
		})
	}
	wg.Wait()
	clock.stop()

	all, errs := merge(per)
	ok := len(all)
	rate := float64(ok) / clock.elapsed.Seconds()
	l.errs.print()
	pv, _ := protoSeen.Load().(string)
	fmt.Printf("connect+close cycles: %d ok, %d errors, %.2fs\n", ok, errs, clock.elapsed.Seconds())
	fmt.Printf("connects/s: %.1f  connect p50=%dus p90=%dus p99=%dus\n", rate, us(pct(all, .5)), us(pct(all, .9)), us(pct(all, .99)))
	fmt.Printf("RESULT mode=connect tool=- nodes=%d sessions=%d calls=%d calls_per_s=%.1f connects_per_s=%.1f p50_us=%d p90_us=%d p99_us=%d errors=%d elapsed_s=%.2f proto=%s%s label=%s\n",
		len(l.cfg.endpoints), w, ok+errs, rate, rate, us(pct(all, .5)), us(pct(all, .9)), us(pct(all, .99)), errs, clock.elapsed.Seconds(), pv, clock.fields(ok), l.cfg.label)
}
