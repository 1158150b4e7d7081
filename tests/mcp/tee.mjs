// Runs a command and appends every line its stdin receives to a log: what an MCP
// server was sent, recorded between it and whoever talks to it.
//   node tee.mjs LOG -- command args...
import { spawn } from "node:child_process";
import { appendFileSync } from "node:fs";

const [log, dashes, command, ...args] = process.argv.slice(2);
if (dashes !== "--" || !command) {
  console.error("usage: node tee.mjs LOG -- command args...");
  process.exit(2);
}
const child = spawn(command, args, { stdio: ["pipe", "inherit", "inherit"] });
process.stdin.on("data", (chunk) => {
  appendFileSync(log, chunk);
  child.stdin.write(chunk);
});
process.stdin.on("end", () => child.stdin.end());
child.on("exit", (code) => process.exit(code ?? 1));
