package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// printTable writes the markdown table of medians and ratio columns
// (other/base) to w, then a line saying how many rounds it is over.
func printTable(w io.Writer, ds *dataset, base string) {
	var others []string
	for _, s := range ds.servers {
		if s != base {
			others = append(others, s)
		}
	}
	hdr := []string{"scenario", "metric", base}
	sep := []string{"---", "---", "---:"}
	hdr = append(hdr, others...)
	for _, o := range others {
		hdr = append(hdr, o+"/"+base)
	}
	for range 2 * len(others) {
		sep = append(sep, "---:")
	}
	fmt.Fprintln(w, "| "+strings.Join(hdr, " | ")+" |")
	fmt.Fprintln(w, "|"+strings.Join(sep, "|")+"|")

	for _, s := range ds.scenarios {
		for _, m := range metricsByMode[ds.modeOf[s]] {
			cells := []string{s, m.name, cell(ds.runs[s][base], m)}
			for _, o := range others {
				cells = append(cells, cell(ds.runs[s][o], m))
			}
			for _, o := range others {
				cells = append(cells, ratioCell(ds.runs[s][base], ds.runs[s][o], m))
			}
			fmt.Fprintln(w, "| "+strings.Join(cells, " | ")+" |")
		}
	}
	fmt.Fprintf(w, "\nMedians over %d round(s); ratio columns are medians of per-round ratios (same round, back-to-back runs).\n", ds.rounds())
}

// cell is the median (or, for sum metrics, the sum) of m over one server's
// rounds; "n/a" when no round has the figure.
func cell(byRound map[string]run, m metric) string {
	var xs []float64
	for _, r := range byRound {
		if v, ok := m.derive(r); ok {
			xs = append(xs, v)
		}
	}
	if len(xs) == 0 {
		return "n/a"
	}
	if m.sum {
		t := 0.0
		for _, x := range xs {
			t += x
		}
		return strconv.FormatFloat(t, 'f', 0, 64)
	}
	return fmtNum(median(xs))
}

// ratioCell is the median of the per-round ratios other/base of m; empty for
// sum metrics.
func ratioCell(base, other map[string]run, m metric) string {
	if m.sum {
		return ""
	}
	rs := perRoundRatios(base, other, m.derive)
	if len(rs) == 0 {
		return "n/a"
	}
	return fmtRatio(median(rs))
}
