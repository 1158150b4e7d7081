// An MCP server of the tests' own, with the tools a reference server lacks:
//   note    owns a `reason` parameter, which must reach it untouched (R5)
//   record  answers with the arguments it received, as JSON text
//   slow    answers after 300 ms
//   hang    never answers (with REASONS_TEST_LIFE=FILE, it writes FILE.hang when called)
//   die     exits without answering
// With REASONS_TEST_LIFE=FILE it writes its pid to FILE when it starts and appends each
// signal it gets, so a test can tell whether it was signalled and whether it is gone; it
// then also keeps running after its stdin ends, as many servers do, until a signal.
import { appendFileSync, writeFileSync } from "node:fs";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
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
await server.connect(new StdioServerTransport());

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
