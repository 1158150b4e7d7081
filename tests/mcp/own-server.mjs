// An MCP server of the tests' own, with the tools a reference server lacks:
//   note    owns a `reason` parameter, which must reach it untouched (R5)
//   record  answers with the arguments it received, as JSON text
//   slow    answers after 300 ms
//   hang    never answers (with REASONS_TEST_LIFE=FILE, it writes FILE.hang when called)
//   die     exits without answering
// With REASONS_TEST_LIFE=FILE it writes its pid to FILE when it starts and appends each
// signal it gets, so a test can tell whether it was signalled and whether it is gone; it
// then also keeps running after its stdin ends, as many servers do, until a signal.
// With REASONS_TEST_ALIVE=SOCKET it connects to that Unix socket when it starts and keeps
// the connection, which the kernel closes when the process ends, however it ends: a
// test counts the servers alive from the connections open, without looking at /proc.
// It too keeps it running until a signal, so that a server asked to end lives on for
// the proxy's grace period, and any overlap with another lasts seconds.
//
// Over stdio by default; `node own-server.mjs --http LOG` serves the SDK's (1.x)
// Streamable HTTP transport on 127.0.0.1 at /mcp, a session per `initialize`, prints
// `PORT <n>` once it listens, and appends the body of every POST it gets to LOG.
import { randomUUID } from "node:crypto";
import { appendFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { createConnection } from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

const object = (properties) => ({ type: "object", properties });
const tools = [
  { name: "note", description: "Notes why.", inputSchema: object({ reason: { type: "string" } }) },
  { name: "record", description: "Says what it got.", inputSchema: object({ text: { type: "string" } }) },
  { name: "slow", description: "Takes its time.", inputSchema: object({}) },
  { name: "hang", description: "Never answers.", inputSchema: object({}) },
  { name: "die", description: "Exits.", inputSchema: object({}) },
];

const serve = () => {
  const server = new Server({ name: "own", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const { name, arguments: args } = request.params;
    const text = (t) => ({ content: [{ type: "text", text: t }] });
    switch (name) {
      case "note":
      case "record":
        return text(JSON.stringify(args ?? {}));
      case "slow":
        await new Promise((resolve) => setTimeout(resolve, 300));
        return text("slow done");
      case "hang":
        if (process.env.REASONS_TEST_LIFE) writeFileSync(`${process.env.REASONS_TEST_LIFE}.hang`, "");
        return new Promise(() => {});
      case "die":
        process.exit(3);
      default:
        return { ...text(`no tool ${name}`), isError: true };
    }
  });
  return server;
};

// Connected before it serves: a session it answers is one the test has counted.
const alive = process.env.REASONS_TEST_ALIVE;
if (alive) {
  await new Promise((resolve) => createConnection(alive, resolve));
  setInterval(() => {}, 1000);
}

if (process.argv[2] === "--http") {
  const log = process.argv[3];
  const sessions = new Map();
  const http = createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = Buffer.concat(chunks).toString("utf8");
    if (req.method === "POST") appendFileSync(log, body.replace(/\n/g, " ") + "\n");
    let transport = sessions.get(req.headers["mcp-session-id"]);
    if (!transport) {
      // A request of no session known here: the transport answers it (an initialize
      // opens one; anything else is refused as the SDK refuses it).
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (id) => sessions.set(id, transport),
      });
      await serve().connect(transport);
    }
    let parsed;
    try {
      parsed = body ? JSON.parse(body) : undefined;
    } catch {
      parsed = undefined;
    }
    await transport.handleRequest(req, res, parsed);
  });
  http.listen(0, "127.0.0.1", () => console.log(`PORT ${http.address().port}`));
} else {
  await serve().connect(new StdioServerTransport());
}

const life = process.env.REASONS_TEST_LIFE;
if (life) {
  writeFileSync(life, `${process.pid}\n`);
  setInterval(() => {}, 1000);
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) {
    process.on(signal, () => {
      appendFileSync(life, `${signal}\n`);
      process.exit(143);
    });
  }
}
