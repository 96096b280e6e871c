package main

import "fmt"

// ratioSummary is the -ratio-line output for num against base; see the
// package comment.
func ratioSummary(ds *dataset, base, num string) string {
	has := false
	for _, s := range ds.scenarios {
		if len(ds.runs[s][num]) > 0 {
			has = true
		}
	}
	if !has || base == "" || base == num {
		return "RATIO n/a"
	}
	ratio := func(scen string, derive func(run) (float64, bool)) string {
		rs := perRoundRatios(ds.runs[scen][base], ds.runs[scen][num], derive)
		if len(rs) == 0 {
			return "n/a"
		}
		return fmtRatio(median(rs))
	}
	cpu := field("server_cpu_us_per_call")
	return fmt.Sprintf("RATIO echo_cpu=%s ask_cpu=%s idle_rss=%s errors=%d",
		ratio("echo_s50", cpu), ratio("ask_s50", cpu),
		ratio(ds.idleScenario(), rssPerSession("rss_kb")), ds.errorCount(num))
}

// idleScenario is idle_2000 if present, else the first idle scenario.
func (ds *dataset) idleScenario() string {
	if ds.runs["idle_2000"] != nil {
		return "idle_2000"
	}
	for _, s := range ds.scenarios {
		if ds.modeOf[s] == "idle" {
			return s
		}
	}
	return "idle_2000"
}

// errorCount sums server's call errors, warm-up errors and failed sessions
// over every run; a run that gave no result (errors=-1) or whose idle
// sessions never became ready counts as one error.
func (ds *dataset) errorCount(server string) int {
	errs := 0
	for _, s := range ds.scenarios {
		for _, r := range ds.runs[s][server] {
			for _, k := range []string{"errors", "warmup_errors", "failed_sessions"} {
				if v, ok := r.f(k); ok {
					if v < 0 {
						v = 1
					}
					errs += int(v)
				}
			}
			if r["ready"] == "0" {
				errs++
			}
		}
	}
	return errs
}
