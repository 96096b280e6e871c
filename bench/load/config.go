package main

import (
	"errors"
	"flag"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// toolNames maps the scenario names taken by -tool to the reference tools
// they call.
var toolNames = map[string]string{
	"echo":   "test_echo",
	"ask":    "test_elicitation",
	"sample": "test_sampling",
	"roots":  "test_roots",
	"slow":   "test_slow",
}

// config is the parsed command line.
type config struct {
	endpoints   []string // from -urls, or just -url
	pids        []int    // from -server-pid
	mode        string
	tool        string // scenario name: a key of toolNames
	sessions    int
	calls       int
	duration    time.Duration
	warmup      int
	seconds     float64
	steps       int
	progress    bool
	proto       string
	conc        int
	hold        time.Duration
	settle      time.Duration
	callTimeout time.Duration
	noSSE       bool
	label       string
	rate        float64
	churn       int
	sample      time.Duration
}

// toolName is the name of the tool -tool calls.
func (c *config) toolName() string { return toolNames[c.tool] }

// parseConfig parses and checks the command line.
func parseConfig(args []string) (*config, error) {
	var c config
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	urlFlag := fs.String("url", "http://127.0.0.1:18081/mcp", "MCP endpoint (loopback only)")
	urlsFlag := fs.String("urls", "", "comma-separated MCP endpoints of a cluster (loopback only); HTTP requests go round-robin over them; overrides -url")
	pidsFlag := fs.String("server-pid", "", "comma-separated server PIDs; if set, report their summed CPU time over the measured phase from /proc/PID/stat")
	fs.StringVar(&c.mode, "mode", "calls", "calls | connect | idle | soak")
	fs.StringVar(&c.tool, "tool", "echo", "scenario: echo | ask | sample | roots | slow (calls test_echo | test_elicitation | test_sampling | test_roots | test_slow)")
	fs.IntVar(&c.sessions, "sessions", 1, "concurrent sessions (calls, idle) or concurrent workers (connect)")
	fs.IntVar(&c.calls, "calls", 0, "calls (or connects) per session/worker; 0 = until -duration")
	fs.DurationVar(&c.duration, "duration", 10*time.Second, "upper bound of the measured phase")
	fs.IntVar(&c.warmup, "warmup", 5, "unmeasured calls per session before the measured phase (calls mode)")
	fs.Float64Var(&c.seconds, "seconds", 0.5, "slow: the 'seconds' argument of test_slow (progress every 100 ms, so floor(seconds*10) notifications per call)")
	fs.IntVar(&c.steps, "steps", 0, "slow: if > 0, also send 'steps' (peer-only override: exactly steps notifications spread over seconds); our server may ignore it")
	fs.BoolVar(&c.progress, "progress", true, "send a progressToken with -tool slow")
	fs.StringVar(&c.proto, "proto", "2025-11-25", "protocol version the client asks for; 'latest' = SDK default (server/discover first, then initialize fallback)")
	fs.IntVar(&c.conc, "conc", 50, "concurrent connects while opening sessions (calls, idle)")
	fs.DurationVar(&c.hold, "hold", 10*time.Second, "idle mode: how long to hold the sessions after IDLE_READY")
	fs.DurationVar(&c.settle, "settle", 2*time.Second, "idle mode: wait after the last connect before IDLE_READY")
	fs.DurationVar(&c.callTimeout, "call-timeout", 30*time.Second, "per call / per connect timeout")
	fs.BoolVar(&c.noSSE, "no-standalone-sse", false, "do not open the standalone GET SSE stream")
	fs.StringVar(&c.label, "label", "", "free text copied into the RESULT line (e.g. server name)")
	fs.Float64Var(&c.rate, "rate", 0, "calls mode: measured calls per second, all sessions together (0 = back to back); the same rate for two servers compares their CPU per call at the same load")
	fs.BoolVar(&h2c, "h2c", false, "speak HTTP/2 without TLS (the server needs --h2c): GET streams share connections")
	fs.IntVar(&c.churn, "churn", 8, "soak mode: workers that each open a session, call -tool once and close it, over and over")
	fs.DurationVar(&c.sample, "sample", 10*time.Second, "soak mode: how often to print a SOAK line")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}

	raw := []string{*urlFlag}
	if *urlsFlag != "" {
		raw = strings.Split(*urlsFlag, ",")
	}
	for _, u := range raw {
		if u = strings.TrimSpace(u); u != "" {
			c.endpoints = append(c.endpoints, u)
		}
	}
	if len(c.endpoints) == 0 {
		return nil, errors.New("no endpoint in -urls")
	}
	for _, u := range c.endpoints {
		if err := checkLoopback(u); err != nil {
			return nil, err
		}
	}
	if *pidsFlag != "" {
		for _, f := range strings.Split(*pidsFlag, ",") {
			p, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || p <= 0 {
				return nil, fmt.Errorf("bad -server-pid: %q", f)
			}
			c.pids = append(c.pids, p)
		}
	}
	for short, name := range toolNames {
		if c.tool == name {
			c.tool = short // the tool names are accepted too
		}
	}
	switch c.mode {
	case "calls", "soak":
		if _, ok := toolNames[c.tool]; !ok {
			return nil, fmt.Errorf("unknown -tool %s", c.tool)
		}
		if c.mode == "soak" && (c.churn < 0 || c.sample <= 0) {
			return nil, fmt.Errorf("soak: -churn must not be negative and -sample must be positive")
		}
	case "connect", "idle":
	default:
		return nil, fmt.Errorf("unknown -mode %s", c.mode)
	}
	if c.rate < 0 {
		return nil, fmt.Errorf("bad -rate %v", c.rate)
	}
	return &c, nil
}

// checkLoopback refuses any endpoint that is not plain HTTP on loopback.
func checkLoopback(u string) error {
	if !strings.HasPrefix(u, "http://127.") && !strings.HasPrefix(u, "http://localhost") && !strings.HasPrefix(u, "http://[::1]") {
		return fmt.Errorf("refusing non-loopback url: %s", u)
	}
	if _, err := url.Parse(u); err != nil {
		return fmt.Errorf("bad url: %w", err)
	}
	return nil
}
