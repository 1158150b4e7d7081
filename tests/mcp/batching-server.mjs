// A server that answers tool calls in pairs, in one JSON-RPC batch, as 2025-03-26 let a
// server do: the first call waits for the second, then both are answered in one line.
// Written without the SDK, which never batches.
import { createInterface } from "node:readline";

const tools = [
  {
    name: "echo",
    description: "Says what it got.",
    inputSchema: { type: "object", properties: { text: { type: "string" } } },
  },
];
const write = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);
const answer = (id, result) => ({ jsonrpc: "2.0", id, result });
let calls = [];
for await (const line of createInterface({ input: process.stdin })) {
  const message = JSON.parse(line);
  if (message.id === undefined || message.method === undefined) continue;
  switch (message.method) {
    case "initialize":
      write(answer(message.id, {
        protocolVersion: "2025-03-26",
        capabilities: { tools: {} },
        serverInfo: { name: "batching", version: "1.0.0" },
      }));
      break;
    case "tools/list":
      write(answer(message.id, { tools }));
      break;
    case "tools/call":
      calls.push(answer(message.id, {
        content: [{ type: "text", text: JSON.stringify(message.params.arguments ?? {}) }],
      }));
      if (calls.length === 2) {
        write(calls);
        calls = [];
      }
      break;
    default:
      write({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "no such method" } });
  }
}
