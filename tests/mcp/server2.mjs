// An MCP server of the tests' own on the TypeScript SDK's 2.x line (the 2026-07-28
// revision), with the tools own-server.mjs has that the tests use here:
//   note    owns a `reason` parameter, which must reach it untouched (R5)
//   record  answers with the arguments it received, as JSON text
//   ask     asks the client first (an input_required result, with requestState
//           "state-of-ask"), then answers with the arguments, the requestState and the
//           input it got back
// Over stdio by default; `node server2.mjs --http LOG` serves Streamable HTTP on
// 127.0.0.1 (printing `PORT <n>` once it listens, path /mcp) and appends the body of
// each POST it gets to LOG, one line each.
import { appendFileSync } from "node:fs";
import { McpServer, createMcpHandler, inputRequired } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { serveFetch } from "./serve-fetch.mjs";

const object = (properties) => ({ type: "object", properties });
const tools = [
  { name: "note", description: "Notes why.", inputSchema: object({ reason: { type: "string" } }) },
  { name: "record", description: "Says what it got.", inputSchema: object({ text: { type: "string" } }) },
  { name: "ask", description: "Asks first.", inputSchema: object({ text: { type: "string" } }) },
];
const confirm = {
  method: "elicitation/create",
  params: { message: "Go on?", requestedSchema: object({ go: { type: "boolean" } }) },
};
// One factory serves both eras: the opening message (or each HTTP request) decides which.
const factory = () => {
  const mcp = new McpServer({ name: "own2", version: "2.0.0" }, { capabilities: { tools: {} } });
  mcp.server.setRequestHandler("tools/list", async () => ({ tools }));
  mcp.server.setRequestHandler("tools/call", async (request, ctx) => {
    const { name, arguments: args } = request.params;
    const text = (t) => ({ content: [{ type: "text", text: t }] });
    if (name === "note" || name === "record") return text(JSON.stringify(args ?? {}));
    if (name === "ask") {
      const got = ctx.mcpReq.inputResponses?.confirm;
      if (got === undefined) return inputRequired({ inputRequests: { confirm }, requestState: "state-of-ask" });
      const requestState = await ctx.mcpReq.requestState();
      return text(JSON.stringify({ arguments: args ?? {}, requestState, got }));
    }
    return { ...text(`no tool ${name}`), isError: true };
  });
  return mcp;
};

if (process.argv[2] === "--http") {
  const log = process.argv[3];
  const handler = createMcpHandler(factory);
  serveFetch(handler.fetch, (method, body) => {
    if (method === "POST") appendFileSync(log, body.replace(/\n/g, " ") + "\n");
  });
} else {
  serveStdio(factory);
}
