// The TypeScript SDK's 2.x client (the 2026-07-28 line): lists the tools and makes the
// calls of a scenario, then prints {"tools", "results"} as JSON, as client.mjs does.
//   node client2.mjs SCENARIO.json -- server command args...
//   node client2.mjs SCENARIO.json --url URL          (Streamable HTTP)
// It speaks 2026-07-28 only (pinned: no fallback to a 2025 handshake).
import { readFileSync } from "node:fs";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const [scenarioFile, how, command, ...args] = process.argv.slice(2);
if ((how !== "--" && how !== "--url") || !command) {
  console.error("usage: node client2.mjs SCENARIO.json (-- command args... | --url URL)");
  process.exit(2);
}
const scenario = JSON.parse(readFileSync(scenarioFile, "utf8"));
const client = new Client(
  { name: "reasons-tests", version: "2.0.0" },
  { versionNegotiation: { mode: { pin: "2026-07-28" } } },
);
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
