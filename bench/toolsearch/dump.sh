#!/usr/bin/env bash
# dump.sh writes the tools/list of real MCP servers from npm to
# testdata/toolsearch/<server>.json, the fixtures of the tool-search
# benchmark (toolsearch/bench_test.go). The servers come from
# .ci/peers/node_modules (bash .ci/install-peers); PEERS overrides the folder.
# Servers that need a token get a dummy one: listing tools needs no account.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
peers=${PEERS:-$root/.ci/peers/node_modules}
out=$root/toolsearch/testdata
mkdir -p "$out"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
dump() { # name package [args...]
	local name=$1 pkg=$2
	shift 2
	local main
	main=$(node -e "const p=require('$peers/$pkg/package.json'); const b=typeof p.bin==='string'?p.bin:Object.values(p.bin)[0]; console.log(require('path').join('$peers/$pkg', b))")
	DUMP_PACKAGE="$pkg@$(node -p "require('$peers/$pkg/package.json').version")" \
		node "$root/bench/toolsearch/dump.mjs" "$name" node "$main" "$@" >"$out/$name.json"
	echo "$name: $(node -p "require('$out/$name.json').tools.length") tools" >&2
}
dump everything @modelcontextprotocol/server-everything
dump filesystem @modelcontextprotocol/server-filesystem "$scratch"
MEMORY_FILE_PATH=$scratch/memory.jsonl dump memory @modelcontextprotocol/server-memory
GITHUB_PERSONAL_ACCESS_TOKEN=dummy dump github @modelcontextprotocol/server-github
SLACK_BOT_TOKEN=xoxb-dummy SLACK_TEAM_ID=T00000000 dump slack @modelcontextprotocol/server-slack
GOOGLE_MAPS_API_KEY=dummy dump google-maps @modelcontextprotocol/server-google-maps
BRAVE_API_KEY=dummy dump brave-search @modelcontextprotocol/server-brave-search
dump sequential-thinking @modelcontextprotocol/server-sequential-thinking
