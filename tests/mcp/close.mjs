// The TypeScript SDK's client as most MCP clients use it: connect, list, close. Its
// close() ends the server's stdin, waits 2 s, then sends SIGTERM: a proxy between must
// pass that on, not die and leave the server running.
//   node close.mjs -- server command args...
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [dashes, command, ...args] = process.argv.slice(2);
if (dashes !== "--" || !command) {
  console.error("usage: node close.mjs -- command args...");
  process.exit(2);
}
const client = new Client({ name: "reasons-tests", version: "1.0.0" });
await client.connect(new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" }));
const { tools } = await client.listTools();
await client.close();
console.log(JSON.stringify({ tools: tools.length }));
