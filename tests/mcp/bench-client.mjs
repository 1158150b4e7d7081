// Times the TypeScript SDK's client (1.x) making one call over each of several Streamable
// HTTP URLs in turn, round after round, so that every URL sees the same machine:
//   node bench-client.mjs ROUNDS TOOL ARGUMENTS_JSON URL...
// It prints a JSON array, for each URL, of each round trip's milliseconds after 100
// rounds of warm-up.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [rounds, tool, args, ...urls] = process.argv.slice(2);
const clients = [];
for (const url of urls) {
  const client = new Client({ name: "reasons-bench", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  await client.listTools();
  clients.push(client);
}
const times = urls.map(() => []);
for (let round = 0; round < Number(rounds) + 100; round++) {
  for (const [at, client] of clients.entries()) {
    const start = performance.now();
    const result = await client.callTool({ name: tool, arguments: JSON.parse(args) });
    const took = performance.now() - start;
    if (result.isError) throw new Error(`the call failed: ${JSON.stringify(result)}`);
    if (round >= 100) times[at].push(took);
  }
}
for (const client of clients) await client.close();
console.log(JSON.stringify(times));
