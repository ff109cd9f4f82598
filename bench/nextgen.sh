#!/usr/bin/env bash
# Server CPU per call of protocol 2026-07-28 against 2025-11-25 on one
# `agentapp serve --http` with default flags, driven by the official Go
# SDK v1.8 client (bench/cmd/sdkclientbench) over loopback: 16 clients in
# flight, 4,000 getOrderStatus calls a row, in interleaved rounds (the two
# versions in alternating order on the round's one server), with the bare
# Go SDK stateless server (bench/cmd/gosdkfloor --stateless) at 2026-07-28
# beside. Prints a Markdown table of the medians (and ranges) and keeps the
# raw lines in bench/results/nextgen.jsonl. About 20 s a round.
#
#   ROUNDS=3 bash bench/nextgen.sh
set -euo pipefail
rounds=${ROUNDS:-3}
case $rounds in '' | *[!0-9]* | 0) echo "nextgen.sh: ROUNDS must be a whole number ≥ 1" >&2; exit 2 ;; esac
cd "$(dirname "$0")/.."
root=$(pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/agentapp-nextgen.XXXXXX")
pid=""
stop() {
  if [ -n "$pid" ]; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  pid=""
}
trap 'stop; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

CGO_ENABLED=0 go build -o "$work/agentapp" ./cmd/agentapp
go -C bench build -o "$work/gosdkfloor" ./cmd/gosdkfloor
go -C bench build -o "$work/sdkclientbench" ./cmd/sdkclientbench

# start LOG CMD…: starts a server that prints its http://127.0.0.1:PORT/mcp.
start() {
  local log=$1; shift
  "$@" 2>"$log" &
  pid=$!
  url=""
  for _ in $(seq 300); do
    url=$(grep -o 'http://127\.0\.0\.1:[0-9]*/mcp' "$log" | head -n1 || true)
    [ -n "$url" ] && return 0
    kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; exit 1; }
    sleep 0.1
  done
  echo "nextgen.sh: the server did not start within 30 s" >&2; exit 1
}

out=$work/nextgen.jsonl
: >"$out"
for round in $(seq "$rounds"); do
  versions=(2026-07-28 2025-11-25)
  if [ $((round % 2)) = 0 ]; then versions=(2025-11-25 2026-07-28); fi
  start "$work/serve.log" env AGENTAPP_SERVER_TOKEN= "$work/agentapp" --data-dir "$work/data" serve --http 127.0.0.1:0
  for v in "${versions[@]}"; do
    "$work/sdkclientbench" --round "$round" --name "agentapp serve --http" --url "$url" --pid "$pid" --version "$v" >>"$out"
  done
  stop
  start "$work/floor.log" "$work/gosdkfloor" --stateless
  "$work/sdkclientbench" --round "$round" --name "Go SDK floor --stateless" --url "$url" --pid "$pid" --version 2026-07-28 >>"$out"
  stop
done
mkdir -p bench/results
cp "$out" bench/results/nextgen.jsonl

# The table: medians (min–max) per server and version, and the ratio of
# the medians of the two versions on agentapp.
"$work/sdkclientbench" --report "$out"
