#!/usr/bin/env bash
# Measures `agentapp serve` against the reference TypeScript MCP server
# (@modelcontextprotocol/server-everything) in interleaved rounds (every
# measurement once per round, the servers in alternating order), runs the
# Go benchmarks, and writes BENCHMARKS.md from the medians and spreads.
# Rows: the harness on both servers, the chat's bridge against the
# TypeScript SDK client on both, connecting 5 servers, `chat -p` from spawn
# to answer, and the Go benchmarks (the knowledge base's once per round).
# About 3½ minutes at 5 rounds on 2 cores (the 100,000-chunk knowledge
# base is built once, about a minute of it).
#
#   bash bench/compare.sh            # 5 rounds; writes BENCHMARKS.md at the repository root
#   ROUNDS=3 bash bench/compare.sh
#   OUT=/tmp/b.md bash bench/compare.sh
#   bash bench/compare.sh --report-only   # rewrite BENCHMARKS.md from bench/results (after editing NOTES.md or WEB.md)
#
# The raw figures of the last run are kept in bench/results/.
#
# Needs Go and Node.js (with npm, for the first run). Linux only: the
# harness reads /proc.
set -euo pipefail
rounds=${ROUNDS:-5}
case $rounds in '' | *[!0-9]* | 0) echo "compare.sh: ROUNDS must be a whole number ≥ 1, not '$rounds'" >&2; exit 2 ;; esac
cd "$(dirname "$0")/.."
root=$(pwd)
out=${OUT:-$root/BENCHMARKS.md}
saved=$root/bench/results
work=$(mktemp -d "${TMPDIR:-/tmp}/agentapp-bench.XXXXXX")
cleanup() { rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

say() { printf '\n== %s\n' "$*" >&2; }

if [ "${1:-}" != "--report-only" ]; then
started=$(date +%s)
load_start=$(cut -d' ' -f1-3 /proc/loadavg)

say "installing the reference servers (npm)"
bash .ci/install-peers
everything=.ci/peers/node_modules/@modelcontextprotocol/server-everything
[ -f "$everything/dist/index.js" ] || { echo "server-everything is not installed in $everything" >&2; exit 1; }

say "building agentapp and the harness"
# The static, cgo-free build is how agentapp is shipped (see the README):
# nothing in it needs cgo, and it maps fewer library pages than a dynamic one.
CGO_ENABLED=0 go build -o "$work/agentapp" ./cmd/agentapp
# A binary as the linker wrote it sits in the page cache in another shape
# than a file copied or installed, and a process mapping it showed about
# 1.6 MiB more file-backed RSS (text pages) until the file was copied.
# Measure what users run: a copy.
cp "$work/agentapp" "$work/agentapp.copy" && mv "$work/agentapp.copy" "$work/agentapp"
go build -o "$work/mcpbench" ./bench/cmd/mcpbench

# agentapp gets a data directory of its own, initialised once (the first
# start creates and seeds the database) so that every measured start finds
# data, as a user's would.
mkdir -p "$work/data"
"$work/agentapp" --data-dir "$work/data" serve </dev/null 2>/dev/null

results=$work/results.jsonl clients=$work/clients.jsonl spawns=$work/spawns.jsonl connect=$work/connect.jsonl
: >"$results"; : >"$clients"; : >"$spawns"; : >"$connect"
sdk=.ci/peers/node_modules/@modelcontextprotocol/sdk
ours_cmd=("$work/agentapp" --data-dir "$work/data" serve)
ref_cmd=(node "$everything/dist/index.js" stdio)
order_args='{"orderId":"A-1024"}' echo_args='{"message":"hi"}'

harness_ours() {
  "$work/mcpbench" --round "$1" --name "agentapp serve" --tool getOrderStatus --args "$order_args" \
    --calls 2000 --inflight 16 --out "$results" -- "${ours_cmd[@]}" >/dev/null
}
harness_ref() {
  "$work/mcpbench" --round "$1" --name "server-everything (TS)" --tool echo --args "$echo_args" \
    --calls 2000 --inflight 16 --out "$results" -- "${ref_cmd[@]}" >/dev/null
}
# The chat's bridge and the TypeScript SDK client, each against both servers.
clients_on() { # round server-name tool args command…
  local round=$1 server=$2 tool=$3 args=$4 order=(go ts) client
  shift 4
  if [ $((round % 2)) = 0 ]; then order=(ts go); fi
  for client in "${order[@]}"; do
    if [ "$client" = go ]; then
      "$work/mcpbench" bridge --round "$round" --server "$server" --tool "$tool" --args "$args" --out "$clients" -- "$@" >/dev/null
    else
      node bench/tsclient.mjs --sdk "$sdk" --round "$round" --server "$server" --tool "$tool" --args "$args" -- "$@" >>"$clients"
    fi
  done
}
clients_ours() { clients_on "$1" "agentapp serve" getOrderStatus "$order_args" "${ours_cmd[@]}"; }
clients_ref() { clients_on "$1" "server-everything (TS)" echo "$echo_args" "${ref_cmd[@]}"; }

# Interleaved rounds: every measurement once per round, the two servers in
# alternating order, so that a slow stretch of the shared machine falls on
# both and on one round rather than on one server's whole series.
for round in $(seq 1 "$rounds"); do
  if [ $((round % 2)) = 1 ]; then first=ours second=ref; else first=ref second=ours; fi
  say "round $round of $rounds: harness ($first, then $second)"
  "harness_$first" "$round"; "harness_$second" "$round"
  say "round $round of $rounds: bridge and TypeScript SDK client round trips"
  "clients_$first" "$round"; "clients_$second" "$round"
  say "round $round of $rounds: connecting 5 agentapp serve concurrently vs one at a time"
  "$work/mcpbench" connect --round "$round" --name "agentapp serve" --n 5 --rounds 3 --out "$connect" \
    -- "$work/agentapp" --data-dir '{tmpdir}' serve >/dev/null
  say "round $round of $rounds: chat -p with the offline model, spawn to answer"
  "$work/mcpbench" spawn --round "$round" --name "chat -p" --expect "已发货" --runs 20 --out "$spawns" \
    -- "$work/agentapp" --data-dir "$work/data" chat -p "where is order A-1024?" --model offline >/dev/null
done

say "go test -bench (agent loop, bridge, server, knowledge base)"
gobench=$work/gobench.txt
export AGENTAPP_BIN=$work/agentapp
{
  go test -run '^$' -bench '^BenchmarkRunStep$' ./agent
  go test -run '^$' -bench '^(BenchmarkToolsCallGetOrderStatus|BenchmarkToolsCallInMemory.*)$' ./mcpserver
  go test -run '^$' -bench . ./bench/agentappbench
  # The knowledge-base figures are targets: one repetition per round.
  go test -run '^$' -bench '^(BenchmarkSearch|BenchmarkSearch100k|BenchmarkIngest|BenchmarkIngestFloor)$' -count "$rounds" ./kb
} 2>&1 | tee "$gobench" | grep -E '^(Benchmark|ok|FAIL|---)' >&2

versions="$(go version | cut -d' ' -f3-4)
Node.js $(node --version)
server-everything $(node -p "require('./$everything/package.json').version")
TypeScript SDK $(node -p "require('./.ci/peers/node_modules/@modelcontextprotocol/sdk/package.json').version")
Go SDK $(go list -m -f '{{.Version}}' github.com/modelcontextprotocol/go-sdk)"

elapsed=$(( $(date +%s) - started ))
load_end=$(cut -d' ' -f1-3 /proc/loadavg)
busy=$(ps -eo pcpu=,comm= --sort=-pcpu | head -4 | awk '{printf "%s%s %s%%", (NR>1?", ":""), $2, $1}')
# Keep the raw figures, paths shown as $WORK.
mkdir -p "$saved"
for f in results.jsonl clients.jsonl spawns.jsonl connect.jsonl gobench.txt; do sed "s#$work#\$WORK#g" "$work/$f" >"$saved/$f"; done
printf '%s\n' "$versions" >"$saved/versions.txt"
printf '%s\n' "$((elapsed / 60)) min $((elapsed % 60)) s" >"$saved/elapsed.txt"
printf '%s\n' "$load_start at the start of the script and $load_end at its end on $(nproc) CPUs (busiest processes at the end, %CPU: $busy)" >"$saved/load.txt"
date -u +%Y-%m-%dT%H:%M:%SZ >"$saved/date.txt"
else
  go build -o "$work/mcpbench" ./bench/cmd/mcpbench
fi

say "writing $out"
"$work/mcpbench" report --results "$saved/results.jsonl" --connect "$saved/connect.jsonl" \
  --clients "$saved/clients.jsonl" --spawns "$saved/spawns.jsonl" \
  --gobench "$saved/gobench.txt" --notes bench/NOTES.md --append bench/WEB.md --command "bash bench/compare.sh" \
  --versions "$(cat "$saved/versions.txt")" --elapsed "$(cat "$saved/elapsed.txt")" \
  --load "$(cat "$saved/load.txt")" --date "$(cat "$saved/date.txt")" >"$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out" >&2
