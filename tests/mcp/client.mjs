// The TypeScript SDK's client: lists the tools and makes the calls of a scenario, then
// prints {"tools", "results"} as JSON.
//   node client.mjs SCENARIO.json [--v2] -- server command args...
//   node client.mjs SCENARIO.json [--v2] --url URL          (Streamable HTTP)
// With --v2 it is the 2.x client (the 2026-07-28 line), pinned to 2026-07-28: no
// fallback to a 2025 handshake. Without, the 1.x client (2025 sessions).
import { readFileSync } from "node:fs";

const argv = process.argv.slice(2);
const v2 = argv[1] === "--v2";
if (v2) argv.splice(1, 1);
const [scenarioFile, how, command, ...args] = argv;
if ((how !== "--" && how !== "--url") || !command) {
  console.error("usage: node client.mjs SCENARIO.json [--v2] (-- command args... | --url URL)");
  process.exit(2);
}
const sdk = v2
  ? {
      ...(await import("@modelcontextprotocol/client")),
      ...(await import("@modelcontextprotocol/client/stdio")),
      options: { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    }
  : {
      ...(await import("@modelcontextprotocol/sdk/client/index.js")),
      ...(await import("@modelcontextprotocol/sdk/client/stdio.js")),
      ...(await import("@modelcontextprotocol/sdk/client/streamableHttp.js")),
      options: {},
    };
const scenario = JSON.parse(readFileSync(scenarioFile, "utf8"));
const client = new sdk.Client({ name: "reasons-tests", version: "1.0.0" }, sdk.options);
await client.connect(
  how === "--url"
    ? new sdk.StreamableHTTPClientTransport(new URL(command))
    : new sdk.StdioClientTransport({ command, args, stderr: "inherit" }),
);
const { tools } = await client.listTools();
const results = [];
for (const call of scenario.calls) {
  results.push(await client.callTool({ name: call.name, arguments: call.arguments }));
}
await client.close();
console.log(JSON.stringify({ tools, results }));
