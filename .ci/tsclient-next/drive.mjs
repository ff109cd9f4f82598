// Drives agentapp serve with the TypeScript SDK v2 client, its protocol
// version pinned to 2026-07-28 (no fallback): lists the tools, calls
// getOrderStatus, and files a refund without a reason, which the server
// asks for in an input_required round that the client's elicitation
// handler answers. Prints one JSON line of what it saw; exits 1 on error.
//
//   node drive.mjs stdio AGENTAPP_BINARY   (spawns `AGENTAPP_BINARY serve`)
//   node drive.mjs http URL
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const [mode, target] = process.argv.slice(2);
const transport = mode === "stdio"
  ? new StdioClientTransport({ command: target, args: ["serve"], env: { ...process.env }, stderr: "ignore" })
  : new StreamableHTTPClientTransport(new URL(target));
const client = new Client({ name: "agentapp-tsnext", version: "1" }, {
  capabilities: { elicitation: { form: {} } },
  versionNegotiation: { mode: { pin: "2026-07-28" } },
});
let asked = "";
client.setRequestHandler("elicitation/create", async (req) => {
  asked = req.params.message;
  return { action: "accept", content: { reason: "arrived broken" } };
});
const timer = setTimeout(() => { console.error("timed out"); process.exit(1); }, 30000);
try {
  await client.connect(transport);
  const tools = await client.listTools();
  const order = await client.callTool({ name: "getOrderStatus", arguments: { orderId: "A-1024" } });
  const refund = await client.callTool({ name: "requestRefund", arguments: { orderId: "A-1024" } });
  console.log(JSON.stringify({
    protocol: client.getNegotiatedProtocolVersion(),
    tools: tools.tools.map((t) => t.name),
    order: order.structuredContent,
    refund: refund.structuredContent,
    refundError: refund.isError ? refund.content : undefined,
    asked,
  }));
  await client.close();
} catch (e) {
  console.error(e?.stack ?? String(e));
  process.exitCode = 1;
} finally {
  clearTimeout(timer);
}
