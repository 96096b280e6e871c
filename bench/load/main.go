// Command load is an MCP load client for Streamable HTTP servers, built on
// the official go-sdk client (mcp.NewClient + mcp.StreamableClientTransport,
// all sessions sharing one keep-alive pool). It calls the reference tools
// test_echo, test_elicitation, test_sampling, test_roots and test_slow, and
// answers the server's requests like a host would (host.go): elicitation
// with every string property filled (fill.go) and accepted, sampling with a
// fixed text, roots with two roots. Every result is checked (call.go).
//
// Modes:
//
//	-mode calls    N sessions each call -tool up to -calls times (or until -duration)
//	-mode connect  N workers loop connect (initialize + initialized) and close
//	-mode idle     open N sessions, print IDLE_READY, hold them for -hold, close
//	-mode soak     hold N idle sessions for -duration while -churn workers open, call, close; a SOAK line every -sample
//
// -tool takes the scenario names echo | ask | sample | roots | slow, which
// call test_echo | test_elicitation | test_sampling | test_roots | test_slow
// (the tool names are accepted too). -urls spreads every session's HTTP
// requests round-robin over the nodes of a cluster; -server-pid sums the CPU
// time of several processes.
//
// The last line of output is machine readable and starts with "RESULT ".
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	cfg, err := parseConfig(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	l := newLoader(cfg)
	limit := cfg.duration + cfg.hold + 2*cfg.settle + 3*time.Minute
	if cfg.mode == "idle" || cfg.mode == "soak" {
		// Opening and closing the sessions: about 1,000 a second on three
		// nodes sharing two cores with this client; five times that room.
		limit += time.Duration(cfg.sessions) * 5 * time.Millisecond
	}
	go l.watchdog(limit)
	switch cfg.mode {
	case "calls":
		l.runCalls(ctx)
	case "connect":
		l.runConnect(ctx)
	case "idle":
		l.runIdle(ctx)
	case "soak":
		l.runSoak(ctx)
	}
}

// loader runs one mode against the configured endpoints.
type loader struct {
	cfg  *config
	host *host   // answers server requests and counts them
	errs *errLog // first distinct errors, printed at the end
}

func newLoader(cfg *config) *loader {
	return &loader{cfg: cfg, host: newHost(), errs: newErrLog(5)}
}

// watchdog ends the process after limit, so that a stuck server can never
// keep the client alive past the bounds its flags give.
func (l *loader) watchdog(limit time.Duration) {
	time.Sleep(limit)
	l.errs.print()
	fmt.Printf("RESULT mode=%s tool=%s sessions=%d watchdog=1 errors=-1 label=%s\n", l.cfg.mode, l.cfg.tool, l.cfg.sessions, l.cfg.label)
	os.Exit(3)
}
