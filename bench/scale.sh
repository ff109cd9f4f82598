#!/usr/bin/env bash
# Scale-out test: replicas of `agentapp serve --http --stateless` sharing one
# PostgreSQL database on loopback. It runs the createTicket load
# (bench/cmd/scalebench) against 1 replica, then against 3 while one of them
# is SIGKILLed part-way (its clients retry on the others), and checks the
# database after each run: every acknowledged ticket stored exactly once, no
# id duplicated or reused, no half-written call. Figures go to $OUT
# (default bench/results/scale.jsonl) and a summary table to stdout; a
# failed check exits 1.
#
#   bash bench/scale.sh                      # 50 clients, 10,000 calls a run
#   CLIENTS=20 CALLS=1000 bash bench/scale.sh   # the short run CI makes
#
# PostgreSQL: $AGENTAPP_TEST_DATABASE_URL if set (each run gets a database
# of its own on that server), else a throw-away cluster (.ci/pg-cluster).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
clients=${CLIENTS:-50}
calls=${CALLS:-10000}
work=$(mktemp -d "${TMPDIR:-/tmp}/agentapp-scale.XXXXXX")
chmod 755 "$work"
pids=()
own_cluster=""
made_dbs=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  if [ -n "$own_cluster" ]; then
    bash "$root/.ci/pg-cluster" stop "$work/pg" || true
  else
    for d in "${made_dbs[@]}"; do
      PGOPTIONS='-c client_min_messages=warning' psql -q "$base" -c "DROP DATABASE IF EXISTS $d WITH (FORCE)" >/dev/null 2>&1 || true
    done
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
say() { printf '== %s\n' "$*" >&2; }

if [ -z "${AGENTAPP_TEST_DATABASE_URL:-}" ]; then
  say "starting a throw-away PostgreSQL cluster"
  own_cluster=1
  eval "$(bash "$root/.ci/pg-cluster" start "$work/pg")"
fi
base=$AGENTAPP_TEST_DATABASE_URL

say "building agentapp and scalebench"
go build -o "$work/agentapp" ./cmd/agentapp
go -C bench build -o "$work/scalebench" ./cmd/scalebench  # bench/go.mod: a module of its own

# newdb NAME sets url to that of a new, empty database NAME on the server.
newdb() {
  "$work/agentapp" --database "$base" db status >/dev/null  # the server answers
  local admin=${base%%\?*}
  local q=""
  case "$base" in *\?*) q="?${base#*\?}" ;; esac
  PGOPTIONS='-c client_min_messages=warning' psql -q "$base" -c "DROP DATABASE IF EXISTS $1" -c "CREATE DATABASE $1" >/dev/null
  made_dbs+=("$1")
  url="${admin%/*}/$1$q"
}

# start_replica URL: starts a replica on a free port and appends its pid
# to pids and its endpoint to eps.
start_replica() {
  local log=$work/replica-${#pids[@]}.log
  "$work/agentapp" serve --http 127.0.0.1:0 --stateless --database "$1" --data-dir "$work/data-${#pids[@]}" \
    --db-max-conns "${DB_MAX_CONNS:-10}" </dev/null >/dev/null 2>"$log" &
  pids+=($!)
  local ep=""
  for _ in $(seq 100); do
    ep=$(grep -o 'http://127\.0\.0\.1:[0-9]*/mcp' "$log" || true)
    [ -n "$ep" ] && break
    sleep 0.1
  done
  [ -n "$ep" ] || { cat "$log" >&2; echo "replica did not start" >&2; exit 1; }
  eps+=("$ep")
}

stop_replicas() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done 2>/dev/null
  pids=()
}

out=${OUT:-bench/results/scale.jsonl}
mkdir -p "$(dirname "$out")"
: > "$out"

for replicas in 1 3; do
  newdb "agentapp_scale_$replicas"
  "$work/agentapp" --database "$url" db migrate >/dev/null
  eps=()
  for _ in $(seq "$replicas"); do start_replica "$url"; done
  kill_args=()
  if [ "$replicas" -gt 1 ]; then kill_args=(-kill "${pids[1]}" -kill-at 0.4); fi
  say "$replicas replica(s), $clients clients, $calls createTicket calls${kill_args:+, SIGKILL of one replica at 40 %}"
  endpoints=$(IFS=,; echo "${eps[*]}")
  "$work/scalebench" -endpoints "$endpoints" -database "$url" -clients "$clients" -calls "$calls" "${kill_args[@]}" | tee -a "$out"
  stop_replicas
done

python3 - "$out" <<'PY'
import json, sys
print()
print("| replicas | clients | calls | acknowledged | failed | calls/s | errors | retries | reconnects | replica killed | checks |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for line in open(sys.argv[1]):
    r = json.loads(line)
    print(f"| {r['replicas']} | {r['clients']} | {r['calls']} | {r['acked']} | {r['failed']} | {r['callsPerSec']:.0f} | {r['errors']} | {r['retries']} | {r['reconnects']} | {'yes' if r['killed'] else 'no'} | {'passed' if not r['problems'] else 'FAILED'} |")
PY
