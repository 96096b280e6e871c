package main

import (
	"bufio"
	"io"
	"strconv"
	"strings"
)

// run is one RUN line: its key=value fields.
type run map[string]string

// f is field k as a number; ok is false when it is missing or not a number.
func (r run) f(k string) (float64, bool) {
	v, ok := r[k]
	if !ok || v == "" {
		return 0, false
	}
	x, err := strconv.ParseFloat(v, 64)
	return x, err == nil
}

// dataset holds every run of a raw file, indexed by scenario, server and
// round, with scenarios and servers in order of first appearance.
type dataset struct {
	scenarios []string
	servers   []string
	runs      map[string]map[string]map[string]run // scenario -> server -> round -> run
	modeOf    map[string]string                    // scenario -> load mode (calls, connect, idle)
}

// readRuns parses the RUN lines of in; other lines are skipped.
func readRuns(in io.Reader) (*dataset, error) {
	ds := &dataset{runs: map[string]map[string]map[string]run{}, modeOf: map[string]string{}}
	seenServer := map[string]bool{}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "RUN ") {
			continue
		}
		r := run{}
		for _, tok := range strings.Fields(line[len("RUN "):]) {
			if k, v, ok := strings.Cut(tok, "="); ok {
				r[k] = v
			}
		}
		s, sv, rd := r["scenario"], r["server"], r["round"]
		if s == "" || sv == "" {
			continue
		}
		if ds.runs[s] == nil {
			ds.runs[s] = map[string]map[string]run{}
			ds.scenarios = append(ds.scenarios, s)
		}
		if !seenServer[sv] {
			seenServer[sv] = true
			ds.servers = append(ds.servers, sv)
		}
		if ds.runs[s][sv] == nil {
			ds.runs[s][sv] = map[string]run{}
		}
		ds.runs[s][sv][rd] = r
		if m := r["mode"]; m != "" {
			ds.modeOf[s] = m
		}
	}
	return ds, sc.Err()
}

func (ds *dataset) hasServer(name string) bool {
	for _, s := range ds.servers {
		if s == name {
			return true
		}
	}
	return false
}

// defaultRatioBase is the base of -ratio-line NAME without -base: mcpgo if
// present, else the first server other than NAME.
func (ds *dataset) defaultRatioBase(name string) string {
	b := ""
	for _, sv := range ds.servers {
		if sv != name && (b == "" || sv == "mcpgo") {
			b = sv
		}
	}
	return b
}

// rounds is the number of distinct rounds in the data.
func (ds *dataset) rounds() int {
	seen := map[string]bool{}
	for _, bySrv := range ds.runs {
		for _, byRound := range bySrv {
			for rd := range byRound {
				seen[rd] = true
			}
		}
	}
	return len(seen)
}

// perRoundRatios are num/base of derive for every round in which both ran
// and base's value is non-zero.
func perRoundRatios(base, num map[string]run, derive func(run) (float64, bool)) []float64 {
	var rs []float64
	for rd, b := range base {
		bv, ok := derive(b)
		o, ok2 := num[rd]
		if !ok || !ok2 || bv == 0 {
			continue
		}
		if v, ok := derive(o); ok {
			rs = append(rs, v/bv)
		}
	}
	return rs
}
