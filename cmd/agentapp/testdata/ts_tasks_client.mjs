// The official TypeScript SDK's client and its experimental tasks API,
// driven by tasks_ts_test.go against agentapp serve. One JSON object per
// line on stdout; the process exits 0 when its mode ran to its end.
//
//   node ts_tasks_client.mjs SDK-DIR ENDPOINT TOKEN run            create a refund task, follow it to its result
//   node ts_tasks_client.mjs SDK-DIR ENDPOINT TOKEN create         create one and exit
//   node ts_tasks_client.mjs SDK-DIR ENDPOINT TOKEN resume TASK-ID poll it to its end and fetch the result
//   node ts_tasks_client.mjs SDK-DIR ENDPOINT TOKEN probe TASK-ID  try to read and cancel another caller's task
//   node ts_tasks_client.mjs SDK-DIR ENDPOINT TOKEN notify         create one and wait (no polling) for its
//                                                                  notifications/tasks/status on the GET stream
import { pathToFileURL } from 'node:url';
import path from 'node:path';

const [sdkDir, endpoint, token, mode, taskId] = process.argv.slice(2);
const load = (p) => import(pathToFileURL(path.join(sdkDir, 'dist/esm', p)).href);
const { Client } = await load('client/index.js');
const { StreamableHTTPClientTransport } = await load('client/streamableHttp.js');
const { CallToolResultSchema, TaskStatusNotificationSchema } = await load('types.js');

const say = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const client = new Client({ name: 'ts-tasks-test', version: '1.0.0' });
const transport = new StreamableHTTPClientTransport(new URL(endpoint), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
// Set before connecting: the GET stream opens right after initialize.
const notified = [];
let onNotified = () => {};
client.setNotificationHandler(TaskStatusNotificationSchema, (n) => { notified.push(n.params); onNotified(); });
await client.connect(transport);
say({ capabilities: client.getServerCapabilities()?.tasks ?? null });
const tools = await client.listTools();
say({ taskSupport: tools.tools.find((t) => t.name === 'requestRefund')?.execution?.taskSupport ?? null });

const args = { orderId: 'A-1024', reason: 'arrived broken' };
const bounded = { timeout: 120000 };
try {
  if (mode === 'run' || mode === 'create') {
    const stream = client.experimental.tasks.callToolStream(
      { name: 'requestRefund', arguments: args }, CallToolResultSchema, { task: { ttl: 600000 }, ...bounded });
    for await (const m of stream) {
      if (m.type === 'taskCreated') {
        say({ created: m.task.taskId, status: m.task.status, statusMessage: m.task.statusMessage ?? '' });
        if (mode === 'create') break;
      } else if (m.type === 'taskStatus') {
        say({ status: m.task.status, statusMessage: m.task.statusMessage ?? '' });
      } else if (m.type === 'result') {
        say({ result: m.result });
      } else if (m.type === 'error') {
        say({ error: String(m.error?.message ?? m.error) });
        process.exitCode = 1;
      }
    }
  } else if (mode === 'resume') {
    for (let i = 0; i < 100; i++) {
      const t = await client.experimental.tasks.getTask(taskId, bounded);
      say({ status: t.status, statusMessage: t.statusMessage ?? '' });
      if (t.status === 'completed') {
        const r = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema, bounded);
        say({ result: r });
        break;
      }
      await new Promise((res) => setTimeout(res, 500));
    }
  } else if (mode === 'notify') {
    const stream = client.experimental.tasks.callToolStream(
      { name: 'requestRefund', arguments: args }, CallToolResultSchema, { task: { ttl: 600000 }, ...bounded });
    let id = '';
    for await (const m of stream) {
      if (m.type === 'taskCreated') {
        id = m.task.taskId;
        say({ created: id, status: m.task.status });
        break; // no polling from here on: only the notification can tell
      }
    }
    const deadline = Date.now() + 120000;
    for (;;) {
      const n = notified.find((p) => p.taskId === id && p.status !== 'working');
      if (n) { say({ notified: n.status, taskId: n.taskId }); break; }
      if (Date.now() > deadline) { say({ error: 'no status notification within 120 s' }); process.exitCode = 1; break; }
      await new Promise((res) => { onNotified = res; setTimeout(res, 1000); });
    }
  } else if (mode === 'probe') {
    for (const [what, f] of [
      ['get', () => client.experimental.tasks.getTask(taskId, bounded)],
      ['cancel', () => client.experimental.tasks.cancelTask(taskId, bounded)],
      ['list', () => client.experimental.tasks.listTasks(undefined, bounded)],
    ]) {
      try {
        say({ [what]: await f() });
      } catch (e) {
        say({ [what + 'Error']: String(e?.message ?? e) });
      }
    }
  } else {
    say({ error: `unknown mode ${mode}` });
    process.exitCode = 2;
  }
} finally {
  await client.close();
}
