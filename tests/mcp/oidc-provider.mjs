// A real OpenID provider nobody here wrote (node-oidc-provider, as it ships on npm), on
// 127.0.0.1, for the sign-in tests: dynamic client registration (RFC 7591), the
// authorization code flow with PKCE, RFC 8707 resource indicators issuing JWT access
// tokens for the resource asked for, `iss` in the authorization response (RFC 9207),
// refresh tokens (rotated; `offline_access` granted only with `prompt=consent`, as
// OpenID Connect Core §11 says) and revocation (RFC 7009). Its own development pages
// ask the person to sign in and to consent (`browser.mjs` fills them in). Everything
// is kept in memory: started again, it knows no client, grant or key it had.
// It prints `PORT <n>` once it listens; a token request and a revocation are appended
// to LOG as a line of JSON each.
//   node oidc-provider.mjs LOG [--port N] [--access-seconds N]
import { appendFileSync } from "node:fs";
import { createServer } from "node:http";
import Provider from "oidc-provider";

const [log, ...flags] = process.argv.slice(2);
const flag = (name, otherwise) => {
  const at = flags.indexOf(name);
  return at >= 0 ? Number(flags[at + 1]) : otherwise;
};
// Its notices go to stderr: stdout carries the port alone, and is closed once read.
console.info = console.error;
const note = (entry) => appendFileSync(log, `${JSON.stringify(entry)}\n`);

const start = (port) => {
  const issuer = `http://127.0.0.1:${port}`;
  const provider = new Provider(issuer, {
    clients: [],
    scopes: ["openid", "offline_access", "mcp"],
    pkce: { required: () => true },
    features: {
      registration: { enabled: true },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        // A client that names no resource gets none: every token here is for one.
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, resource) => ({
          scope: "mcp",
          audience: resource,
          accessTokenTTL: flag("--access-seconds", 3600),
          accessTokenFormat: "jwt",
        }),
      },
    },
    // A person's consent is asked for offline_access, as the specification has it.
    issueRefreshToken: async (ctx, client, code) =>
      client.grantTypeAllowed("refresh_token") && code.scopes.has("offline_access"),
  });
  provider.on("grant.success", (ctx) => note({ grant: ctx.oidc.params.grant_type }));
  provider.on("grant.error", (ctx, error) => note({ grant: ctx.oidc.params?.grant_type, refused: error.error }));
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.path === "/token/revocation") note({ revoked: ctx.status });
  });
  provider.on("registration_create.success", () => note({ registered: true }));
  return provider;
};

// The issuer names the port, so the provider is made once the port is bound.
const server = createServer();
server.listen(flag("--port", 0), "127.0.0.1", () => {
  const { port } = server.address();
  server.on("request", start(port).callback());
  console.log(`PORT ${port}`);
});
