// A stateless MCP server on the TypeScript SDK v2 (@modelcontextprotocol/server,
// pinned in package.json), for agentapp's 2026-07-28 client tests: it listens on
// 127.0.0.1 (a free port), prints "listening http://127.0.0.1:PORT/mcp" on
// stdout, and serves two tools. `add` adds two numbers; `refund` asks for its
// reason with a form (an input-required result) unless the retry carries one,
// and refuses when the form was declined or cancelled.
import http from "node:http";
import { McpServer, createMcpHandler, fromJsonSchema, inputRequired, inputResponse, acceptedContent } from "@modelcontextprotocol/server";

const factory = () => {
  const server = new McpServer({ name: "tsserver-next", version: "1.0.0" });
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
  return server;
};

const handler = createMcpHandler(factory);
const MAX_BODY = 1 << 20;

const httpServer = http.createServer(async (req, res) => {
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
    const response = await handler.fetch(new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers, body }));
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body) {
      for await (const chunk of response.body) res.write(chunk);
    }
    res.end();
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
