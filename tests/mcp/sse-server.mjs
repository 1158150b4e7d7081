// An MCP server of the tests' own on the legacy HTTP+SSE transport (2024-11-05), with the
// TypeScript SDK's SSEServerTransport: GET /sse opens the event stream, whose first event
// names /messages?sessionId=… as where to POST each message; answers come on the stream.
// A POST to /sse (a Streamable HTTP client's first try) is answered 405, as such servers
// answer it. It prints `PORT <n>` once it listens on 127.0.0.1 and appends the body of
// each message POSTed to it to the file named by its argument, one line each. GET /streams
// answers how many event streams are open: a client that ends a session closes its stream.
//   note    owns a `reason` parameter, which must reach it untouched (R5)
//   record  answers with the arguments it received, as JSON text
import { appendFileSync } from "node:fs";
import { createServer } from "node:http";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

const log = process.argv[2];
// What goes wrong on one connection (a write to a stream its client has left) is said,
// and the server goes on serving the others, as a real one does: a test that counts its
// streams must not find it gone.
for (const event of ["uncaughtException", "unhandledRejection"]) {
  process.on(event, (error) => console.error(`sse-server.mjs: ${error}`));
}
const object = (properties) => ({ type: "object", properties });
const tools = [
  { name: "note", description: "Notes why.", inputSchema: object({ reason: { type: "string" } }) },
  { name: "record", description: "Says what it got.", inputSchema: object({ text: { type: "string" } }) },
];
const sessions = new Map();

const mcp = () => {
  const server = new Server({ name: "own-sse", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const { name, arguments: args } = request.params;
    const text = JSON.stringify(args ?? {});
    if (name === "note" || name === "record") return { content: [{ type: "text", text }] };
    return { content: [{ type: "text", text: `no tool ${name}` }], isError: true };
  });
  return server;
};

const http = createServer(async (req, res) => {
  const url = new URL(req.url, "http://127.0.0.1");
  if (req.method === "GET" && url.pathname === "/sse") {
    const transport = new SSEServerTransport("/messages", res);
    sessions.set(transport.sessionId, transport);
    res.on("close", () => sessions.delete(transport.sessionId));
    return mcp().connect(transport);
  }
  if (req.method === "GET" && url.pathname === "/streams") {
    return res.writeHead(200, { "content-type": "text/plain" }).end(`${sessions.size}`);
  }
  if (req.method === "POST" && url.pathname === "/messages") {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = Buffer.concat(chunks).toString("utf8");
    appendFileSync(log, `${body.replace(/\n/g, " ")}\n`);
    const transport = sessions.get(url.searchParams.get("sessionId"));
    if (!transport) return res.writeHead(404).end("no such session");
    return transport.handlePostMessage(req, res, JSON.parse(body));
  }
  res.writeHead(405, { allow: "GET" }).end();
});
http.listen(0, "127.0.0.1", () => console.log(`PORT ${http.address().port}`));
