#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance)
# against `mcp-actors serve --reference-tools` on a loopback port, twice:
#   - the 0.1 line (package.json) for the legacy revisions, --suite all;
#   - the 0.2 line (modern/package.json) for protocol 2026-07-28,
#     --spec-version 2026-07-28 --suite all, with modern/expected-failures.yaml
#     as its baseline (each item there says why).
# Each is pinned with a Node 22. Exits non-zero when any check fails, or when
# a suite did not run.
#
#   conformance/run.sh              # installs, builds, runs; results in conformance/results/
#   SUITE=active conformance/run.sh
set -euo pipefail
cd "$(dirname "$0")"
# go.mod says go 1.27; these machines ignore a toolchain line, so name it.
export GOTOOLCHAIN=${GOTOOLCHAIN:-go1.27.3}
here=$(pwd)
suite=${SUITE:-all}
out=$here/results
rm -rf "$out" && mkdir -p "$out" bin

npm ci --no-audit --no-fund --loglevel=error >/dev/null
(cd modern && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
node=$here/node_modules/.bin/node
"$node" --version
go build -o bin/mcp-actors ../cmd/mcp-actors

log=$out/server.log
bin/mcp-actors serve --listen 127.0.0.1:0 --reference-tools --log-level debug --data-dir "$out/data" >"$log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true' EXIT

url=""
for _ in $(seq 1 100); do # up to 10 s for the server to listen
	url=$(sed -n 's/.*url=\(http:[^ ]*\).*/\1/p' "$log" | head -n 1)
	[ -n "$url" ] && break
	kill -0 "$server" 2>/dev/null || { cat "$log"; echo "conformance: the server exited" >&2; exit 1; }
	sleep 0.1
done
[ -n "$url" ] || { cat "$log"; echo "conformance: the server did not start" >&2; exit 1; }

# run_suite NAME DIR ARGS...: runs the suite installed in DIR with ARGS,
# results in $out/NAME; fails unless every check passed.
run_suite() {
	local name=$1 dir=$2
	shift 2
	local res=$out/$name
	mkdir -p "$res"
	echo "conformance: $name suite=$suite url=$url"
	set +e
	timeout 600 "$node" "$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js" \
		server --url "$url" --suite "$suite" -o "$res" "$@" >"$res/suite.log" 2>&1
	local status=$?
	set -e
	sed -n '/=== SUMMARY ===/,$p' "$res/suite.log"
	local total
	total=$(grep -E '^Total: [0-9]+ passed, [0-9]+ failed' "$res/suite.log" || true)
	if [ -z "$total" ]; then
		tail -n 50 "$res/suite.log"
		echo "conformance: $name: the suite did not report a total (exit $status)" >&2
		return 1
	fi
	local failed
	failed=$(echo "$total" | sed -E 's/^Total: [0-9]+ passed, ([0-9]+) failed.*/\1/')
	# With a baseline, the suite's exit status says whether every failure
	# was expected; without one, nothing may fail.
	if [ "$status" -ne 0 ] || { [ "$failed" -ne 0 ] && [[ " $* " != *" --expected-failures "* ]]; }; then
		echo "conformance: $name FAILED ($total, exit $status)" >&2
		return 1
	fi
	echo "conformance: $name OK ($total)"
}

run_suite legacy "$here"
run_suite modern "$here/modern" --spec-version 2026-07-28 --expected-failures "$here/modern/expected-failures.yaml"
