// dump.mjs starts one MCP server over stdio, asks for its tools (every page
// of tools/list) and its instructions, prints them as JSON on stdout and
// stops the server. It speaks JSON-RPC itself so it needs no SDK.
// Usage: node dump.mjs <name> <command> [args...]
import { spawn } from "node:child_process";

const [name, cmd, ...args] = process.argv.slice(2);
const child = spawn(cmd, args, { stdio: ["pipe", "pipe", "inherit"] });
const timer = setTimeout(() => { console.error(`${name}: no answer in 30 s`); child.kill(); process.exit(1); }, 30000);
let buf = "";
const waiting = new Map();
child.stdout.on("data", (d) => {
  buf += d;
  let i;
  while ((i = buf.indexOf("\n")) >= 0) {
    const line = buf.slice(0, i).trim();
    buf = buf.slice(i + 1);
    if (!line) continue;
    let msg;
    try { msg = JSON.parse(line); } catch { continue; }
    const w = waiting.get(msg.id);
    if (w) { waiting.delete(msg.id); msg.error ? w.reject(new Error(JSON.stringify(msg.error))) : w.resolve(msg.result); }
  }
});
let nextId = 1;
function call(method, params) {
  const id = nextId++;
  child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
  return new Promise((resolve, reject) => waiting.set(id, { resolve, reject }));
}
try {
  const init = await call("initialize", {
    protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "agentapp-dump", version: "1" },
  });
  child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
  const tools = [];
  let cursor;
  for (let page = 0; page < 50; page++) {
    const r = await call("tools/list", cursor ? { cursor } : {});
    tools.push(...r.tools);
    cursor = r.nextCursor;
    if (!cursor) break;
  }
  const out = { server: name, package: process.env.DUMP_PACKAGE || "", instructions: init.instructions || "", tools };
  process.stdout.write(JSON.stringify(out, null, 1) + "\n");
} catch (e) {
  console.error(`${name}: ${e.message}`);
  process.exitCode = 1;
} finally {
  clearTimeout(timer);
  child.stdin.end();
  child.kill();
}
