#!/usr/bin/env bash
# The client the conformance suite runs, once per scenario, as
#   conformance-client-dispatch.sh SERVER_URL
# with MCP_CONFORMANCE_SCENARIO naming the scenario and
# MCP_CONFORMANCE_CONTEXT (JSON) carrying what the scenario gives its
# client, such as pre-registered OAuth credentials. It picks the
# `agentapp mcp` subcommand that does what the scenario asks of a client,
# passes the credentials as flags, and lets the browser step run for real:
# $BROWSER is a script that fetches the authorization URL and follows its
# redirects to agentapp's loopback callback.
#
# Needs AGENTAPP_BIN (the binary under test) and CONFORMANCE_NODE (a node
# binary, to read the context's JSON); .ci/conformance-client.sh sets both.
set -euo pipefail
url="${1:?usage: conformance-client-dispatch.sh SERVER_URL}"
here="$(cd "$(dirname "$0")" && pwd)"
bin="${AGENTAPP_BIN:?AGENTAPP_BIN must name the agentapp binary}"
scenario="${MCP_CONFORMANCE_SCENARIO:?MCP_CONFORMANCE_SCENARIO is not set}"
context="${MCP_CONFORMANCE_CONTEXT:-}"
[ -n "$context" ] || context='{}'

data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
export AGENTAPP_DATA_DIR="$data"
export BROWSER="$here/conformance/browser.sh"

args=(--server "$url" --connect-timeout 20s --timeout 20s)
node="${CONFORMANCE_NODE:-node}"
field() { "$node" -e 'const v = JSON.parse(process.argv[1])[process.argv[2]]; if (typeof v === "string") process.stdout.write(v)' "$context" "$1"; }
client_id=$(field client_id)
client_secret=$(field client_secret)
if [ -n "$client_id" ]; then args+=(--oauth-client-id "$client_id"); fi
if [ -n "$client_secret" ]; then args+=(--oauth-client-secret "$client_secret"); fi

case "$scenario" in
  initialize)
    exec "$bin" mcp tools "${args[@]}" ;;
  tools_call)
    exec "$bin" mcp call add_numbers '{"a":5,"b":3}' "${args[@]}" ;;
  elicitation-sep1034-client-defaults)
    # --elicit comes with issue 15 (the client half of the protocol).
    exec "$bin" mcp call test_client_elicitation_defaults '{}' --elicit defaults "${args[@]}" ;;
  sse-retry)
    exec "$bin" mcp call test_reconnection '{}' "${args[@]}" ;;
  sep-2322-client-request-state)
    # Input-required results: two tools ask for a confirmation (one with
    # requestState, one without), one is called between their rounds, one
    # answers without a resultType.
    for tool in test_mrtr_echo_state test_mrtr_unrelated test_mrtr_no_state test_mrtr_no_result_type; do
      "$bin" mcp call "$tool" '{}' --elicit defaults "${args[@]}"
    done ;;
  http-custom-headers)
    # The context names the calls and their arguments (x-mcp-header
    # parameters, mirrored as Mcp-Param-* headers).
    "$node" -e 'for (const c of JSON.parse(process.argv[1]).toolCalls ?? []) console.log(c.name + "\t" + JSON.stringify(c.arguments ?? {}))' "$context" >"$data/calls"
    while IFS=$'\t' read -r tool arguments; do
      "$bin" mcp call "$tool" "$arguments" "${args[@]}"
    done <"$data/calls" ;;
  http-invalid-tool-headers)
    # The valid tool must stay usable beside the malformed ones.
    exec "$bin" mcp call valid_tool '{"region":"us-west1"}' "${args[@]}" ;;
  sep-2640-client-no-prefetch)
    # Listing skills reads none of their files.
    exec "$bin" mcp skills "${args[@]}" ;;
  sep-2640-client-verify-*)
    # The server serves a SKILL.md that does not match its entry (digest,
    # size or front matter): the load must fail (exit 5) before any of it,
    # or the supporting file it names, is used.
    exec "$bin" mcp skills --load pdf-processing --read references/FORMS.md "${args[@]}" ;;
  auth/*)
    # A client ID metadata document URL, as a published client would have
    # one; agentapp uses it only where the server supports such documents
    # and no client ID is given.
    exec "$bin" mcp call test-tool '{}' "${args[@]}" \
      --oauth-client-metadata-url https://conformance-test.local/client-metadata.json ;;
  *)
    exec "$bin" mcp tools "${args[@]}" ;;
esac
