// The conformance suite's client role, with `reasons mcp --url` as the client: the suite
// runs this with its server's URL last, the scenario in MCP_CONFORMANCE_SCENARIO (and
// what it needs in MCP_CONFORMANCE_CONTEXT), the revision in
// MCP_CONFORMANCE_PROTOCOL_VERSION. An SDK client (1.x for the 2025 sessions, 2.x
// pinned to 2026-07-28) drives `reasons mcp --url URL` ($REASONS_BIN) over stdio, as an
// MCP client people use would; the proxy does what the scenario tests (signing in
// among it, its browser `browser.mjs`), with a home of the scenario's own.
//   node conformance-client.mjs URL
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const url = process.argv.at(-1);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}");
const revision = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION ?? "2025-11-25";
const here = dirname(fileURLToPath(import.meta.url));

// A client that answers elicitations (accepting, its SDK filling in the defaults),
// sampling and roots, as the scenarios that ask for them expect.
const capabilities = {
  elicitation: { form: { applyDefaults: true } },
  sampling: {},
  roots: { listChanged: true },
};
const modern = revision >= "2026";
const sdk = modern
  ? {
      ...(await import("@modelcontextprotocol/client")),
      ...(await import("@modelcontextprotocol/client/stdio")),
      options: { capabilities, versionNegotiation: { mode: { pin: "2026-07-28" } } },
      handled: ["elicitation/create", "sampling/createMessage", "roots/list"],
    }
  : {
      ...(await import("@modelcontextprotocol/sdk/client/index.js")),
      ...(await import("@modelcontextprotocol/sdk/client/stdio.js")),
      options: { capabilities },
      handled: await import("@modelcontextprotocol/sdk/types.js").then((types) => [
        types.ElicitRequestSchema,
        types.CreateMessageRequestSchema,
        types.ListRootsRequestSchema,
      ]),
    };

const args = ["mcp", "--url", url, "--sign-in-wait", "60"];
// The suite's Client ID Metadata Document: used where the authorization server takes one.
args.push("--client-metadata-url", "https://conformance-test.local/client-metadata.json");
const env = {
  ...process.env,
  // A home of the scenario's own: the sign-in store is HOME's, and scenarios run at once,
  // each at a port another run's scenario may have had (its token must not be found).
  HOME: mkdtempSync(join(tmpdir(), "reasons-conformance-")),
  BROWSER: `${process.execPath} ${join(here, "browser.mjs")}`,
};
if (context.client_id) {
  args.push("--client-id", context.client_id);
  if (context.client_secret) {
    args.push("--client-secret-env", "REASONS_TEST_CLIENT_SECRET");
    env.REASONS_TEST_CLIENT_SECRET = context.client_secret;
  }
}

const client = new sdk.Client({ name: "reasons-conformance", version: "1.0.0" }, sdk.options);
const [elicit, sample, roots] = sdk.handled;
client.setRequestHandler(elicit, async () => ({ action: "accept", content: {} }));
client.setRequestHandler(sample, async () => ({
  role: "assistant",
  content: { type: "text", text: "sampled" },
  model: "reasons-conformance",
  stopReason: "endTurn",
}));
client.setRequestHandler(roots, async () => ({ roots: [] }));
const transport = new sdk.StdioClientTransport({
  command: process.env.REASONS_BIN,
  args,
  env,
  stderr: "inherit",
});
await client.connect(transport);
const { tools } = await client.listTools();
// The calls the scenario names (its context's), else each of its tools with arguments of
// the types its schema asks for; all at once, as a model's parallel calls come.
const calls = context.toolCalls ??
  (scenario.startsWith("auth/")
    ? [{ name: "test-tool", arguments: {} }]
    : tools.map((tool) => ({ name: tool.name, arguments: example(tool.inputSchema) })));
const offered = client.getServerCapabilities() ?? {};
const results = await Promise.allSettled([
  ...calls.map((call) => client.callTool(call)),
  // And what else the server offers, once each, as a client browsing it would.
  offered.resources &&
    client.listResources().then(({ resources: [first] }) =>
      first ? client.readResource({ uri: first.uri }) : undefined,
    ),
  offered.prompts &&
    client.listPrompts().then(({ prompts: [first] }) =>
      first ? client.getPrompt({ name: first.name, arguments: {} }) : undefined,
    ),
]);
for (const result of results) {
  if (result.status === "rejected") console.error(`conformance-client.mjs: ${result.reason}`);
}
await client.close();

function example(schema) {
  const values = { number: 1, integer: 1, boolean: true, string: "test" };
  return Object.fromEntries(
    Object.entries(schema?.properties ?? {}).map(([name, property]) => [
      name,
      values[property.type] ?? null,
    ]),
  );
}
