#!/usr/bin/env node
// The `reasons` command from npm: runs the binary of this platform's package (one of the
// launcher's optionalDependencies, which npm installs only where its os, cpu and libc
// match) with the same arguments, standard streams, environment and exit status.
//
// Where Node can replace its own process (process.execve, Node 22.15 and later on POSIX),
// it does, and no process of the launcher's is left. Elsewhere the binary is its child on
// the very same stdin, stdout and stderr (never piped through here, so no byte of the MCP
// stream is touched), every signal a client ends a server with is passed on, and the
// launcher exits as the binary did: a client that ends the launcher ends the proxy, and
// the proxy ends its server (R20).
"use strict";

const { spawn } = require("node:child_process");

const PACKAGES = {
  "linux-x64": "@reasons-mcp/linux-x64",
  "linux-x64-musl": "@reasons-mcp/linux-x64-musl",
  "linux-arm64": "@reasons-mcp/linux-arm64",
  "linux-arm64-musl": "@reasons-mcp/linux-arm64-musl",
  "darwin-x64": "@reasons-mcp/darwin-x64",
  "darwin-arm64": "@reasons-mcp/darwin-arm64",
  "win32-x64": "@reasons-mcp/win32-x64",
};

// Whether this Linux's C library is musl: Node's own report names the glibc it runs on,
// and names none on musl.
function isMusl() {
  if (process.platform !== "linux") return false;
  const header = process.report?.getReport?.().header;
  return !header?.glibcVersionRuntime;
}

function binary() {
  const platform = `${process.platform}-${process.arch}${isMusl() ? "-musl" : ""}`;
  const name = PACKAGES[platform];
  const file = process.platform === "win32" ? "reasons.exe" : "reasons";
  if (!name) {
    fail(`no prebuilt binary for ${platform}; install from source: cargo install --locked reasons`);
  }
  try {
    return require.resolve(`${name}/${file}`);
  } catch {
    fail(
      `the package ${name} (this platform's binary) is not installed; ` +
        "it is an optional dependency: was npm run with --omit=optional or --no-optional?",
    );
  }
}

function fail(message) {
  process.stderr.write(`reasons: ${message}\n`);
  process.exit(1);
}

const path = binary();
const args = process.argv.slice(2);

if (typeof process.execve === "function" && process.platform !== "win32") {
  // Replaces this process: the client's process is the binary's.
  process.execve(path, [path, ...args], process.env);
}

const child = spawn(path, args, { stdio: "inherit", windowsHide: true });
const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"];
for (const signal of SIGNALS) {
  try {
    process.on(signal, () => child.kill(signal));
  } catch {
    // A signal this platform does not have.
  }
}
child.on("error", (error) => fail(`cannot run ${path}: ${error.message}`));
child.on("exit", (code, signal) => {
  if (signal) {
    // Ends as the binary ended: by the same signal, so the client sees what it would
    // have seen running the binary itself.
    for (const name of SIGNALS) process.removeAllListeners(name);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code ?? 1);
});
