#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance,
# pinned with a Node 22 in package.json and package-lock.json) against
# `mcp-actors serve --reference-tools` on a loopback port, with --suite all.
# Exits non-zero when any check fails, or when the suite did not run.
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
echo "conformance: suite=$suite url=$url"

set +e
timeout 600 "$node" node_modules/@modelcontextprotocol/conformance/dist/index.js \
	server --url "$url" --suite "$suite" -o "$out" >"$out/suite.log" 2>&1
status=$?
set -e
sed -n '/=== SUMMARY ===/,$p' "$out/suite.log"
total=$(grep -E '^Total: [0-9]+ passed, [0-9]+ failed' "$out/suite.log" || true)
if [ -z "$total" ]; then
	tail -n 50 "$out/suite.log"
	echo "conformance: the suite did not report a total (exit $status)" >&2
	exit 1
fi
failed=$(echo "$total" | sed -E 's/^Total: [0-9]+ passed, ([0-9]+) failed.*/\1/')
if [ "$status" -ne 0 ] || [ "$failed" -ne 0 ]; then
	echo "conformance: FAILED ($total, exit $status)" >&2
	exit 1
fi
echo "conformance: OK ($total)"
