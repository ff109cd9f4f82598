// The official TypeScript SDK's client, many sessions at once from one
// address, driven by serve_sessions_ts_test.go against agentapp serve
// --http. Each session lists the tools, then makes ROUNDS rounds of
// PARALLEL getOrderStatus calls at once. One JSON line on stdout; exit 0
// when every call of every session succeeded.
//
//   node ts_sessions_client.mjs SDK-DIR ENDPOINT SESSIONS ROUNDS PARALLEL
import { pathToFileURL } from 'node:url';
import path from 'node:path';

const [sdkDir, endpoint, sessions, rounds, parallel] = process.argv.slice(2);
const load = (p) => import(pathToFileURL(path.join(sdkDir, 'dist/esm', p)).href);
const { Client } = await load('client/index.js');
const { StreamableHTTPClientTransport } = await load('client/streamableHttp.js');

const errors = [];
let calls = 0;
const bounded = { timeout: 60000 };

async function session(i) {
  const client = new Client({ name: `ts-sessions-${i}`, version: '1.0.0' });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(endpoint)));
    await client.listTools(undefined, bounded);
    for (let r = 0; r < Number(rounds); r++) {
      await Promise.all(Array.from({ length: Number(parallel) }, async () => {
        const res = await client.callTool({ name: 'getOrderStatus', arguments: { orderId: 'A-1024' } }, undefined, bounded);
        if (res.isError) throw new Error('tool error: ' + JSON.stringify(res.content));
        calls++;
      }));
    }
  } catch (e) {
    errors.push(`session ${i}: ${e?.message ?? e}`);
  } finally {
    await client.close().catch(() => {});
  }
}

await Promise.all(Array.from({ length: Number(sessions) }, (_, i) => session(i)));
process.stdout.write(JSON.stringify({ calls, errors: errors.slice(0, 5), failed: errors.length }) + '\n');
process.exit(errors.length === 0 ? 0 : 1);
