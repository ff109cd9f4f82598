// Records the tools/list result of three third-party MCP servers, so that the
// schema sanitizer is tested on the schemas real servers publish.
//
// Re-run (from the repository root) after changing the versions pinned in
// .ci/peers/package.json:
//
//	bash .ci/install-peers
//	node model/openai/testdata/record.mjs
//
// It writes model/openai/testdata/tools-{everything,memory,filesystem}.json:
// the servers' own tools/list results (all pages, tools in server order),
// pretty-printed. The servers are started from .ci/peers/node_modules over
// stdio; nothing is fetched from the network.
import { createRequire } from "node:module";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const peers = resolve(here, "../../../.ci/peers");
const require = createRequire(join(peers, "package.json"));
const load = async (spec) => import(pathToFileURL(require.resolve(spec)).href);

const { Client } = await load("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = await load("@modelcontextprotocol/sdk/client/stdio.js");

const bin = (name) => join(peers, "node_modules", ".bin", name);
const allowed = mkdtempSync(join(tmpdir(), "agentapp-record-"));

const servers = [
  { name: "everything", args: [bin("mcp-server-everything"), "stdio"] },
  { name: "memory", args: [bin("mcp-server-memory")], env: { MEMORY_FILE_PATH: join(allowed, "memory.jsonl") } },
  { name: "filesystem", args: [bin("mcp-server-filesystem"), allowed] },
];

try {
  for (const s of servers) {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: s.args,
      env: { ...process.env, ...(s.env ?? {}) },
      stderr: "ignore",
    });
    // Declare every client capability: some servers only register tools
    // (sampling, elicitation, roots demos) for clients that support them.
    const client = new Client(
      { name: "agentapp-schema-recorder", version: "1.0.0" },
      { capabilities: { sampling: {}, elicitation: {}, roots: { listChanged: true } } },
    );
    await client.connect(transport);
    const tools = [];
    let cursor;
    do {
      const page = await client.listTools(cursor ? { cursor } : {});
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    const info = client.getServerVersion();
    const out = { server: info, tools };
    const file = join(here, `tools-${s.name}.json`);
    writeFileSync(file, JSON.stringify(out, null, 2) + "\n");
    console.error(`${s.name}: ${info?.name}@${info?.version}, ${tools.length} tools -> ${file}`);
    await client.close();
  }
} finally {
  rmSync(allowed, { recursive: true, force: true });
}
