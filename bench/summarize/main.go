// Command summarize reads the raw "RUN ..." lines that run-peers.sh writes
// and prints a markdown table: per scenario and server the median over
// rounds of each metric (metrics.go), and for every other server the median
// over rounds of its per-round ratio to the base server (both measured in the
// same round, back to back).
//
// With -ratio-line NAME it prints one line instead, the quick verdict
// NAME/base for three headline figures (medians of per-round ratios):
//
//	RATIO echo_cpu=0.43 ask_cpu=0.51 idle_rss=0.38 errors=0
//
// echo_cpu and ask_cpu are server CPU µs per call in echo_s50 and ask_s50,
// idle_rss is VmRSS bytes per idle session in idle_2000 (or the first idle
// scenario), errors sums NAME's call, warm-up and session errors, counting a
// run that gave no result as one. It prints "RATIO n/a" when NAME has no
// runs or is the base. Without -base, the table's base is the first server
// seen and the ratio line's is mcpgo if present, else the first other server.
// -base floor gives every figure against peers/floor ("× floor"); run-peers.sh
// prints "-base floor -ratio-line ours" as its FLOOR line.
//
// Usage: summarize [-base mcpgo|floor] [-ratio-line ours] results/<ts>/raw.txt
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	base := flag.String("base", "", "server the ratios are relative to (default: first server seen)")
	ratioLine := flag.String("ratio-line", "", "print only the one-line RATIO summary of this server against -base")
	flag.Parse()
	if err := summarize(os.Stdout, flag.Arg(0), *base, *ratioLine); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// summarize reads path (stdin when empty) and prints the table or the ratio line.
func summarize(w io.Writer, path, base, ratioOf string) error {
	in := io.Reader(os.Stdin)
	if path != "" {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	ds, err := readRuns(in)
	if err != nil {
		return err
	}
	if ratioOf != "" {
		if base == "" {
			base = ds.defaultRatioBase(ratioOf)
		}
		fmt.Fprintln(w, ratioSummary(ds, base, ratioOf))
		return nil
	}
	if len(ds.servers) == 0 {
		return fmt.Errorf("no RUN lines")
	}
	if base == "" {
		base = ds.servers[0]
	} else if !ds.hasServer(base) {
		return fmt.Errorf("unknown -base %s", base)
	}
	printTable(w, ds, base)
	return nil
}
