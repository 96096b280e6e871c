package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// ticksPerSec is USER_HZ, the unit of utime and stime in /proc/PID/stat
// (100 on Linux), so CPU times have 10 ms resolution.
const ticksPerSec = 100

// cpuTicks returns utime+stime of pid in clock ticks.
func cpuTicks(pid int) (int64, bool) {
	if pid <= 0 {
		return 0, false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	s := string(b)
	j := strings.LastIndexByte(s, ')') // the command name may hold spaces
	if j < 0 {
		return 0, false
	}
	// Fields after ")": state(0) ppid(1) ... utime(11) stime(12).
	f := strings.Fields(s[j+1:])
	if len(f) < 13 {
		return 0, false
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return u + st, true
}

// cpuClock reads the CPU time of the servers (-server-pid, summed) and of
// this process at the start and end of a measured phase.
type cpuClock struct {
	pids           []int
	server0, self0 int64
	server1, self1 int64
	serverOK       bool
	start          time.Time
	elapsed        time.Duration
}

// startCPU reads the clocks at the start of the measured phase.
func startCPU(pids []int) *cpuClock {
	c := &cpuClock{pids: pids}
	c.server0, c.serverOK = serverTicks(pids)
	c.self0, _ = cpuTicks(os.Getpid())
	c.start = time.Now()
	return c
}

// stop reads the clocks at the end of the measured phase.
func (c *cpuClock) stop() {
	c.elapsed = time.Since(c.start)
	c.server1, _ = serverTicks(c.pids)
	c.self1, _ = cpuTicks(os.Getpid())
}

// fields renders server and client CPU time per successful call (ok calls)
// over the measured phase for the RESULT line; server figures only when
// -server-pid was given and readable.
func (c *cpuClock) fields(ok int) string {
	if ok == 0 {
		return ""
	}
	out := ""
	if c.serverOK {
		sec := float64(c.server1-c.server0) / ticksPerSec
		out += fmt.Sprintf(" server_cpu_us_per_call=%.1f server_cpu_pct=%.0f", sec*1e6/float64(ok), 100*sec/c.elapsed.Seconds())
	}
	sec := float64(c.self1-c.self0) / ticksPerSec
	out += fmt.Sprintf(" client_cpu_us_per_call=%.1f client_cpu_pct=%.0f", sec*1e6/float64(ok), 100*sec/c.elapsed.Seconds())
	return out
}

// serverTicks sums cpuTicks over pids; ok is false when there are none or
// one cannot be read.
func serverTicks(pids []int) (sum int64, ok bool) {
	for _, p := range pids {
		t, ok := cpuTicks(p)
		if !ok {
			return 0, false
		}
		sum += t
	}
	return sum, len(pids) > 0
}
