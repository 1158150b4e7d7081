// A small agent host in Node over reasons.wasm, transpiled by jco:
//   npx jco transpile reasons.wasm -o OUT --instantiation async
//   node node-host.mjs OUT
// Below the layer, a JavaScript tool registry; above it, a permission callback that shows
// each call's arguments and, beside them, the model's reason. It plays one scripted turn
// and prints what happened as JSON, for the tests to check.
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const out = resolve(process.argv[2] ?? "out");
const { instantiate } = await import(pathToFileURL(join(out, "reasons.js")));

// The tools the registry runs, each a declaration in MCP's shape and a function.
const registry = {
  read: {
    declaration: { name: "read", inputSchema: { type: "object", properties: { path: { type: "string" } } } },
    run: (args) => `contents of ${JSON.parse(args).path}`,
  },
  own: {
    // Owns a `reason` parameter: the layer must leave it alone (R5).
    declaration: { name: "own", inputSchema: { type: "object", properties: { reason: { type: "string" } } } },
    run: (args) => args,
  },
  boom: {
    declaration: { name: "boom", inputSchema: { type: "object" } },
    run: () => {
      throw new Error("boom exploded");
    },
  },
};
const received = [];

// The provider the component imports. A WIT `result` error is thrown as an object with a
// `payload`; anything else thrown would unwind through the component and end it, so every
// failure of the registry becomes a `failed` provider error here.
const provider = {
  toolsForLlm: () => Object.values(registry).map((tool) => JSON.stringify(tool.declaration)),
  executeToolCalls: (calls) => {
    // A host bug, as a careless host would have it: a plain Error, not a WIT error. It
    // unwinds through the component; the component must not run on after that.
    if (calls.some((call) => call.name === "raw")) throw new Error("raw failure");
    try {
      return calls.map((call) => {
        received.push([call.id, call.name, call.arguments.val]);
        const tool = registry[call.name];
        if (!tool) return { callId: call.id, content: JSON.stringify(`no tool ${call.name}`), isError: true };
        return { callId: call.id, content: JSON.stringify(tool.run(call.arguments.val)), isError: false };
      });
    } catch (error) {
      throw { payload: { tag: "failed", val: String(error?.message ?? error) } };
    }
  },
};

const start = () =>
  instantiate(
    (path) => readFile(join(out, path)).then((bytes) => WebAssembly.compile(bytes)),
    // No WASI: the component imports its provider (and the types, which need nothing).
    // jco names imports without their version when only one version is imported.
    { "agent:tools/provider": provider },
  );
const { provider: layer, reasons } = await start();

// Above the layer: the agent loop's view.
const tools = layer.toolsForLlm();
const param = reasons.reasonParam();
const stripSet = reasons.augmentedTools();
const prompts = [];
const permission = (call) => {
  // The reason is the model's claim about itself: shown beside the arguments, as text.
  const args = JSON.parse(call.arguments.val || "{}");
  const reason = stripSet.includes(call.name) ? args[param] : undefined;
  if (stripSet.includes(call.name)) delete args[param];
  prompts.push(`${call.name} ${JSON.stringify(args)} | reason: ${reason ?? "(none given)"}`);
  return true;
};
const text = (id, name, val) => ({ id, name, arguments: { tag: "text", val } });
const turns = [
  [
    text("1", "read", '{"path":"a.txt","reason":"to see a"}'),
    text("2", "read", '{ "path" : "b.txt" }'),
    text("3", "own", '{"reason":"mine"}'),
    text("4", "ghost", '{"reason":"x"}'),
  ],
  [text("5", "boom", '{"reason":"to try"}'), text("6", "read", '{"path":"c.txt"}')],
];
const results = [];
for (const calls of turns) {
  const approved = calls.filter(permission);
  for (const result of layer.executeToolCalls(approved)) {
    results.push([result.callId, result.content, result.isError]);
  }
}
// A provider that throws a plain Error: the exception escapes to this host, and the
// instance it unwound through traps on its next call instead of running on (or spinning).
const report = { param, augmented_tools: stripSet, tools, received: [...received], results, prompts };
const unwound = [];
const attempt = (what, work) => {
  try {
    work();
    unwound.push(`${what}: returned`);
  } catch (error) {
    unwound.push(`${what}: ${error.constructor.name}: ${error.message}`);
  }
};
attempt("raw", () => layer.executeToolCalls([text("7", "raw", "{}")]));
attempt("after", () => layer.executeToolCalls([text("8", "read", '{"path":"d.txt"}')]));
// A fresh instance, listed again, serves the next call.
const fresh = (await start()).provider;
fresh.toolsForLlm();
const served = fresh
  .executeToolCalls([text("9", "read", '{"path":"d.txt","reason":"again"}')])
  .map((result) => [result.callId, result.content, result.isError]);
const afterUnwind = { unwound, served, received: received.slice(report.received.length) };
console.log(JSON.stringify({ ...report, afterUnwind }));
