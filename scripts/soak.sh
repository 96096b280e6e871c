#!/usr/bin/env bash
# soak.sh - hold many idle sessions on mcp-actors for a long time while
# other sessions churn (open, call, close), and record what the nodes hold
# and what the calls take, every SAMPLE; then close the held sessions and
# record what is left (a leak would stay). Draws bench/results/soak/NAME.svg.
#
#   scripts/soak.sh                       # 1 node, 100,000 idle sessions, 30 minutes
#   NODES=3 SESSIONS=150000 scripts/soak.sh   # 3 nodes, 50,000 each
#   SESSIONS=5000 DURATION=2m scripts/soak.sh # a quick look
#
# Variables: NODES (1 or 3), SESSIONS (held, all nodes together), DURATION
# (30m), RATE (churns a second, 100), CHURN (churn workers, 16), SAMPLE
# (30s), NAME (the figure's file name, default soak-<nodes>n-<sessions>),
# OUT (raw output directory, default bench/results/<date>-soak). The
# nodes run --h2c, so the sessions' GET streams share connections (a
# machine has ports for about 28,000 connections to one address), with
# --debug for the heap figures and --max-sessions past SESSIONS. Loopback
# only; every process is stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN=${GOTOOLCHAIN:-go1.27.3}
NODES=${NODES:-1}
SESSIONS=${SESSIONS:-100000}
DURATION=${DURATION:-30m}
RATE=${RATE:-100}
CHURN=${CHURN:-16}
SAMPLE=${SAMPLE:-30s}
NAME=${NAME:-soak-${NODES}n-${SESSIONS}}
OUT=${OUT:-bench/results/$(date -u +%Y%m%d-%H%M%S)-soak}
case "$NODES" in 1 | 3) ;; *) echo "NODES must be 1 or 3" >&2; exit 2 ;; esac

mkdir -p "$OUT" bin bench/bin bench/results/soak
go build -o bin/mcp-actors ./cmd/mcp-actors
(cd bench && go build -o bin/load ./load && go build -o bin/soakplot ./soakplot)
ulimit -n 1048576 2>/dev/null || ulimit -n "$(ulimit -Hn)"

pids=()
stop() {
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap stop EXIT

per=$(((SESSIONS + NODES - 1) / NODES))
urls=()
routes="nats-route://127.0.0.1:16321,nats-route://127.0.0.1:16322,nats-route://127.0.0.1:16323"
for i in $(seq 1 "$NODES"); do
	flags=(--listen "127.0.0.1:1818$i" --data-dir "$OUT/n$i" --reference-tools --h2c --debug
		--max-sessions "$((per * 2 + 10000))" --session-ttl 2h)
	if [ "$NODES" = 3 ]; then
		flags+=(--node-id "n$i" --cluster-listen "127.0.0.1:1632$i" --routes "$routes")
	fi
	MCP_ACTORS_CLUSTER_SECRET=soak-cluster-secret bin/mcp-actors serve "${flags[@]}" >"$OUT/n$i.log" 2>&1 &
	pids+=($!)
	urls+=("http://127.0.0.1:1818$i/mcp")
done
for _ in $(seq 1 120); do
	ready=0
	for u in "${urls[@]}"; do
		[ "$(curl -s "${u%/mcp}/readyz" || true)" = "ready" ] && ready=$((ready + 1))
	done
	[ "$ready" = "$NODES" ] && break
	sleep 1
done
[ "$ready" = "$NODES" ] || { echo "the nodes did not become ready; logs in $OUT" >&2; exit 1; }

pidlist=$(IFS=,; echo "${pids[*]}")
urllist=$(IFS=,; echo "${urls[*]}")
echo "soak: $NODES node(s), $SESSIONS idle sessions, $RATE churns/s for $DURATION; raw output in $OUT"
bench/bin/load -h2c -urls "$urllist" -mode soak -tool echo -sessions "$SESSIONS" -conc 64 \
	-churn "$CHURN" -rate "$RATE" -duration "$DURATION" -sample "$SAMPLE" -settle 10s \
	-call-timeout 60s -server-pid "$pidlist" -label "$NAME" | tee "$OUT/soak.out"
bench/bin/soakplot -in "$OUT/soak.out" -out "bench/results/soak/$NAME.svg" \
	-title "$NODES node(s), $SESSIONS idle sessions, $RATE churns/s"
grep -E '^(opened|SOAK|churn|RESULT)' "$OUT/soak.out" >"bench/results/soak/$NAME.txt"
echo "figure: bench/results/soak/$NAME.svg, figures: bench/results/soak/$NAME.txt"
