#!/usr/bin/env bash
# Measures `agentapp serve` against the reference TypeScript MCP server
# (@modelcontextprotocol/server-everything) in interleaved rounds (every
# measurement once per round, the servers in alternating order), runs the
# Go benchmarks, and writes BENCHMARKS.md from the medians and spreads.
#
# Rows, per round:
#   - the harness (bench/cmd/mcpbench) on both servers over stdio;
#   - the chat's bridge and the TypeScript SDK client, each on both servers;
#   - the TypeScript SDK client on both servers with a tool of the same kind
#     on each (outputSchema and structuredContent: getOrderStatus against
#     get-structured-content): p50/p99, calls/s sequential and 16 in flight,
#     server CPU per call, cold start through that client; and the same
#     client on bench/cmd/stdiofloor, a zero-work server answering with
#     agentapp's own bytes (the most any server gets through that client);
#   - streamable HTTP: `serve --http` (stateful and --stateless) against
#     server-everything's streamableHttp and against bench/cmd/gosdkfloor
#     (a bare Go SDK server, the floor), 1, 16 and 256 sessions, driven by
#     `mcpbench http`; and the TypeScript SDK client over HTTP, 16 sessions;
#   - `agentapp web` with the offline model: the chat API and /v1, 200
#     turns at once (`mcpbench web`);
#   - connecting 5 servers, `chat -p` from spawn to answer;
# then the Go benchmarks (per-turn host overhead, agent loop, bridge,
# server, knowledge base; the knowledge base's and the turn's once per round).
# Time: the row sets before issue 31 took about 3½ minutes at 5 rounds on
# the quiet 2-core machine (the 100,000-chunk knowledge base is built once,
# about a minute of it); the new ones add about 30 s a round by their parts
# (TypeScript client rows ~6 s, HTTP ~15 s, web ~3 s, the turn benchmark),
# so about 6 minutes, well inside 10. Not yet timed on a quiet machine: a
# 1-round trial at a load of 25–30 took 18 minutes. bench/results/elapsed.txt
# records each run's time. HTTPCALLS=N multiplies the HTTP rows' calls.
#
#   bash bench/compare.sh            # 5 rounds; writes BENCHMARKS.md at the repository root
#   ROUNDS=3 bash bench/compare.sh
#   OUT=/tmp/b.md bash bench/compare.sh
#   bash bench/compare.sh --report-only   # rewrite BENCHMARKS.md from bench/results (after editing NOTES.md or WEB.md)
#   KEEP=1 ROUNDS=1 OUT=/tmp/b.md bash bench/compare.sh   # a trial run; keeps its working directory (logs, raw figures)
#
# The raw figures of the last run are kept in bench/results/.
#
# Needs Go and Node.js (with npm, for the first run). Linux only: the
# harness reads /proc.
set -euo pipefail
rounds=${ROUNDS:-5}
case $rounds in '' | *[!0-9]* | 0) echo "compare.sh: ROUNDS must be a whole number ≥ 1, not '$rounds'" >&2; exit 2 ;; esac
httpcalls=${HTTPCALLS:-1}
case $httpcalls in '' | *[!0-9]* | 0) echo "compare.sh: HTTPCALLS must be a whole number ≥ 1, not '$httpcalls'" >&2; exit 2 ;; esac
cd "$(dirname "$0")/.."
root=$(pwd)
out=${OUT:-$root/BENCHMARKS.md}
saved=$root/bench/results
work=$(mktemp -d "${TMPDIR:-/tmp}/agentapp-bench.XXXXXX")
srv_pid=
cleanup() {
  if [ -n "$srv_pid" ]; then kill "$srv_pid" 2>/dev/null || true; wait "$srv_pid" 2>/dev/null || true; fi
  if [ -n "${KEEP:-}" ]; then echo "compare.sh: the run's files are kept in $work" >&2; else rm -rf "$work"; fi
}
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
# The harness is a module of its own (bench/go.mod), built from its folder.
go -C bench build -o "$work/mcpbench" ./cmd/mcpbench
go -C bench build -o "$work/gosdkfloor" ./cmd/gosdkfloor
go -C bench build -o "$work/stdiofloor" ./cmd/stdiofloor

# agentapp gets a data directory of its own, initialised once (the first
# start creates and seeds the database) so that every measured start finds
# data, as a user's would.
mkdir -p "$work/data"
"$work/agentapp" --data-dir "$work/data" serve </dev/null 2>/dev/null
mkdir -p "$work/webdata"
"$work/agentapp" --data-dir "$work/webdata" serve </dev/null 2>/dev/null
# The zero-work server's one answer: agentapp's own, byte for byte.
"$work/stdiofloor" capture --tool getOrderStatus --args '{"orderId":"A-1024"}' \
  -- "$work/agentapp" --data-dir "$work/data" serve >"$work/floor-result.json" 2>/dev/null

results=$work/results.jsonl clients=$work/clients.jsonl spawns=$work/spawns.jsonl connect=$work/connect.jsonl
ts=$work/ts.jsonl http=$work/http.jsonl web=$work/web.jsonl
: >"$results"; : >"$clients"; : >"$spawns"; : >"$connect"; : >"$ts"; : >"$http"; : >"$web"
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

# The TypeScript SDK client on both servers, with a tool of the same kind on
# each: outputSchema and structuredContent, which the client validates.
weather_args='{"location":"New York"}'
ts_floor_name="zero-work server (bench/cmd/stdiofloor)"
ts_ours() {
  node bench/tsclient.mjs --sdk "$sdk" --round "$1" --server "agentapp serve" --tool getOrderStatus --args "$order_args" \
    --calls 2000 --inflight 16 --cold 5 --structured 1 -- "${ours_cmd[@]}" >>"$ts"
}
# The same client on bench/cmd/stdiofloor, which answers with those bytes
# and does nothing else: the most any server gets through this client here.
ts_floor() {
  node bench/tsclient.mjs --sdk "$sdk" --round "$1" --server "$ts_floor_name" --tool getOrderStatus --args "$order_args" \
    --calls 2000 --inflight 16 --structured 1 -- "$work/stdiofloor" serve --result "$work/floor-result.json" >>"$ts"
}
ts_ref() {
  node bench/tsclient.mjs --sdk "$sdk" --round "$1" --server "server-everything (TS)" --tool get-structured-content --args "$weather_args" \
    --calls 2000 --inflight 16 --cold 5 --structured 1 -- "${ref_cmd[@]}" >>"$ts"
}

# Streamable HTTP. Each load gets a server of its own, started here on a
# free port (srv_pid, url) and stopped after it, so that its memory is
# measured from the same start.
http_start() { # kind
  local port
  port=$("$work/mcpbench" freeport)
  url=http://127.0.0.1:$port/mcp
  # Every session of the load comes from 127.0.0.1, as behind a proxy:
  # serve's per-address bound (32 connections) would refuse most of 256
  # sessions, and its bound on all connections (256) some of them, since
  # the load generator keeps up to two per session.
  case $1 in
    ours) "$work/agentapp" --data-dir "$work/data" serve --http "127.0.0.1:$port" --max-conns 1024 --max-conns-per-addr -1 2>>"$work/http.log" & ;;
    ours-stateless) "$work/agentapp" --data-dir "$work/data" serve --http "127.0.0.1:$port" --stateless --max-conns 1024 --max-conns-per-addr -1 2>>"$work/http.log" & ;;
    floor) "$work/gosdkfloor" --addr "127.0.0.1:$port" 2>>"$work/http.log" & ;;
    floor-stateless) "$work/gosdkfloor" --addr "127.0.0.1:$port" --stateless 2>>"$work/http.log" & ;;
    ref) PORT=$port node "$everything/dist/index.js" streamableHttp >/dev/null 2>>"$work/http.log" & ;;
  esac
  srv_pid=$!
}
http_stop() {
  kill "$srv_pid" 2>/dev/null || true
  wait "$srv_pid" 2>/dev/null || true
  srv_pid=
}
http_name() {
  case $1 in
    ours) echo "agentapp serve --http" ;;
    ours-stateless) echo "agentapp serve --http --stateless" ;;
    floor) echo "Go SDK floor" ;;
    floor-stateless) echo "Go SDK floor --stateless" ;;
    ref) echo "server-everything (TS)" ;;
  esac
}
# with_http_server runs "$@" (which reads $url and $srv_pid) against a
# fresh server of the kind. A server that exited before it answered (its
# free port taken in between, seen once in 50 starts) is started again on
# another port, up to 3 times; a load that failed against a running server
# fails the run.
with_http_server() { # kind command…
  local kind=$1 try
  shift
  for try in 1 2 3; do
    http_start "$kind"
    if "$@"; then
      http_stop
      return
    fi
    if kill -0 "$srv_pid" 2>/dev/null; then
      http_stop
      return 1
    fi
    http_stop
    say "$(http_name "$kind") exited before it answered (try $try of 3); its log: $(tail -n 3 "$work/http.log" | tr '\n' ' ')"
  done
  return 1
}
http_load() { # round kind sessions calls-per-session
  local tool=getOrderStatus args=$order_args flags=()
  if [ "$2" = ref ]; then tool=get-structured-content args=$weather_args; fi
  case $2 in *-stateless) flags=(--stateless) ;; esac
  with_http_server "$2" mcpbench_http "$1" "$2" "$3" "$4" "$tool" "$args" "${flags[@]}"
}
mcpbench_http() { # round kind sessions calls tool args [flags…]
  local round=$1 kind=$2 sessions=$3 calls=$4 tool=$5 args=$6
  shift 6
  "$work/mcpbench" http --round "$round" --name "$(http_name "$kind")" --url "$url" --pid "$srv_pid" "$@" \
    --sessions "$sessions" --calls "$calls" --warmup 5 --tool "$tool" --args "$args" --out "$http" >/dev/null
}
http_all() { # round kinds…
  local round=$1 kind
  shift
  for kind in "$@"; do
    http_load "$round" "$kind" 1 $((1000 * httpcalls))
    http_load "$round" "$kind" 16 $((100 * httpcalls))
    http_load "$round" "$kind" 256 $((10 * httpcalls))
  done
}
# The TypeScript SDK client over HTTP: 16 clients, a session each.
http_ts() { # round kind
  local tool=getOrderStatus args=$order_args
  if [ "$2" = ref ]; then tool=get-structured-content args=$weather_args; fi
  with_http_server "$2" tsclient_http "$1" "$2" "$tool" "$args"
}
tsclient_http() { # round kind tool args
  node bench/tsclient.mjs --sdk "$sdk" --round "$1" --server "$(http_name "$2")" --tool "$3" --args "$4" \
    --url "$url" --pid "$srv_pid" --sessions 16 --calls $((100 * httpcalls)) --warmup 5 --structured 1 >>"$ts"
}
# agentapp web with the offline model, a fresh process for each API.
web_load() { # round api
  local port
  port=$("$work/mcpbench" freeport)
  "$work/agentapp" --data-dir "$work/webdata" web --http "127.0.0.1:$port" --model offline 2>>"$work/web.log" &
  srv_pid=$!
  "$work/mcpbench" web --round "$1" --url "http://127.0.0.1:$port" --pid "$srv_pid" --api "$2" --sessions 200 --repeats 3 --warmup 1 --out "$web" >/dev/null
  http_stop
}

# Interleaved rounds: every measurement once per round, the two servers in
# alternating order, so that a slow stretch of the shared machine falls on
# both and on one round rather than on one server's whole series.
for round in $(seq 1 "$rounds"); do
  if [ $((round % 2)) = 1 ]; then first=ours second=ref; else first=ref second=ours; fi
  say "round $round of $rounds: harness ($first, then $second)"
  "harness_$first" "$round"; "harness_$second" "$round"
  say "round $round of $rounds: bridge and TypeScript SDK client round trips"
  "clients_$first" "$round"; "clients_$second" "$round"
  say "round $round of $rounds: the TypeScript SDK client, the same kind of tool on both servers"
  "ts_$first" "$round"; ts_floor "$round"; "ts_$second" "$round"
  say "round $round of $rounds: streamable HTTP, 1, 16 and 256 sessions"
  if [ "$first" = ours ]; then http_all "$round" ours ours-stateless floor floor-stateless ref; else http_all "$round" ref floor-stateless floor ours-stateless ours; fi
  say "round $round of $rounds: the TypeScript SDK client over HTTP, 16 sessions"
  if [ "$first" = ours ]; then http_ts "$round" ours; http_ts "$round" ref; else http_ts "$round" ref; http_ts "$round" ours; fi
  say "round $round of $rounds: agentapp web, 200 turns at once (chat API, then /v1)"
  web_load "$round" chat; web_load "$round" v1
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
  go -C bench test -run '^$' -bench '^Benchmark[^T]' ./agentappbench
  # The per-turn host overhead is a target: one repetition per round.
  go -C bench test -run '^$' -bench '^BenchmarkTurnOverhead$' -benchtime 300x -count "$rounds" ./agentappbench
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
for f in results.jsonl clients.jsonl spawns.jsonl connect.jsonl ts.jsonl http.jsonl web.jsonl gobench.txt; do sed "s#$work#\$WORK#g" "$work/$f" >"$saved/$f"; done
printf '%s\n' "$versions" >"$saved/versions.txt"
printf '%s\n' "$((elapsed / 60)) min $((elapsed % 60)) s" >"$saved/elapsed.txt"
printf '%s\n' "$load_start at the start of the script and $load_end at its end on $(nproc) CPUs (busiest processes at the end, %CPU: $busy)" >"$saved/load.txt"
date -u +%Y-%m-%dT%H:%M:%SZ >"$saved/date.txt"
else
  go -C bench build -o "$work/mcpbench" ./cmd/mcpbench
fi

say "writing $out"
# The row sets added later are optional, so that results kept from an
# earlier run still make a report.
more=()
for f in ts http web; do
  if [ -s "$saved/$f.jsonl" ]; then more+=(--"$f" "$saved/$f.jsonl"); fi
done
"$work/mcpbench" report --results "$saved/results.jsonl" --connect "$saved/connect.jsonl" \
  --clients "$saved/clients.jsonl" --spawns "$saved/spawns.jsonl" "${more[@]}" \
  --gobench "$saved/gobench.txt" --notes bench/NOTES.md --append bench/WEB.md --command "bash bench/compare.sh" \
  --versions "$(cat "$saved/versions.txt")" --elapsed "$(cat "$saved/elapsed.txt")" \
  --load "$(cat "$saved/load.txt")" --date "$(cat "$saved/date.txt")" >"$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out" >&2
