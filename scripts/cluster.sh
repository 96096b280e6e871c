#!/usr/bin/env bash
# cluster.sh - start and stop a local three-node mcp-actors cluster on
# loopback: three `mcp-actors serve` processes whose embedded NATS servers
# are joined by routes.
#
#   scripts/cluster.sh start     # builds bin/mcp-actors, starts n1 n2 n3, waits for /readyz
#   scripts/cluster.sh status    # each node's /readyz
#   scripts/cluster.sh stop      # SIGTERM to every node, waits for them to exit
#
# Nodes: n1 on http://127.0.0.1:8081/mcp (routes 127.0.0.1:6221), n2 on
# :8082 (6222), n3 on :8083 (6223). State and logs under .cluster/ (override
# with DIR=...); extra serve flags in SERVE_FLAGS (default
# --reference-tools); the route secret in CLUSTER_SECRET.
set -euo pipefail
cd "$(dirname "$0")/.."
# go.mod says go 1.27; these machines ignore a toolchain line, so name it.
export GOTOOLCHAIN=${GOTOOLCHAIN:-go1.27.3}
DIR=${DIR:-.cluster}
SERVE_FLAGS=${SERVE_FLAGS:---reference-tools}
CLUSTER_SECRET=${CLUSTER_SECRET:-local-cluster-secret}
ROUTES="nats-route://127.0.0.1:6221,nats-route://127.0.0.1:6222,nats-route://127.0.0.1:6223"

start() {
	mkdir -p "$DIR" bin
	go build -o bin/mcp-actors ./cmd/mcp-actors
	for i in 1 2 3; do
		if [ -f "$DIR/n$i.pid" ] && kill -0 "$(cat "$DIR/n$i.pid")" 2>/dev/null; then
			echo "n$i is already running (pid $(cat "$DIR/n$i.pid"))"
			continue
		fi
		# The secret goes in the environment: a flag shows in the process listing.
		# shellcheck disable=SC2086
		MCP_ACTORS_CLUSTER_SECRET="$CLUSTER_SECRET" bin/mcp-actors serve --listen "127.0.0.1:808$i" \
			--node-id "n$i" --data-dir "$DIR/n$i" --cluster-listen "127.0.0.1:622$i" --routes "$ROUTES" \
			$SERVE_FLAGS >"$DIR/n$i.log" 2>&1 &
		echo $! >"$DIR/n$i.pid"
		echo "n$i: pid $!, http://127.0.0.1:808$i/mcp, log $DIR/n$i.log"
	done
	echo "waiting for the cluster to be ready (a new JetStream cluster elects its leader first) ..."
	for _ in $(seq 1 120); do
		ready=0
		for i in 1 2 3; do
			[ "$(curl -s "http://127.0.0.1:808$i/readyz" || true)" = "ready" ] && ready=$((ready + 1))
		done
		if [ "$ready" = 3 ]; then
			echo "ready: http://127.0.0.1:8081/mcp http://127.0.0.1:8082/mcp http://127.0.0.1:8083/mcp"
			return 0
		fi
		sleep 1
	done
	echo "the cluster did not become ready within 120 s; see $DIR/*.log" >&2
	status
	return 1
}

status() {
	for i in 1 2 3; do
		printf 'n%s: %s\n' "$i" "$(curl -s "http://127.0.0.1:808$i/readyz" || echo 'not answering')"
	done
}

stop() {
	for i in 1 2 3; do
		[ -f "$DIR/n$i.pid" ] || continue
		pid=$(cat "$DIR/n$i.pid")
		kill -TERM "$pid" 2>/dev/null || true
	done
	for i in 1 2 3; do
		[ -f "$DIR/n$i.pid" ] || continue
		pid=$(cat "$DIR/n$i.pid")
		for _ in $(seq 1 150); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then
			echo "n$i (pid $pid) did not stop within 15 s; killing it" >&2
			kill -KILL "$pid" 2>/dev/null || true
		fi
		rm -f "$DIR/n$i.pid"
		echo "n$i stopped"
	done
}

case "${1:-}" in
start) start ;;
status) status ;;
stop) stop ;;
*)
	echo "usage: $0 start|status|stop" >&2
	exit 2
	;;
esac
