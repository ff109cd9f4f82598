// Times sequential tools/call round trips through the official TypeScript
// SDK client (Client over StdioClientTransport, what most hosts embed),
// the counterpart of `mcpbench bridge` for the chat's Go client. Prints
// one JSON object in mcpbench's ClientResult shape on stdout.
//
//   node bench/tsclient.mjs --sdk DIR --server NAME --tool T --args JSON \
//     [--calls 2000] [--warmup 200] [--round R] -- COMMAND ARGS…
//
// DIR is the installed @modelcontextprotocol/sdk package (compare.sh
// passes .ci/peers/node_modules/@modelcontextprotocol/sdk).
import { pathToFileURL } from "node:url";
import path from "node:path";

function parse(argv) {
  const o = { calls: 2000, warmup: 200, round: 0, args: "{}" };
  const i = argv.indexOf("--");
  if (i < 0 || i === argv.length - 1) usage("give the server command after --");
  o.command = argv.slice(i + 1);
  const flags = argv.slice(0, i);
  for (let j = 0; j < flags.length; j += 2) {
    const k = flags[j].replace(/^--/, "");
    const v = flags[j + 1];
    if (v === undefined) usage(`--${k} needs a value`);
    if (!["sdk", "server", "tool", "args", "calls", "warmup", "round"].includes(k)) usage(`unknown flag --${k}`);
    o[k] = ["calls", "warmup", "round"].includes(k) ? Number(v) : v;
  }
  if (!o.sdk || !o.tool) usage("--sdk and --tool are required");
  if (!(o.calls > 0) || !(o.warmup >= 0)) usage("--calls must be > 0 and --warmup ≥ 0");
  try {
    o.args = JSON.parse(o.args);
  } catch (e) {
    usage(`--args is not JSON: ${e.message}`);
  }
  return o;
}

function usage(msg) {
  process.stderr.write(`tsclient: ${msg} (see the comment at the top of bench/tsclient.mjs)\n`);
  process.exit(2);
}

function percentile(sorted, p) {
  const rank = Math.min(Math.max(Math.ceil((p / 100) * sorted.length), 1), sorted.length);
  return sorted[rank - 1];
}

const r3 = (x) => Math.round(x * 1000) / 1000;

async function main() {
  const o = parse(process.argv.slice(2));
  const sdk = (p) => import(pathToFileURL(path.resolve(o.sdk, "dist/esm", p)).href);
  const { Client } = await sdk("client/index.js");
  const { StdioClientTransport } = await sdk("client/stdio.js");
  const client = new Client({ name: "tsclient-bench", version: "1.0.0" });
  const transport = new StdioClientTransport({ command: o.command[0], args: o.command.slice(1), stderr: "ignore" });
  const t0 = process.hrtime.bigint();
  await client.connect(transport, { timeout: 60000 });
  const connectMS = Number(process.hrtime.bigint() - t0) / 1e6;
  try {
    const call = async () => {
      const s = process.hrtime.bigint();
      const res = await client.callTool({ name: o.tool, arguments: o.args }, undefined, { timeout: 30000 });
      const d = Number(process.hrtime.bigint() - s) / 1e3;
      if (res.isError) throw new Error(`the tool answered with an error: ${JSON.stringify(res.content).slice(0, 300)}`);
      return d;
    };
    for (let i = 0; i < o.warmup; i++) await call();
    const ds = [];
    for (let i = 0; i < o.calls; i++) ds.push(await call());
    const mean = ds.reduce((a, b) => a + b, 0) / ds.length;
    ds.sort((a, b) => a - b);
    process.stdout.write(JSON.stringify({
      round: o.round, client: "TypeScript SDK client", server: o.server ?? o.command.join(" "),
      command: o.command, tool: o.tool, args: o.args, calls: o.calls, warmup: o.warmup,
      connect_ms: r3(connectMS), p50_us: r3(percentile(ds, 50)), p99_us: r3(percentile(ds, 99)), mean_us: r3(mean),
    }) + "\n");
  } finally {
    await client.close();
  }
}

main().catch((e) => {
  process.stderr.write(`tsclient: ${e.stack ?? e}\n`);
  process.exit(1);
});
