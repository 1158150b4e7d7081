// The TypeScript SDK's client: lists the tools and makes the calls of a scenario, then
// prints {"tools", "results"} as JSON.
//   node client.mjs SCENARIO.json -- server command args...
//   node client.mjs SCENARIO.json --url URL          (Streamable HTTP)
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [scenarioFile, how, command, ...args] = process.argv.slice(2);
if ((how !== "--" && how !== "--url") || !command) {
  console.error("usage: node client.mjs SCENARIO.json (-- command args... | --url URL)");
  process.exit(2);
}
const scenario = JSON.parse(readFileSync(scenarioFile, "utf8"));
const client = new Client({ name: "reasons-tests", version: "1.0.0" });
await client.connect(
  how === "--url"
    ? new StreamableHTTPClientTransport(new URL(command))
    : new StdioClientTransport({ command, args, stderr: "inherit" }),
);
const { tools } = await client.listTools();
const results = [];
for (const call of scenario.calls) {
  results.push(await client.callTool({ name: call.name, arguments: call.arguments }));
}
await client.close();
console.log(JSON.stringify({ tools, results }));
