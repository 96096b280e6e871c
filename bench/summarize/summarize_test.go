package main

import (
	"strings"
	"testing"
)

// raw is two rounds of mcpgo and ours, as run-peers.sh writes them; ours
// has one call error, one run without a result and one idle run that never
// became ready.
const raw = `
RUN round=1 server=mcpgo scenario=echo_s50 mode=calls calls_per_s=5000 server_cpu_us_per_call=100 errors=0 warmup_errors=0 failed_sessions=0
RUN round=1 server=ours scenario=echo_s50 mode=calls calls_per_s=6000 server_cpu_us_per_call=50 errors=1 warmup_errors=0 failed_sessions=0
RUN round=2 server=mcpgo scenario=echo_s50 mode=calls calls_per_s=4000 server_cpu_us_per_call=80 errors=0 warmup_errors=0 failed_sessions=0
RUN round=2 server=ours scenario=echo_s50 mode=calls errors=-1 note=no_result
RUN round=1 server=mcpgo scenario=ask_s50 mode=calls server_cpu_us_per_call=200 errors=0 warmup_errors=0 failed_sessions=0
RUN round=1 server=ours scenario=ask_s50 mode=calls server_cpu_us_per_call=100 errors=0 warmup_errors=0 failed_sessions=0
RUN round=2 server=mcpgo scenario=ask_s50 mode=calls server_cpu_us_per_call=100 errors=0 warmup_errors=0 failed_sessions=0
RUN round=2 server=ours scenario=ask_s50 mode=calls server_cpu_us_per_call=80 errors=0 warmup_errors=0 failed_sessions=0
RUN round=1 server=mcpgo scenario=idle_2000 mode=idle opened=2000 errors=0 rss_base_kb=10000 rss_kb=110000 ready=1
RUN round=1 server=ours scenario=idle_2000 mode=idle opened=2000 errors=0 rss_base_kb=10000 rss_kb=30000 ready=1
RUN round=2 server=ours scenario=idle_2000 mode=idle opened=0 errors=0 rss_base_kb=10000 rss_kb= ready=0
`

func TestRatioLine(t *testing.T) {
	ds, err := readRuns(strings.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	// echo: only round 1 has both (0.5); ask: 0.5 and 0.8 give 0.65;
	// idle: 20000/100000 kB; errors: 1 + 1 (no result) + 1 (not ready).
	want := "RATIO echo_cpu=0.50 ask_cpu=0.65 idle_rss=0.20 errors=3"
	if got := ratioSummary(ds, ds.defaultRatioBase("ours"), "ours"); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := ratioSummary(ds, "ours", "ours"); got != "RATIO n/a" {
		t.Errorf("against itself: got %s, want RATIO n/a", got)
	}
	if got := ratioSummary(ds, "mcpgo", "gosdk"); got != "RATIO n/a" {
		t.Errorf("absent server: got %s, want RATIO n/a", got)
	}
}

func TestTable(t *testing.T) {
	ds, err := readRuns(strings.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	printTable(&sb, ds, "mcpgo")
	out := sb.String()
	for _, row := range []string{
		"| scenario | metric | mcpgo | ours | ours/mcpgo |",
		"| echo_s50 | calls_per_s | 4500 | 6000 | 1.20 |",
		"| echo_s50 | server_cpu_us_per_call | 90.0 | 50.0 | 0.50 |",
		"| echo_s50 | errors (sum) | 0 | 1 |  |", // the no-result run has no warmup_errors, so it is left out
		"| ask_s50 | server_cpu_us_per_call | 150 | 90.0 | 0.65 |",
		"| idle_2000 | RSS bytes/session (VmRSS) | 51200 | 10240 | 0.20 |",
		"Medians over 2 round(s)",
	} {
		if !strings.Contains(out, row) {
			t.Errorf("table lacks %q:\n%s", row, out)
		}
	}
}

func TestMedian(t *testing.T) {
	for _, tt := range []struct {
		xs   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		if got := median(tt.xs); got != tt.want {
			t.Errorf("median(%v) = %v, want %v", tt.xs, got, tt.want)
		}
	}
}

// rawFloor is one round of mcpgo, floor and ours in run-peers.sh's order
// (QUICK=1 runs SERVERS="mcpgo floor ours").
const rawFloor = `
RUN round=1 server=mcpgo scenario=echo_s50 mode=calls server_cpu_us_per_call=100 errors=0 warmup_errors=0 failed_sessions=0
RUN round=1 server=floor scenario=echo_s50 mode=calls server_cpu_us_per_call=40 errors=0 warmup_errors=0 failed_sessions=0
RUN round=1 server=ours scenario=echo_s50 mode=calls server_cpu_us_per_call=60 errors=0 warmup_errors=0 failed_sessions=0
RUN round=1 server=mcpgo scenario=ask_s50 mode=calls server_cpu_us_per_call=200 errors=0 warmup_errors=0 failed_sessions=0
RUN round=1 server=floor scenario=ask_s50 mode=calls server_cpu_us_per_call=100 errors=0 warmup_errors=0 failed_sessions=0
RUN round=1 server=ours scenario=ask_s50 mode=calls server_cpu_us_per_call=150 errors=0 warmup_errors=0 failed_sessions=0
RUN round=1 server=mcpgo scenario=idle_2000 mode=idle opened=2000 errors=0 rss_base_kb=10000 rss_kb=110000 ready=1
RUN round=1 server=floor scenario=idle_2000 mode=idle opened=2000 errors=0 rss_base_kb=10000 rss_kb=20000 ready=1
RUN round=1 server=ours scenario=idle_2000 mode=idle opened=2000 errors=0 rss_base_kb=10000 rss_kb=30000 ready=1
`

// TestBaseFloor checks the figures against the floor: "summarize -base
// floor" for the table and "-base floor -ratio-line ours" for the line that
// run-peers.sh prints as FLOOR.
func TestBaseFloor(t *testing.T) {
	ds, err := readRuns(strings.NewReader(rawFloor))
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	printTable(&sb, ds, "floor")
	out := sb.String()
	for _, row := range []string{
		"| scenario | metric | floor | mcpgo | ours | mcpgo/floor | ours/floor |",
		"| echo_s50 | server_cpu_us_per_call | 40.0 | 100 | 60.0 | 2.50 | 1.50 |",
		"| ask_s50 | server_cpu_us_per_call | 100 | 200 | 150 | 2.00 | 1.50 |",
		"| idle_2000 | RSS bytes/session (VmRSS) | 5120 | 51200 | 10240 | 10.00 | 2.00 |",
	} {
		if !strings.Contains(out, row) {
			t.Errorf("table lacks %q:\n%s", row, out)
		}
	}
	want := "RATIO echo_cpu=1.50 ask_cpu=1.50 idle_rss=2.00 errors=0"
	if got := ratioSummary(ds, "floor", "ours"); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// Without -base the ratio line stays against mcpgo.
	want = "RATIO echo_cpu=0.60 ask_cpu=0.75 idle_rss=0.20 errors=0"
	if got := ratioSummary(ds, ds.defaultRatioBase("ours"), "ours"); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
