// Times tools/call through the official TypeScript SDK client (Client over
// StdioClientTransport or StreamableHTTPClientTransport, what most hosts
// embed), the counterpart of `mcpbench bridge` for the chat's Go client.
// Prints one JSON object in mcpbench's ClientResult shape on stdout.
//
//   node bench/tsclient.mjs --sdk DIR --server NAME --tool T --args JSON \
//     [--calls 2000] [--warmup 200] [--round R] [--inflight 0] [--cold 0] [--structured 0] -- COMMAND ARGS…
//   node bench/tsclient.mjs --sdk DIR --server NAME --tool T --args JSON \
//     --url http://HOST:PORT/mcp [--pid PID] [--sessions 1] [--calls 2000] [--warmup 200] [--round R]
//
// DIR is the installed @modelcontextprotocol/sdk package (compare.sh
// passes .ci/peers/node_modules/@modelcontextprotocol/sdk). Every result
// is checked: isError fails the run, and so does a result without
// structuredContent with --structured 1.
//
// Over stdio: --calls sequential calls after --warmup ones give p50, p99,
// mean, calls/s, the server's CPU per call (the CPU time of its
// process's threads, from /proc/PID/task/*/schedstat, in nanoseconds) and
// the client's own (client_cpu_per_call_us); --inflight N then keeps N
// calls in flight for 2×calls calls (calls/s and both CPUs per call); --cold N spawns the server N more times and times each
// from the spawn to the end of the client's connect (initialize answered,
// notifications/initialized sent), median in cold_start_ms.
//
// Over HTTP (--url): --sessions clients, each with its own session, each
// making --calls sequential calls after --warmup ones, all at once: p50
// and p99 over every call, calls/s over all sessions, and with --pid the
// server's CPU per call.
import { pathToFileURL } from "node:url";
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";

const numeric = ["calls", "warmup", "round", "inflight", "cold", "sessions", "pid", "structured"];

function parse(argv) {
  const o = { calls: 2000, warmup: 200, round: 0, args: "{}", inflight: 0, cold: 0, sessions: 1, pid: 0, structured: 0 };
  let flags = argv;
  const i = argv.indexOf("--");
  if (i >= 0) {
    if (i === argv.length - 1) usage("give the server command after --");
    o.command = argv.slice(i + 1);
    flags = argv.slice(0, i);
  }
  for (let j = 0; j < flags.length; j += 2) {
    const k = flags[j].replace(/^--/, "");
    const v = flags[j + 1];
    if (v === undefined) usage(`--${k} needs a value`);
    if (!["sdk", "server", "tool", "args", "url", ...numeric].includes(k)) usage(`unknown flag --${k}`);
    o[k] = numeric.includes(k) ? Number(v) : v;
  }
  if (!o.sdk || !o.tool) usage("--sdk and --tool are required");
  if (!o.command === !o.url) usage("give either a server command after -- or --url");
  for (const k of numeric) {
    if (!Number.isInteger(o[k]) || o[k] < 0) usage(`--${k} must be a whole number ≥ 0, not ${o[k]}`);
  }
  if (o.calls < 1 || o.sessions < 1) usage("--calls and --sessions must be ≥ 1");
  if (o.sessions > 1024) usage("--sessions is capped at 1024");
  if (o.url && (o.inflight || o.cold)) usage("--inflight and --cold are for stdio servers");
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
const now = () => process.hrtime.bigint();
const sinceUS = (t) => Number(now() - t) / 1e3;

// cpuNS is the CPU time of every thread of process pid so far, in
// nanoseconds (the first field of each thread's schedstat). Threads that
// ended are not counted: the servers measured keep theirs.
export function cpuNS(pid, root = "/proc") {
  let sum = 0;
  for (const t of readdirSync(`${root}/${pid}/task`)) {
    try {
      sum += Number(readFileSync(`${root}/${pid}/task/${t}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return sum;
}

async function main() {
  const o = parse(process.argv.slice(2));
  const sdk = (p) => import(pathToFileURL(path.resolve(o.sdk, "dist/esm", p)).href);
  const { Client } = await sdk("client/index.js");
  const open = async () => {
    const client = new Client({ name: "tsclient-bench", version: "1.0.0" });
    let transport;
    if (o.url) {
      const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
      transport = new StreamableHTTPClientTransport(new URL(o.url));
    } else {
      const { StdioClientTransport } = await sdk("client/stdio.js");
      transport = new StdioClientTransport({ command: o.command[0], args: o.command.slice(1), stderr: "ignore" });
    }
    const t0 = now();
    await client.connect(transport, { timeout: 60000 });
    return { client, transport, connectMS: sinceUS(t0) / 1e3 };
  };
  // The first connection to an HTTP server that was just started waits
  // for it to listen, up to 30 s.
  const openFirst = async () => {
    const deadline = Date.now() + 30000;
    for (;;) {
      try {
        return await open();
      } catch (e) {
        if (Date.now() > deadline || !String(e?.cause?.code ?? e?.message).match(/ECONNREFUSED|fetch failed/)) throw e;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  };
  const call = async (client) => {
    const s = now();
    const res = await client.callTool({ name: o.tool, arguments: o.args }, undefined, { timeout: 30000 });
    const d = sinceUS(s);
    if (res.isError) throw new Error(`the tool answered with an error: ${JSON.stringify(res.content).slice(0, 300)}`);
    if (o.structured && res.structuredContent === undefined) throw new Error("the tool's result has no structuredContent");
    return d;
  };
  const out = {
    round: o.round, client: "TypeScript SDK client", server: o.server ?? (o.url || o.command.join(" ")),
    transport: o.url ? "http" : "stdio", tool: o.tool, args: o.args, calls: o.calls, warmup: o.warmup,
  };
  if (o.command) out.command = o.command;

  if (o.url) {
    const sessions = [];
    try {
      for (let i = 0; i < o.sessions; i++) sessions.push(await (i === 0 ? openFirst() : open()));
      out.sessions = o.sessions;
      out.connect_ms = r3(sessions[sessions.length - 1].connectMS); // the first one waited for the server
      await Promise.all(sessions.map(async ({ client }) => { for (let i = 0; i < o.warmup; i++) await call(client); }));
      const cpu0 = o.pid ? cpuNS(o.pid) : 0;
      const own0 = process.cpuUsage();
      const t0 = now();
      const per = await Promise.all(sessions.map(async ({ client }) => {
        const ds = [];
        for (let i = 0; i < o.calls; i++) ds.push(await call(client));
        return ds;
      }));
      const wallUS = sinceUS(t0);
      const ds = per.flat();
      if (o.pid) out.cpu_per_call_us = r3((cpuNS(o.pid) - cpu0) / 1e3 / ds.length);
      // The client's own CPU: over HTTP one node process drives every
      // session, and when it is busy all the time it, not the server,
      // sets the pace.
      const own = ownCPU(own0);
      out.client_cpu_per_call_us = r3(own / ds.length);
      out.client_busy = r3(own / wallUS);
      out.throughput_cps = r3(ds.length / (wallUS / 1e6));
      summarize(out, ds);
    } finally {
      for (const s of sessions) await s.transport.terminateSession?.().catch(() => {});
      for (const s of sessions) await s.client.close();
    }
    process.stdout.write(JSON.stringify(out) + "\n");
    return;
  }

  const { client, transport, connectMS } = await open();
  out.connect_ms = r3(connectMS);
  try {
    const pid = transport.pid;
    for (let i = 0; i < o.warmup; i++) await call(client);
    const cpu0 = cpuNS(pid);
    const own0 = process.cpuUsage();
    const t0 = now();
    const ds = [];
    for (let i = 0; i < o.calls; i++) ds.push(await call(client));
    const wallUS = sinceUS(t0);
    out.cpu_per_call_us = r3((cpuNS(pid) - cpu0) / 1e3 / o.calls);
    out.client_cpu_per_call_us = r3(ownCPU(own0) / o.calls);
    out.sequential_cps = r3(o.calls / (wallUS / 1e6));
    summarize(out, ds);
    if (o.inflight > 0) {
      const n = 2 * o.calls;
      let next = 0;
      const c0 = cpuNS(pid);
      const own1 = process.cpuUsage();
      const t1 = now();
      await Promise.all(Array.from({ length: Math.min(o.inflight, n) }, async () => {
        while (next < n) {
          next++;
          await call(client);
        }
      }));
      out.inflight = o.inflight;
      out.throughput_cps = r3(n / (sinceUS(t1) / 1e6));
      out.cpu_per_call_inflight_us = r3((cpuNS(pid) - c0) / 1e3 / n);
      out.client_cpu_per_call_inflight_us = r3(ownCPU(own1) / n);
    }
  } finally {
    await client.close();
  }
  if (o.cold > 0) {
    const all = [];
    for (let i = 0; i < o.cold; i++) {
      const c = await open();
      all.push(c.connectMS);
      await c.client.close();
    }
    out.cold_start_all_ms = all.map(r3);
    out.cold_start_ms = r3(percentile([...all].sort((a, b) => a - b), 50));
  }
  process.stdout.write(JSON.stringify(out) + "\n");
}

// ownCPU is this process's CPU time in microseconds (user and system,
// every thread: the SDK's work, V8's collector, the system calls) since
// the process.cpuUsage() reading since. Through a fast server the client
// sets the pace, so what an answer costs the client is what a change to
// the answers could save.
function ownCPU(since) {
  const own = process.cpuUsage(since);
  return own.user + own.system;
}

function summarize(out, ds) {
  const mean = ds.reduce((a, b) => a + b, 0) / ds.length;
  ds.sort((a, b) => a - b);
  out.p50_us = r3(percentile(ds, 50));
  out.p99_us = r3(percentile(ds, 99));
  out.mean_us = r3(mean);
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((e) => {
    // fetch's own message ("fetch failed") names nothing; its cause does.
    const cause = e?.cause ? `\ncaused by: ${e.cause.stack ?? e.cause}${e.cause.code ? ` (${e.cause.code})` : ""}` : "";
    process.stderr.write(`tsclient: ${e.stack ?? e}${cause}\n`);
    process.exit(1);
  });
}
