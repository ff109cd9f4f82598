#!/usr/bin/env bash
# Measures `agentapp serve` against the reference TypeScript MCP server
# (@modelcontextprotocol/server-everything) side by side in one run, runs
# the Go benchmarks, and writes BENCHMARKS.md. About 3–5 minutes on 2 cores.
#
#   bash bench/compare.sh            # writes BENCHMARKS.md at the repository root
#   OUT=/tmp/b.md bash bench/compare.sh
#   bash bench/compare.sh --report-only   # rewrite BENCHMARKS.md from bench/results (after editing NOTES.md)
#
# The raw figures of the last run are kept in bench/results/.
#
# Needs Go and Node.js (with npm, for the first run). Linux only: the
# harness reads /proc.
set -euo pipefail
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

results=$work/results.jsonl
say "harness: agentapp serve"
"$work/mcpbench" --name "agentapp serve" --tool getOrderStatus --args '{"orderId":"A-1024"}' \
  --calls 2000 --inflight 16 --out "$results" -- "$work/agentapp" --data-dir "$work/data" serve >/dev/null
say "harness: server-everything (TypeScript SDK)"
"$work/mcpbench" --name "server-everything (TS)" --tool echo --args '{"message":"hi"}' \
  --calls 2000 --inflight 16 --out "$results" -- node "$everything/dist/index.js" stdio >/dev/null

say "harness: connecting 5 agentapp serve concurrently vs one at a time"
"$work/mcpbench" connect --name "agentapp serve" --n 5 --rounds 5 --out "$work/connect.json" \
  -- "$work/agentapp" --data-dir '{tmpdir}' serve >/dev/null

say "go test -bench (agent loop, bridge, server, knowledge base)"
gobench=$work/gobench.txt
export AGENTAPP_BIN=$work/agentapp
{
  go test -run '^$' -bench '^BenchmarkRunStep$' ./agent
  go test -run '^$' -bench '^(BenchmarkToolsCallGetOrderStatus|BenchmarkToolsCallInMemory.*)$' ./mcpserver
  go test -run '^$' -bench . ./bench/agentappbench
  go test -run '^$' -bench '^(BenchmarkSearch|BenchmarkIngest)$' ./kb
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
for f in results.jsonl connect.json gobench.txt; do sed "s#$work#\$WORK#g" "$work/$f" >"$saved/$f"; done
printf '%s\n' "$versions" >"$saved/versions.txt"
printf '%s\n' "$((elapsed / 60)) min $((elapsed % 60)) s" >"$saved/elapsed.txt"
printf '%s\n' "$load_start at the start of the script and $load_end at its end on $(nproc) CPUs (busiest processes at the end, %CPU: $busy)" >"$saved/load.txt"
date -u +%Y-%m-%dT%H:%M:%SZ >"$saved/date.txt"
else
  go build -o "$work/mcpbench" ./bench/cmd/mcpbench
fi

say "writing $out"
"$work/mcpbench" report --results "$saved/results.jsonl" --connect "$saved/connect.json" \
  --gobench "$saved/gobench.txt" --notes bench/NOTES.md --command "bash bench/compare.sh" \
  --versions "$(cat "$saved/versions.txt")" --elapsed "$(cat "$saved/elapsed.txt")" \
  --load "$(cat "$saved/load.txt")" --date "$(cat "$saved/date.txt")" >"$out.tmp"
mv "$out.tmp" "$out"
"$work/mcpbench" table "$saved/results.jsonl" >&2
echo "wrote $out" >&2
