// An MCP server that takes only the OpenID provider's tokens, written with the
// TypeScript SDK's own parts as a server author would: its protected resource metadata
// naming the provider (`mcpAuthMetadataRouter`), and `requireBearerAuth` with a verifier
// that checks each access token as a JWT (jose) against the provider's published keys:
// its signature, its issuer, its audience (this server, RFC 8707), its expiry, and the
// `mcp` scope. Stateless Streamable HTTP at /mcp; `echo` answers with its text.
// It prints `PORT <n>` once it listens on 127.0.0.1, and appends to LOG a line of JSON
// for each tools/call with the arguments as they arrived, and for each token refused.
//   node oidc-server.mjs LOG ISSUER
import { appendFileSync } from "node:fs";
import express from "express";
import { createRemoteJWKSet, jwtVerify } from "jose";
import { z } from "zod";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { mcpAuthMetadataRouter, getOAuthProtectedResourceMetadataUrl } from "@modelcontextprotocol/sdk/server/auth/router.js";
import { requireBearerAuth } from "@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js";
import { InvalidTokenError } from "@modelcontextprotocol/sdk/server/auth/errors.js";

const [log, issuer] = process.argv.slice(2);
const note = (entry) => appendFileSync(log, `${JSON.stringify(entry)}\n`);
const provider = await (await fetch(`${issuer}/.well-known/openid-configuration`)).json();
// A provider that starts again signs with new keys: they are fetched again at once.
const keys = createRemoteJWKSet(new URL(provider.jwks_uri), { cooldownDuration: 0 });

const app = express();
app.use(express.json());
const listening = app.listen(0, "127.0.0.1", () => {
  const resource = new URL(`http://127.0.0.1:${listening.address().port}/mcp`);
  const verifier = {
    async verifyAccessToken(token) {
      try {
        const { payload } = await jwtVerify(token, keys, { issuer: provider.issuer, audience: resource.href });
        return {
          token,
          clientId: payload.client_id,
          scopes: String(payload.scope ?? "").split(" ").filter(Boolean),
          expiresAt: payload.exp,
          resource,
        };
      } catch (error) {
        note({ refused: error.code ?? String(error) });
        throw new InvalidTokenError(`not a token of ${provider.issuer} for ${resource.href}`);
      }
    },
  };
  app.use(mcpAuthMetadataRouter({ oauthMetadata: provider, resourceServerUrl: resource, scopesSupported: ["mcp"] }));
  const signedIn = requireBearerAuth({
    verifier,
    requiredScopes: ["mcp"],
    resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(resource),
  });
  app.all("/mcp", signedIn, async (req, res) => {
    if (req.body?.method === "tools/call") note({ call: req.body.params?.arguments });
    const server = new McpServer({ name: "oidc-server", version: "1.0.0" });
    server.registerTool("echo", { description: "Says the text back", inputSchema: { text: z.string() } }, async ({ text }) => ({
      content: [{ type: "text", text }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on("close", () => transport.close());
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  console.log(`PORT ${listening.address().port}`);
});
