#!/usr/bin/env bash
# nemesis.sh - a long randomized fault campaign (issue 30): TestNemesis
# (three serve processes in network namespaces; kill, pause, partition,
# black hole, restart, storage-leader kill) and TestClockNemesis (three
# in-process nodes; clock steps, suspends, drift, jumps), each injecting
# faults for DURATION, then checking every history.
#
#   scripts/nemesis.sh DURATION [SEED]    # e.g. scripts/nemesis.sh 1h
#
# DURATION is a Go duration (90m, 1h30m, 45s). SEED (an int64) replays a
# campaign's schedule of faults: every failure names its seed. Without
# it each test draws one from the time and logs it first.
#
# Runs as root: the process campaign puts each node in a network
# namespace of its own (CI=1 is set, so it fails rather than skips when it
# cannot). The output goes to $RESULTS/<time>/nemesis.log (RESULTS
# defaults to results/nemesis), with the tests' artifacts (Porcupine's
# pictures of a violation, the nodes' logs of a failed run) beside it;
# the summary lines are printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
# go.mod says go 1.27; these machines ignore a toolchain line, so name it.
export GOTOOLCHAIN=${GOTOOLCHAIN:-go1.27.3}

usage() {
	echo "usage: $0 DURATION [SEED]   (DURATION a Go duration: 90m, 1h30m)" >&2
	exit 2
}

# seconds prints a Go duration made of h, m and s parts in whole seconds
# (rounded up), or fails.
seconds() {
	local rest=$1 total=0 n unit
	[[ $rest =~ ^([0-9]+(\.[0-9]+)?(h|m|s))+$ ]] || return 1
	while [[ $rest =~ ^([0-9]+)(\.[0-9]+)?(h|m|s)(.*)$ ]]; do
		n=${BASH_REMATCH[1]}
		[ -n "${BASH_REMATCH[2]}" ] && n=$((n + 1))
		unit=${BASH_REMATCH[3]}
		rest=${BASH_REMATCH[4]}
		case $unit in
		h) total=$((total + n * 3600)) ;;
		m) total=$((total + n * 60)) ;;
		s) total=$((total + n)) ;;
		esac
	done
	echo "$total"
}

[ $# -ge 1 ] && [ $# -le 2 ] || usage
DURATION=$1
SEED=${2:-}
secs=$(seconds "$DURATION") || usage
[ "$secs" -gt 0 ] || usage
if [ -n "$SEED" ] && ! [[ $SEED =~ ^-?[0-9]+$ ]]; then
	echo "SEED must be an int64, got $SEED" >&2
	exit 2
fi
if [ "$(id -u)" != 0 ]; then
	echo "$0 must run as root: TestNemesis puts each node in a network namespace of its own (ip netns)" >&2
	exit 1
fi

# The two tests run one after the other, each for DURATION, then check
# their histories: twice DURATION, and 15 minutes for the rest.
timeout=$((2 * secs + 15 * 60))s
dir=${RESULTS:-results/nemesis}/$(date -u +%Y%m%dT%H%M%SZ)
case $dir in
/*) ;;
*) dir=$PWD/$dir ;;
esac
mkdir -p "$dir"
log=$dir/nemesis.log
echo "nemesis: $DURATION per test${SEED:+, seed $SEED}; timeout $timeout; log $log"

export CI=1 MCP_ACTORS_NEMESIS_DURATION=$DURATION
if [ -n "$SEED" ]; then
	export MCP_ACTORS_NEMESIS_SEED=$SEED
fi
status=0
go test -race -count=1 -v -run '^(TestNemesis|TestClockNemesis)$' -timeout "$timeout" \
	-artifacts -outputdir "$dir" ./tests/faults 2>&1 | tee "$log" || status=$?

echo
echo "=== summary ($log)"
grep -E 'nemesis: seed|nemesis summary:|nemesis: FAILED|violations in a history|^(--- |ok |FAIL)' "$log" || true
exit "$status"
