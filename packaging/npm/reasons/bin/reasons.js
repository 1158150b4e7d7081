#!/usr/bin/env node
// The `reasons` command from npm: runs the binary of this platform's package (one of the
// launcher's optionalDependencies, which npm installs only where its os, cpu and libc
// match) with the same arguments, standard streams, environment and exit status.
//
// The binary is its child on the very same stdin, stdout and stderr (never piped through
// here, so no byte of the MCP stream is touched), every signal a client ends a server
// with is passed on, and the launcher exits as the binary did: a client that ends the
// launcher ends the proxy, and the proxy ends its server (R20). It stays a process of its
// own, though Node 22.15 could exec the binary in its place: npx runs it under `sh -c`,
// which dies of the client's SIGTERM without passing it on, and only a launcher left
// behind can see its parent go and end the binary then.
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

const child = spawn(path, args, { stdio: "inherit", windowsHide: true });
const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"];
for (const signal of SIGNALS) {
  try {
    process.on(signal, () => child.kill(signal));
  } catch {
    // A signal this platform does not have.
  }
}
// npx runs this under `sh -c`, which dies of a client's SIGTERM without passing it on:
// a launcher whose parent is gone ends the binary as that signal would have.
const parent = process.ppid;
const orphaned = setInterval(() => {
  if (process.ppid !== parent) {
    clearInterval(orphaned);
    child.kill("SIGTERM");
  }
}, 200);
child.on("error", (error) => fail(`cannot run ${path}: ${error.message}`));
child.on("exit", (code, signal) => {
  clearInterval(orphaned);
  if (signal) {
    // Ends as the binary ended: by the same signal, so the client sees what it would
    // have seen running the binary itself.
    for (const name of SIGNALS) process.removeAllListeners(name);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code ?? 1);
});
