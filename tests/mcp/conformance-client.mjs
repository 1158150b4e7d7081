// The conformance suite's client role, with `reasons mcp --url` as the client: the suite
// runs this with its server's URL last, the scenario in MCP_CONFORMANCE_SCENARIO (and
// what it needs in MCP_CONFORMANCE_CONTEXT), the revision in
// MCP_CONFORMANCE_PROTOCOL_VERSION. An SDK client (1.x for the 2025 sessions, 2.x
// pinned to 2026-07-28) drives `reasons mcp --url URL` ($REASONS_BIN) over stdio, as an
// MCP client people use would; the proxy does what the scenario tests (signing in
// among it, its browser `browser.mjs`), with a config folder of the scenario's own.
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

const modern = revision >= "2026";
const sdk = modern
  ? {
      ...(await import("@modelcontextprotocol/client")),
      ...(await import("@modelcontextprotocol/client/stdio")),
      options: { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    }
  : {
      ...(await import("@modelcontextprotocol/sdk/client/index.js")),
      ...(await import("@modelcontextprotocol/sdk/client/stdio.js")),
      options: {},
    };

const args = ["mcp", "--url", url, "--sign-in-wait", "60"];
// The suite's Client ID Metadata Document: used where the authorization server takes one.
args.push("--client-metadata-url", "https://conformance-test.local/client-metadata.json");
const env = {
  ...process.env,
  XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), "reasons-conformance-")),
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
const transport = new sdk.StdioClientTransport({
  command: process.env.REASONS_BIN,
  args,
  env,
  stderr: "inherit",
});
await client.connect(transport);
const { tools } = await client.listTools();
if (scenario.startsWith("auth/")) {
  await client.callTool({ name: "test-tool", arguments: {} });
} else {
  for (const tool of tools) {
    await client.callTool({ name: tool.name, arguments: {} });
  }
}
await client.close();
