package main

import (
	"bufio"
	"context"
	json "encoding/json/v2"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// runSoak is -mode soak: open -sessions idle sessions (each with its GET
// stream), hold them for -duration while -churn workers each open a
// session, call -tool once and close it, at -rate churns a second all
// together; every -sample print a SOAK line (below). Then close the held
// sessions, wait -settle and print SOAK_AFTER_CLOSE with the servers'
// memory, which is what a leak would keep.
//
//	SOAK t_s=… held=… rss_bytes=… heap_bytes=… goroutines=… cpu_s=… churns=… errors=… p50_ms=… p99_ms=…
//
// rss_bytes and cpu_s are the -server-pid processes' summed VmRSS and CPU
// time; heap_bytes and goroutines the servers' summed heap in use after a
// forced collection and goroutines, from each endpoint's /debug/mem?gc=1
// (serve --debug; 0 without); churns, errors and the call latencies are
// the interval's.
func (l *loader) runSoak(ctx context.Context) {
	n := l.cfg.sessions
	hc := newHTTPClient(l.cfg.endpoints, 2*l.cfg.conc+2*l.cfg.churn+16)
	c := l.host.newClient()

	t0 := time.Now()
	css, failed := l.openSessions(ctx, c, hc, n)
	fmt.Printf("opened %d/%d sessions in %v\n", n-failed, n, time.Since(t0).Round(time.Millisecond))
	sleepCtx(ctx, l.cfg.settle)
	l.soakSample("SOAK_HELD", n-failed, time.Since(t0), nil, 0)

	var pace *rate.Limiter
	if l.cfg.rate > 0 {
		pace = rate.NewLimiter(rate.Limit(l.cfg.rate), 1)
	}
	sctx, cancel := context.WithTimeout(ctx, l.cfg.duration)
	defer cancel()
	var (
		mu     sync.Mutex
		lat    []time.Duration
		errors atomic.Int64
		churns atomic.Int64
	)
	var wg sync.WaitGroup
	for w := range l.cfg.churn {
		wg.Go(func() {
			for i := 0; sctx.Err() == nil; i++ {
				if pace != nil && pace.Wait(sctx) != nil {
					return
				}
				cs, err := l.connect(sctx, c, hc)
				if err != nil {
					if sctx.Err() == nil {
						errors.Add(1)
						l.errs.add(fmt.Errorf("churn connect: %w", err))
					}
					continue
				}
				start := time.Now()
				err = l.callOnce(sctx, cs, w, i)
				d := time.Since(start)
				_ = cs.Close()
				switch {
				case err != nil && sctx.Err() == nil:
					errors.Add(1)
					l.errs.add(fmt.Errorf("churn call: %w", err))
				case err == nil:
					churns.Add(1)
					mu.Lock()
					lat = append(lat, d)
					mu.Unlock()
				}
			}
		})
	}
	start := time.Now()
	tick := time.NewTicker(l.cfg.sample)
	cpu0 := serverCPU(l.cfg.pids)
	for sctx.Err() == nil {
		select {
		case <-sctx.Done():
		case <-tick.C:
			mu.Lock()
			interval := lat
			lat = nil
			mu.Unlock()
			slices.Sort(interval)
			l.soakSample("SOAK", n-failed, time.Since(start), interval, errors.Swap(0))
			_ = churns.Swap(0)
		}
	}
	tick.Stop()
	wg.Wait()
	fmt.Printf("churn cpu_s=%.2f over %v\n", serverCPU(l.cfg.pids)-cpu0, time.Since(start).Round(time.Second))

	l.closeAll(css)
	sleepCtx(ctx, l.cfg.settle)
	l.soakSample("SOAK_AFTER_CLOSE", 0, time.Since(start), nil, 0)
	l.errs.print()
	fmt.Printf("RESULT mode=soak tool=%s nodes=%d sessions=%d opened=%d label=%s\n", l.cfg.tool, len(l.cfg.endpoints), n, n-failed, l.cfg.label)
}

// soakSample prints one line of what the servers hold and what the
// interval's calls took.
func (l *loader) soakSample(tag string, held int, t time.Duration, sorted []time.Duration, errs int64) {
	heap, goroutines := l.serverHeap()
	fmt.Printf("%s t_s=%.0f held=%d rss_bytes=%d heap_bytes=%d goroutines=%d cpu_s=%.2f churns=%d errors=%d p50_ms=%.2f p99_ms=%.2f\n",
		tag, t.Seconds(), held, serverRSS(l.cfg.pids), heap, goroutines, serverCPU(l.cfg.pids), len(sorted), errs,
		float64(pct(sorted, 0.5).Microseconds())/1000, float64(pct(sorted, 0.99).Microseconds())/1000)
}

// serverRSS sums the resident memory of pids (VmRSS in /proc/PID/status).
func serverRSS(pids []int) int64 {
	var sum int64
	for _, pid := range pids {
		f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				sum += kb << 10
			}
		}
		_ = f.Close()
	}
	return sum
}

// serverCPU sums the CPU time of pids, in seconds.
func serverCPU(pids []int) float64 {
	ticks, _ := serverTicks(pids)
	return float64(ticks) / ticksPerSec
}

// serverHeap sums the endpoints' heap in use after a forced collection and
// their goroutines (GET /debug/mem?gc=1 beside each MCP endpoint); 0 where
// it is not served.
func (l *loader) serverHeap() (heap, goroutines int64) {
	hc := &http.Client{Timeout: 10 * time.Second}
	for _, e := range l.cfg.endpoints {
		u, err := url.Parse(e)
		if err != nil {
			continue
		}
		u.Path, u.RawQuery = "/debug/mem", "gc=1"
		resp, err := hc.Get(u.String())
		if err != nil {
			continue
		}
		var m struct {
			HeapInuse  int64 `json:"heap_inuse"`
			Goroutines int64 `json:"goroutines"`
		}
		if resp.StatusCode == http.StatusOK && json.UnmarshalRead(resp.Body, &m) == nil {
			heap += m.HeapInuse
			goroutines += m.Goroutines
		}
		_ = resp.Body.Close()
	}
	return heap, goroutines
}
