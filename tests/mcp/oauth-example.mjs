// The TypeScript SDK's own example of a server that signs its users in
// (examples/server/simpleStreamableHttp.js --oauth --oauth-strict: an MCP server at
// http://localhost:$MCP_PORT/mcp, and its demo authorization server at $MCP_AUTH_PORT,
// which approves every authorization at once and accepts only tokens issued for this
// server), as it ships on npm, listening on loopback only, as the tests' servers do.
//   MCP_PORT=… MCP_AUTH_PORT=… node oauth-example.mjs
import http from "node:http";

const listen = http.Server.prototype.listen;
http.Server.prototype.listen = function (port, ...rest) {
  const callback = rest.find((arg) => typeof arg === "function");
  return listen.call(this, port, "127.0.0.1", callback);
};
process.argv.push("--oauth", "--oauth-strict");
await import("@modelcontextprotocol/sdk/examples/server/simpleStreamableHttp.js");
