#!/usr/bin/env bash
# run-peers.sh - our server against the Go MCP peer servers, over Streamable HTTP.
#
# Builds the peers (peers/gosdk, peers/mcpgo, peers/floor, peers/floorcl), the load client
# (load), the table printer (summarize) and our server (../cmd/mcp-actors)
# into bin/.
# Then, for ROUNDS rounds, it runs every scenario on each server in turn
# (A B A B ...), each run on a freshly started server process on a loopback
# port, reads the server's CPU time (utime+stime, /proc/PID/stat) and VmRSS,
# and prints a table of medians with ratio columns X/BASE, a RATIO line
# ours/BASE and, with floor in SERVERS, a FLOOR line ours/floor. Every run
# is bounded (DURATION, or a fixed session count for idle), and every
# process it starts is stopped by PID.
#
# Environment knobs (defaults in brackets):
#   ROUNDS [3]  DURATION [10s]  SESSIONS [50]  CONNECT_WORKERS [10]
#   RATE [unset]: measured calls per second of every call scenario, all
#             sessions together (load -rate); unset, calls go back to back.
#             A rate both servers sustain compares CPU per call at one load.
#   IDLE_SIZES ["2000 10000"]  IDLE_SETTLE [2s]  SMOKE [1]  SLOW_SECONDS [0.5]
#   SERVERS ["gosdk mcpgo ours"]; "floor" is peers/floor, a bare net/http
#             handler answering with canned bytes (no MCP library), the least
#             any server on net/http can cost: SERVERS="gosdk mcpgo floor ours"
#   SCENARIOS ["echo_s1 echo_s50 ask_s50 sample_s50 connect idle"]
#             also known: roots_s50 slow_s50 idle_<N> (idle = every IDLE_SIZES);
#             echo_m1 echo_m50 ask_m50 sample_m50: the same calls from
#             clients at the SDK's default protocol (-proto latest:
#             2026-07-28, stateless, input through input_required rounds)
#   BASE      server the ratio columns divide by [mcpgo if in SERVERS, else
#             the first server]
#   PORT_BASE [18100]  OUT [results/<timestamp>]
#             "floorcl" is peers/floorcl, the cluster's floor: floor's canned
#             answers on NODES_floorcl [3] nodes joined by embedded NATS
#             servers (routes on FLOORCL_ROUTE_PORT [26230] and up), each
#             session's messages carried to its node and nothing else; the
#             least a cluster routing over NATS can cost here. Its routes
#             authenticate with FLOORCL_SECRET [random per run]
#   CMD_<name>  command of a server: "{addr}" becomes 127.0.0.1:PORT, "{port}"
#               PORT and "{node}" the node index (0, 1, ...). It must serve
#               Streamable HTTP at /mcp with the reference tools, and exec
#               the server if it is a wrapper script. CMD_ours defaults to
#               "bin/mcp-actors serve --listen {addr} --reference-tools
#               --debug --log-level warn", built from the repo.
#   NODES_<name> [1]  processes per run of that server, node k on port
#               PORT+100*k; the load client spreads its HTTP requests over
#               them round-robin (-urls) and sums their CPU time. Only for a
#               server whose nodes share sessions (a cluster).
#   READY_<name>  a path each node answers 200 on once it can serve (e.g.
#               /readyz: a cluster's JetStream elects a leader first); the
#               run waits up to 120 s for it after the node listens.
#   QUICK=1   quick check, well under a minute: 1 round, 3 s runs, echo_s50
#             ask_s50 idle_2000, no smoke, SERVERS ["mcpgo floor ours"];
#             explicit knobs win. Its last lines are
#             "RATIO echo_cpu=.. ask_cpu=.. idle_rss=.. errors=N" (ours/BASE)
#             and "FLOOR echo_cpu=.. ask_cpu=.. idle_rss=.. errors=N"
#             (ours/floor, printed whenever floor and ours are in SERVERS).
# Every figure against the floor afterwards:
#   bin/summarize -base floor results/<ts>/raw.txt
# Scenario names keep the short forms: echo_s50 calls test_echo, ask_s50
# test_elicitation, sample_s50 test_sampling, roots_s50 test_roots and
# slow_s50 test_slow. A server that also serves GET /debug/mem (the shape of
# internal/debugmem) gets the post-GC heap and goroutine figures in the idle
# scenario; without it those cells read n/a.
set -uo pipefail
cd "$(dirname "$0")"
# go.mod says go 1.27; these machines ignore a toolchain line, so name it.
export GOTOOLCHAIN=${GOTOOLCHAIN:-go1.27.3}
BENCH=$(pwd)

QUICK=${QUICK:-0}
default_servers="gosdk mcpgo ours"
if [ "$QUICK" = 1 ]; then
	default_servers="mcpgo floor ours"
	ROUNDS=${ROUNDS:-1}
	DURATION=${DURATION:-3s}
	SCENARIOS=${SCENARIOS:-"echo_s50 ask_s50 idle_2000"}
	SMOKE=${SMOKE:-0}
	IDLE_SETTLE=${IDLE_SETTLE:-1s}
fi
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10s}
SESSIONS=${SESSIONS:-50}
CONNECT_WORKERS=${CONNECT_WORKERS:-10}
IDLE_SIZES=${IDLE_SIZES:-"2000 10000"}
IDLE_SETTLE=${IDLE_SETTLE:-2s}
SERVERS=${SERVERS:-$default_servers}
SCENARIOS=${SCENARIOS:-"echo_s1 echo_s50 ask_s50 sample_s50 connect idle"}
SMOKE=${SMOKE:-1}
SLOW_SECONDS=${SLOW_SECONDS:-0.5}
SMOKE_SLOW_SECONDS=${SMOKE_SLOW_SECONDS:-0.3}
PORT_BASE=${PORT_BASE:-18100}
FLOORCL_ROUTE_PORT=${FLOORCL_ROUTE_PORT:-26230}
# floorcl's routes authenticate, as ours do: a random secret per run, in its
# environment (a flag would show in the process listing).
FLOORCL_SECRET=${FLOORCL_SECRET:-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')}
export FLOORCL_SECRET
OUT=${OUT:-$BENCH/results/$(date +%Y%m%d-%H%M%S)}
BIN=$BENCH/bin

has_server() { [[ " $SERVERS " == *" $1 "* ]]; }
if [ -z "${BASE:-}" ]; then
	if has_server mcpgo; then
		BASE=mcpgo
	else
		BASE=${SERVERS%% *}
	fi
fi

mkdir -p "$OUT" "$BIN" || exit 1
RAW=$OUT/raw.txt
LOG=$OUT/runs.log
: >"$RAW"
: >"$LOG"

# idle_10000 holds ~10k sockets in each process.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

echo "building into $BIN ..."
timeout 900 go build -o "$BIN/" ./peers/gosdk ./peers/mcpgo ./peers/floor ./peers/floorcl ./load ./summarize || exit 1
if has_server ours && [ -z "${CMD_ours:-}" ]; then
	timeout 900 go build -C .. -o "$BIN/mcp-actors" ./cmd/mcp-actors || exit 1
	CMD_ours="$BIN/mcp-actors serve --listen {addr} --reference-tools --debug --log-level warn"
fi
echo "go: $(go version)  cpus: $(nproc)  fd limit: $(ulimit -n)  out: $OUT"
echo "peers: $(go list -m -f '{{.Path}} {{.Version}}' github.com/modelcontextprotocol/go-sdk github.com/mark3labs/mcp-go | paste -sd ' ')"

# The server under test: its PIDs, ports and URLs (one per node), and the
# background idle client. Empty when nothing runs.
SPIDS=() SPORTS=() URLS=() CPID=""

cleanup() {
	stop_client
	stop_server
}
trap cleanup EXIT
trap 'exit 130' INT TERM

server_cmd() { # name addr node
	case "$1" in
	gosdk) echo "$BIN/gosdk -addr $2" ;;
	mcpgo) echo "$BIN/mcpgo -addr $2" ;;
	floor) echo "$BIN/floor -addr $2" ;;
	floorcl)
		local routes=() k
		for ((k = 0; k < $(nodes_of floorcl); k++)); do routes+=("nats-route://127.0.0.1:$((FLOORCL_ROUTE_PORT + k))"); done
		echo "$BIN/floorcl -addr $2 -node $3 -cluster-listen 127.0.0.1:$((FLOORCL_ROUTE_PORT + $3)) -routes $(csv "${routes[@]}")"
		;;
	*)
		local var="CMD_$1" c
		if [ -z "${!var:-}" ]; then
			echo "no command for server '$1' (set $var)" >&2
			return 1
		fi
		c=${!var//\{addr\}/$2}
		c=${c//\{port\}/${2##*:}}
		echo "${c//\{node\}/$3}"
		;;
	esac
}

port_of() { # name -> port of its node 0
	local i=0 s
	for s in $SERVERS; do
		if [ "$s" = "$1" ]; then
			echo $((PORT_BASE + i))
			return
		fi
		i=$((i + 1))
	done
}

nodes_of() { # name
	local var="NODES_$1" def=1
	[ "$1" = floorcl ] && def=3
	echo "${!var:-$def}"
}

csv() { local IFS=,; echo "$*"; }

listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# start_server name: starts its nodes and waits up to 10 s for each to listen
# (and for READY_<name>, if set).
start_server() {
	local name=$1 port0 n k cmd i
	port0=$(port_of "$name")
	n=$(nodes_of "$name")
	for ((k = 0; k < n; k++)); do
		local port=$((port0 + 100 * k))
		cmd=$(server_cmd "$name" "127.0.0.1:$port" "$k") || {
			stop_server
			return 1
		}
		if listening "$port"; then
			echo "port $port is already in use" >&2
			stop_server
			return 1
		fi
		# shellcheck disable=SC2086
		$cmd >>"$OUT/server-$name.log" 2>&1 &
		SPIDS+=("$!")
		SPORTS+=("$port")
		URLS+=("http://127.0.0.1:$port/mcp")
	done
	for k in "${!SPORTS[@]}"; do
		for i in $(seq 1 200); do
			listening "${SPORTS[$k]}" && break
			if ! kill -0 "${SPIDS[$k]}" 2>/dev/null; then
				echo "server $name (node $k) exited at start" >&2
				stop_server
				return 1
			fi
			sleep 0.05
		done
		if ! listening "${SPORTS[$k]}"; then
			echo "server $name (node $k) did not listen on ${SPORTS[$k]}" >&2
			stop_server
			return 1
		fi
	done
	local rvar="READY_$name"
	[ "$name" = floorcl ] && [ -z "${!rvar:-}" ] && local READY_floorcl=/readyz
	[ -n "${!rvar:-}" ] || return 0
	for k in "${!SPORTS[@]}"; do
		for i in $(seq 1 1200); do
			curl -sf -o /dev/null "http://127.0.0.1:${SPORTS[$k]}${!rvar}" && break
			sleep 0.1
		done
		if ! curl -sf -o /dev/null "http://127.0.0.1:${SPORTS[$k]}${!rvar}"; then
			echo "server $name (node $k) not ready at ${!rvar} after 120 s" >&2
			stop_server
			return 1
		fi
	done
}

# stop_server: SIGTERM to every node, SIGKILL after 5 s.
stop_server() {
	[ ${#SPIDS[@]} -gt 0 ] || return 0
	local pid i alive
	for pid in "${SPIDS[@]}"; do kill -TERM "$pid" 2>/dev/null; done
	for i in $(seq 1 100); do
		alive=0
		for pid in "${SPIDS[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
		[ $alive = 1 ] || break
		sleep 0.05
	done
	for pid in "${SPIDS[@]}"; do
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	SPIDS=() SPORTS=() URLS=()
}

# rss_kb: VmRSS of the server, summed over its nodes.
rss_kb() {
	local pid v sum=0
	for pid in "${SPIDS[@]}"; do
		v=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null)
		[ -n "$v" ] || return 0
		sum=$((sum + v))
	done
	echo "$sum"
}

# mem_snapshot [gc]: sets HEAP STACK GOR from /debug/mem, summed over the
# nodes (all empty if a node does not serve it).
mem_snapshot() {
	local q="" j port h s g
	[ "${1:-}" = gc ] && q="?gc=1"
	HEAP=0 STACK=0 GOR=0
	for port in "${SPORTS[@]}"; do
		j=$(curl -s -m 10 "http://127.0.0.1:$port/debug/mem$q" || true)
		h=$(grep -o '"heap_alloc":[0-9]*' <<<"$j" | cut -d: -f2)
		s=$(grep -o '"stack_inuse":[0-9]*' <<<"$j" | cut -d: -f2)
		g=$(grep -o '"goroutines":[0-9]*' <<<"$j" | cut -d: -f2)
		if [ -z "$h" ] || [ -z "$s" ] || [ -z "$g" ]; then
			HEAP="" STACK="" GOR=""
			return
		fi
		HEAP=$((HEAP + h)) STACK=$((STACK + s)) GOR=$((GOR + g))
	done
}

# start_client out load-args...: starts the load client in the background
# as CPID, bounded by timeout 600 on top of its own watchdog.
start_client() {
	local out=$1
	shift
	timeout 600 "$BIN/load" "$@" >"$out" 2>&1 &
	CPID=$!
}

# wait_client: waits for the load client to end. A signal to the script
# interrupts the wait at once, and cleanup stops the client.
wait_client() {
	wait "$CPID" 2>/dev/null
	CPID=""
}

# stop_client: SIGTERM to the load client (timeout passes it on; the client
# then closes its sessions and prints its RESULT), SIGKILL after 60 s.
stop_client() {
	[ -n "$CPID" ] || return 0
	kill -TERM "$CPID" 2>/dev/null
	local i
	for i in $(seq 1 600); do
		kill -0 "$CPID" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$CPID" 2>/dev/null; then
		kill -KILL $(pgrep -P "$CPID") "$CPID" 2>/dev/null
	fi
	wait "$CPID" 2>/dev/null
	CPID=""
}

show() { # RUN line -> short console line
	local line=$1 k v out=""
	for k in calls_per_s connects_per_s p50_us p99_us server_cpu_us_per_call errors proto progress_notes progress_expected; do
		v=$(grep -o " $k=[^ ]*" <<<"$line" | head -1)
		out+="$v"
	done
	echo "$out"
}

# run_load round name scenario load-args...: one measured run on a fresh server.
run_load() {
	local round=$1 name=$2 scen=$3
	shift 3
	start_server "$name" || {
		echo "RUN round=$round server=$name scenario=$scen mode=? errors=-1 note=server_failed" >>"$RAW"
		return
	}
	echo "=== round=$round server=$name scenario=$scen pids=$(csv "${SPIDS[@]}"): load $*" >>"$LOG"
	start_client "$OUT/last.out" -urls "$(csv "${URLS[@]}")" -server-pid "$(csv "${SPIDS[@]}")" -label "$name" ${RATE:+-rate "$RATE"} "$@"
	wait_client
	cat "$OUT/last.out" >>"$LOG"
	local res line
	res=$(grep '^RESULT ' "$OUT/last.out" | tail -1)
	[ -n "$res" ] || res="RESULT mode=? errors=-1 note=no_result"
	line="RUN round=$round server=$name scenario=$scen ${res#RESULT }"
	echo "$line" >>"$RAW"
	printf '  r%s %-6s %-11s%s\n' "$round" "$name" "$scen" "$(show "$line")"
	stop_server
}

# run_idle round name n: memory of n idle sessions with their GET streams open.
run_idle() {
	local round=$1 name=$2 n=$3 scen="idle_$3" urls
	start_server "$name" || {
		echo "RUN round=$round server=$name scenario=$scen mode=idle errors=-1 note=server_failed" >>"$RAW"
		return
	}
	urls=$(csv "${URLS[@]}")
	echo "=== round=$round server=$name scenario=$scen pids=$(csv "${SPIDS[@]}")" >>"$LOG"
	# One short session first, so one-time initialisation is in the baseline.
	start_client "$OUT/last.out" -urls "$urls" -sessions 1 -calls 5 -warmup 0 -duration 5s
	wait_client
	cat "$OUT/last.out" >>"$LOG"
	sleep 0.5
	local rss_base gor_base heap_base stack_base
	rss_base=$(rss_kb)
	mem_snapshot gc
	heap_base=$HEAP stack_base=$STACK gor_base=$GOR

	start_client "$OUT/idle.out" -urls "$urls" -mode idle -sessions "$n" -hold 300s -settle "$IDLE_SETTLE" -label "$name"
	local i ready=0
	for i in $(seq 1 1200); do # up to 120 s to open the sessions
		if grep -q '^IDLE_READY' "$OUT/idle.out"; then
			ready=1
			break
		fi
		kill -0 "$CPID" 2>/dev/null || break
		sleep 0.1
	done
	local rss_n="" rss_gc="" gor_n="" heap_gc="" stack_n="" heap_closed=""
	if [ $ready = 1 ]; then
		sleep 1
		rss_n=$(rss_kb)
		mem_snapshot
		gor_n=$GOR
		mem_snapshot gc
		heap_gc=$HEAP stack_n=$STACK
		rss_gc=$(rss_kb)
	fi
	stop_client # the client closes its sessions, then prints its RESULT
	cat "$OUT/idle.out" >>"$LOG"
	sleep 0.5
	mem_snapshot gc
	heap_closed=$HEAP
	local res line per="n/a"
	res=$(grep '^RESULT ' "$OUT/idle.out" | tail -1)
	[ -n "$res" ] || res="RESULT mode=idle errors=-1 note=no_result"
	line="RUN round=$round server=$name scenario=$scen ${res#RESULT } rss_base_kb=$rss_base rss_kb=$rss_n rss_gc_kb=$rss_gc heap_base=$heap_base stack_base=$stack_base gor_base=$gor_base heap_gc=$heap_gc stack_n=$stack_n gor_n=$gor_n heap_closed=$heap_closed ready=$ready"
	echo "$line" >>"$RAW"
	if [ -n "$rss_n" ] && [ -n "$rss_base" ]; then
		per=$(((rss_n - rss_base) * 1024 / n))
	fi
	printf '  r%s %-6s %-11s opened=%s rss_kb %s->%s (%s B/session) goroutines %s->%s%s\n' \
		"$round" "$name" "$scen" "$(grep -o 'opened=[0-9]*' <<<"$line" | cut -d= -f2)" \
		"$rss_base" "$rss_n" "$per" "$gor_base" "$gor_n" "$(grep -o ' connects_per_s=[^ ]*' <<<"$line")"
	stop_server
}

# smoke: every tool on every server, 2 sessions x 20 calls (test_slow: 5
# calls), at the pinned protocol and at the SDK's default ('latest').
smoke() {
	echo "== smoke: every tool, 2 sessions x 20 calls (slow: 5 calls of $SMOKE_SLOW_SECONDS s), pinned protocol 2025-11-25 and SDK-default 'latest'"
	local name tool proto n res firsterr
	for name in $SERVERS; do
		start_server "$name" || continue
		for proto in 2025-11-25 latest; do
			for tool in echo ask sample roots slow; do
				n=20
				[ "$tool" = slow ] && n=5
				echo "=== smoke server=$name tool=$tool proto=$proto" >>"$LOG"
				start_client "$OUT/last.out" -urls "$(csv "${URLS[@]}")" -tool "$tool" -sessions 2 -calls "$n" -warmup 0 -duration 10s -seconds "$SMOKE_SLOW_SECONDS" -proto "$proto"
				wait_client
				cat "$OUT/last.out" >>"$LOG"
				res=$(grep '^RESULT ' "$OUT/last.out" | tail -1)
				firsterr=$(grep -m1 '^error' "$OUT/last.out" | cut -c1-220)
				echo "SMOKE server=$name tool=$tool asked=$proto $(grep -o 'proto=[^ ]*' <<<"$res" | sed 's/proto=/negotiated=/') $(grep -o ' calls=[^ ]*' <<<"$res") $(grep -o ' errors=[^ ]*' <<<"$res") $(grep -o 'progress_notes=[^ ]* progress_expected=[^ ]* progress_bad_calls=[^ ]*' <<<"$res") ${firsterr:+first_error=\"$firsterr\"}" | tee -a "$OUT/smoke.txt"
			done
		done
		stop_server
	done
}

# run_scenario round scenario name
run_scenario() {
	local round=$1 scen=$2 name=$3 n
	case "$scen" in
	echo_s1) run_load "$round" "$name" "$scen" -tool echo -sessions 1 -duration "$DURATION" ;;
	echo_s50) run_load "$round" "$name" "$scen" -tool echo -sessions "$SESSIONS" -duration "$DURATION" ;;
	ask_s50) run_load "$round" "$name" "$scen" -tool ask -sessions "$SESSIONS" -duration "$DURATION" ;;
	sample_s50) run_load "$round" "$name" "$scen" -tool sample -sessions "$SESSIONS" -duration "$DURATION" ;;
	roots_s50) run_load "$round" "$name" "$scen" -tool roots -sessions "$SESSIONS" -duration "$DURATION" ;;
	# The same calls from clients at the SDK's default protocol (2026-07-28
	# when the server speaks it: no session, input through input_required
	# rounds).
	echo_m1) run_load "$round" "$name" "$scen" -tool echo -sessions 1 -duration "$DURATION" -proto latest ;;
	echo_m50) run_load "$round" "$name" "$scen" -tool echo -sessions "$SESSIONS" -duration "$DURATION" -proto latest ;;
	ask_m50) run_load "$round" "$name" "$scen" -tool ask -sessions "$SESSIONS" -duration "$DURATION" -proto latest ;;
	sample_m50) run_load "$round" "$name" "$scen" -tool sample -sessions "$SESSIONS" -duration "$DURATION" -proto latest ;;
	slow_s50) run_load "$round" "$name" "$scen" -tool slow -seconds "$SLOW_SECONDS" -sessions "$SESSIONS" -duration "$DURATION" ;;
	connect) run_load "$round" "$name" "$scen" -mode connect -sessions "$CONNECT_WORKERS" -duration "$DURATION" ;;
	idle)
		for n in $IDLE_SIZES; do run_idle "$round" "$name" "$n"; done
		;;
	idle_[0-9]*) run_idle "$round" "$name" "${scen#idle_}" ;;
	*) echo "unknown scenario $scen" >&2 ;;
	esac
}

T0=$SECONDS
echo "servers: $SERVERS  base: $BASE  scenarios: $SCENARIOS  rounds: $ROUNDS  duration: $DURATION"
[ "$SMOKE" = 1 ] && smoke

for round in $(seq 1 "$ROUNDS"); do
	echo "== round $round/$ROUNDS ($((SECONDS - T0)) s elapsed)"
	for scen in $SCENARIOS; do
		for name in $SERVERS; do
			run_scenario "$round" "$scen" "$name"
		done
	done
done

if [ -s "$OUT/smoke.txt" ]; then
	echo
	echo "== smoke"
	cat "$OUT/smoke.txt"
fi
echo
echo "== summary (raw: $RAW, log: $LOG), total $((SECONDS - T0)) s"
"$BIN/summarize" -base "$BASE" "$RAW" | tee "$OUT/summary.md"
if [ "$QUICK" = 1 ] || has_server ours; then
	if has_server ours && [ "$BASE" != ours ]; then
		echo "(RATIO = ours/$BASE: echo_s50 and ask_s50 server CPU per call, idle VmRSS per session; errors = ours' errors)"
		"$BIN/summarize" -base "$BASE" -ratio-line ours "$RAW" | tee -a "$OUT/summary.md"
	else
		echo "RATIO n/a" | tee -a "$OUT/summary.md"
	fi
	if has_server ours && has_server floor; then
		echo "(FLOOR = ours/floor, the same figures against bare net/http with canned bytes; all of them: bin/summarize -base floor $RAW)"
		"$BIN/summarize" -base floor -ratio-line ours "$RAW" | sed 's/^RATIO/FLOOR/' | tee -a "$OUT/summary.md"
	fi
fi
