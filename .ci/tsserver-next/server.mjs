// A stateless MCP server on the TypeScript SDK v2 (@modelcontextprotocol/server,
// pinned in package.json), for agentapp's 2026-07-28 client tests: it listens on
// 127.0.0.1 (a free port), prints "listening http://127.0.0.1:PORT/mcp" on
// stdout, and serves two tools. `add` adds two numbers; `refund` asks for its
// reason with a form (an input-required result) unless the retry carries one,
// and refuses when the form was declined or cancelled.
//
// For the list-change and caching tests: `grow` adds the tool `extra` and the
// resource memo://extra and announces both on subscriptions/listen; memo://note
// is a resource whose text `grow` changes. The query of the endpoint sets the
// caching hint of the lists (?ttl=MS&scope=private|public; none: ttlMs 0).
// GET /stats answers the count of each method received so far, and
// POST /drop-listens ends every open subscriptions/listen stream, as a proxy
// timing out would.
import http from "node:http";
import { McpServer, createMcpHandler, fromJsonSchema, inputRequired, inputResponse, acceptedContent } from "@modelcontextprotocol/server";

let grown = false;
let noteVersion = 1;
const counts = {};
const listens = new Set(); // the node responses of open subscriptions/listen streams

const cacheHints = (ctx) => {
  const q = ctx?.requestInfo ? new URL(ctx.requestInfo.url).searchParams : new URLSearchParams();
  if (!q.has("ttl")) return undefined;
  const hint = { ttlMs: Number(q.get("ttl")), cacheScope: q.get("scope") === "private" ? "private" : "public" };
  return { "tools/list": hint, "resources/list": hint, "prompts/list": hint };
};

const factory = (ctx) => {
  const server = new McpServer({ name: "tsserver-next", version: "1.0.0" }, { cacheHints: cacheHints(ctx) });
  server.registerTool("add", {
    description: "Adds two numbers",
    inputSchema: fromJsonSchema({ type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] }),
  }, async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }));
  server.registerTool("refund", {
    description: "Refunds an order; asks the user why",
    inputSchema: fromJsonSchema({ type: "object", properties: { order: { type: "string" } }, required: ["order"] }),
  }, async ({ order }, ctx) => {
    const view = inputResponse(ctx.mcpReq.inputResponses, "reason");
    if (view.kind === "elicit" && view.action !== "accept") {
      return { isError: true, content: [{ type: "text", text: `no refund for ${order}: the user did not give a reason (${view.action})` }] };
    }
    const answer = acceptedContent(ctx.mcpReq.inputResponses, "reason");
    if (typeof answer?.reason !== "string" || answer.reason === "") {
      return inputRequired({
        inputRequests: {
          reason: inputRequired.elicit({
            message: `Why should order ${order} be refunded?`,
            requestedSchema: { type: "object", properties: { reason: { type: "string", title: "Reason" } }, required: ["reason"] },
          }),
        },
      });
    }
    return { content: [{ type: "text", text: `refunded ${order}: ${answer.reason}` }] };
  });
  server.registerTool("grow", {
    description: "Adds the tool extra and the resource memo://extra, changes memo://note, and announces it",
    inputSchema: fromJsonSchema({ type: "object", properties: {} }),
  }, async () => {
    grown = true;
    noteVersion++;
    handler.notify.toolsChanged();
    handler.notify.resourcesChanged();
    handler.notify.resourceUpdated("memo://note");
    return { content: [{ type: "text", text: "grown" }] };
  });
  if (grown) {
    server.registerTool("extra", {
      description: "Appears after grow",
      inputSchema: fromJsonSchema({ type: "object", properties: {} }),
    }, async () => ({ content: [{ type: "text", text: "extra" }] }));
    server.registerResource("extra", "memo://extra", { mimeType: "text/plain" }, async (uri) => ({ contents: [{ uri: uri.href, text: "extra" }] }));
  }
  server.registerResource("note", "memo://note", { mimeType: "text/plain" }, async (uri) => ({ contents: [{ uri: uri.href, text: `note ${noteVersion}` }] }));
  return server;
};

const handler = createMcpHandler(factory);
const MAX_BODY = 1 << 20;

const httpServer = http.createServer(async (req, res) => {
  const path = new URL(req.url, "http://x").pathname;
  if (path === "/stats") {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(counts));
    return;
  }
  if (path === "/drop-listens") {
    for (const r of listens) r.end();
    listens.clear();
    res.writeHead(204).end();
    return;
  }
  const abort = new AbortController();
  res.on("close", () => abort.abort());
  try {
    const chunks = [];
    let size = 0;
    for await (const c of req) {
      size += c.length;
      if (size > MAX_BODY) { res.writeHead(413).end(); return; }
      chunks.push(c);
    }
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers.set(k, v);
    const body = ["GET", "HEAD"].includes(req.method) ? undefined : Buffer.concat(chunks);
    let method;
    try { method = body && JSON.parse(body).method; } catch {}
    if (typeof method === "string") counts[method] = (counts[method] ?? 0) + 1;
    const response = await handler.fetch(new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers, body, signal: abort.signal }));
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (method === "subscriptions/listen") listens.add(res);
    if (response.body) {
      for await (const chunk of response.body) {
        if (res.writableEnded) break; // dropped by /drop-listens
        res.write(chunk);
      }
    }
    listens.delete(res);
    if (!res.writableEnded) res.end();
  } catch (err) {
    console.error("tsserver-next:", err);
    if (!res.headersSent) res.writeHead(500);
    res.end();
  }
});

httpServer.listen(0, "127.0.0.1", () => {
  console.log(`listening http://127.0.0.1:${httpServer.address().port}/mcp`);
});
// The test ends us by closing stdin (or by a signal): no orphan either way.
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
process.on("SIGTERM", () => process.exit(0));
