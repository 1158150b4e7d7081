// Node running the composition of reasons.wasm and the registry fixture: one component
// that imports nothing, transpiled by jco.
//   node node-composed.mjs OUT
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const out = resolve(process.argv[2] ?? "out");
const { instantiate } = await import(pathToFileURL(join(out, "composed.js")));
const { provider, reasons } = await instantiate(
  (path) => readFile(join(out, path)).then((bytes) => WebAssembly.compile(bytes)),
  {},
);
const tools = provider.toolsForLlm();
const results = provider.executeToolCalls([
  { id: "1", name: "echo", arguments: { tag: "text", val: '{"text":"hi","reason":"to show"}' } },
]);
console.log(JSON.stringify({ tools, augmented_tools: reasons.augmentedTools(), results }));
