// An MCP server of the tests' own that signs its users in, with its authorization server
// on the same origin, kept small enough to read whole: protected resource metadata
// (RFC 9728), authorization server metadata (RFC 8414), registration (RFC 7591), an
// authorization endpoint that approves at once (redirecting with code, state and iss),
// and a token endpoint that checks PKCE (S256) and `resource`, issues access tokens
// lasting `--expires-in` seconds and refresh tokens that are good once (rotated at each
// refresh: one used again is refused, and logged as such), and a revocation endpoint
// (RFC 7009) that forgets the token it is given and logs what it was. The MCP endpoint, /mcp,
// answers JSON-RPC (2025-11-25, one JSON body each) only with a current access token,
// else 401 with its challenge; `echo` answers with the arguments it received. /sse serves
// the same over the legacy HTTP+SSE transport (2024-11-05): a POST there is 405, its GET
// stream names the endpoint to POST messages to, and both ask for the token as /mcp does.
// It knows the clients it registered (logged), and refuses any other (`invalid_client`)
// at its authorization and token endpoints; a POST to /forget-clients forgets them all,
// as a provider that restarts or expires its dynamic registrations does.
// It prints `PORT <n>` once it listens on 127.0.0.1, and appends a line of JSON to the
// file named by its argument for each token request and each tools/call.
//   node oauth-server.mjs LOG [--expires-in SECONDS]
import { appendFileSync } from "node:fs";
import { createServer } from "node:http";
import { createHash, randomUUID } from "node:crypto";

const [log, ...flags] = process.argv.slice(2);
const at = flags.indexOf("--expires-in");
const expiresIn = at >= 0 ? Number(flags[at + 1]) : 3600;
const note = (entry) => appendFileSync(log, `${JSON.stringify(entry)}\n`);
let base = "";
const codes = new Map(); // code -> {challenge, resource}
const access = new Map(); // token -> expiry (ms)
const refresh = new Set(); // refresh tokens not yet used

const json = (res, status, body, headers = {}) =>
  res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
const read = async (req) => {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
};
const issue = (res) => {
  const token = randomUUID();
  const next = randomUUID();
  access.set(token, Date.now() + expiresIn * 1000);
  refresh.add(next);
  return json(res, 200, { access_token: token, token_type: "Bearer", expires_in: expiresIn, refresh_token: next });
};

// The resources tokens are issued for, once `base` is known.
const resources = { has: (resource) => resource === `${base}/mcp` || resource === `${base}/sse` };
// The clients it registered.
const clients = new Set();
// The legacy transport's open streams, by session.
const streams = new Map();
const signedIn = (req) => access.get((req.headers.authorization ?? "").replace(/^Bearer /, "")) > Date.now();

// The answer to one JSON-RPC message; none for a notification.
const answerOf = ({ id, method, params = {} }) => {
  if (id === undefined) return null;
  const result = (value) => ({ jsonrpc: "2.0", id, result: value });
  if (method === "initialize") {
    return result({ protocolVersion: params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "oauth-server", version: "1.0.0" } });
  }
  if (method === "tools/list") {
    return result({ tools: [{ name: "echo", inputSchema: { type: "object", properties: { text: { type: "string" } } } }] });
  }
  if (method === "tools/call") {
    note({ call: params.name, arguments: params.arguments });
    return result({ content: [{ type: "text", text: JSON.stringify(params.arguments ?? {}) }] });
  }
  return { jsonrpc: "2.0", id, error: { code: -32601, message: "Method not found" } };
};

const http = createServer(async (req, res) => {
  const url = new URL(req.url, base);
  const path = url.pathname;
  if (path === "/.well-known/oauth-protected-resource/mcp" || path === "/.well-known/oauth-protected-resource/sse") {
    return json(res, 200, { resource: `${base}${path.slice(path.lastIndexOf("/"))}`, authorization_servers: [base] });
  }
  if (path === "/.well-known/oauth-authorization-server") {
    return json(res, 200, {
      issuer: base,
      authorization_endpoint: `${base}/authorize`,
      token_endpoint: `${base}/token`,
      registration_endpoint: `${base}/register`,
      revocation_endpoint: `${base}/revoke`,
      response_types_supported: ["code"],
      grant_types_supported: ["authorization_code", "refresh_token"],
      code_challenge_methods_supported: ["S256"],
      token_endpoint_auth_methods_supported: ["none"],
      authorization_response_iss_parameter_supported: true,
    });
  }
  if (path === "/register" && req.method === "POST") {
    const asked = JSON.parse(await read(req));
    const client = randomUUID();
    clients.add(client);
    note({ registered: client });
    return json(res, 201, { client_id: client, redirect_uris: asked.redirect_uris, token_endpoint_auth_method: "none" });
  }
  if (path === "/forget-clients" && req.method === "POST") {
    clients.clear();
    return res.writeHead(204).end();
  }
  if (path === "/authorize") {
    // An unknown client is not sent back anywhere: its redirect URI cannot be trusted.
    if (!clients.has(url.searchParams.get("client_id"))) return json(res, 400, { error: "invalid_client" });
    const code = randomUUID();
    codes.set(code, { challenge: url.searchParams.get("code_challenge"), resource: url.searchParams.get("resource") });
    const back = new URL(url.searchParams.get("redirect_uri"));
    back.searchParams.set("code", code);
    back.searchParams.set("state", url.searchParams.get("state"));
    back.searchParams.set("iss", base);
    return res.writeHead(302, { location: back.toString() }).end();
  }
  if (path === "/revoke" && req.method === "POST") {
    const form = new URLSearchParams(await read(req));
    const token = form.get("token");
    const known = refresh.delete(token) ? "refresh_token" : access.delete(token) ? "access_token" : null;
    note({ revoked: known, hint: form.get("token_type_hint"), client: Boolean(form.get("client_id")) });
    return res.writeHead(200).end();
  }
  if (path === "/token" && req.method === "POST") {
    const form = new URLSearchParams(await read(req));
    const grant = form.get("grant_type");
    if (!clients.has(form.get("client_id"))) {
      note({ grant, good: false, client: "unknown" });
      return json(res, 401, { error: "invalid_client", error_description: "no such client" });
    }
    const resource = form.get("resource");
    if (grant === "authorization_code") {
      const asked = codes.get(form.get("code"));
      codes.delete(form.get("code"));
      const verifier = form.get("code_verifier") ?? "";
      const s256 = createHash("sha256").update(verifier).digest("base64url");
      const good = asked && asked.challenge === s256 && resources.has(resource) && asked.resource === resource;
      note({ grant, good: Boolean(good) });
      return good ? issue(res) : json(res, 400, { error: "invalid_grant" });
    }
    if (grant === "refresh_token") {
      const token = form.get("refresh_token");
      const good = refresh.delete(token) && resources.has(resource);
      note({ grant, good, reused: !good });
      return good ? issue(res) : json(res, 400, { error: "invalid_grant" });
    }
    return json(res, 400, { error: "unsupported_grant_type" });
  }
  // The legacy transport's POST of `initialize` to its stream's URL: not there.
  if (path === "/sse" && req.method === "POST") return res.writeHead(405).end();
  const endpoint = path === "/messages" ? "sse" : path.slice(1);
  if (["/mcp", "/sse", "/messages"].includes(path) && !signedIn(req)) {
    return json(res, 401, { error: "invalid_token" }, {
      "www-authenticate": `Bearer error="invalid_token", resource_metadata="${base}/.well-known/oauth-protected-resource/${endpoint}"`,
    });
  }
  if (path === "/sse" && req.method === "GET") {
    const session = randomUUID();
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write(`event: endpoint\ndata: /messages?session=${session}\n\n`);
    streams.set(session, res);
    return req.on("close", () => streams.delete(session));
  }
  if (path === "/messages" && req.method === "POST") {
    const stream = streams.get(url.searchParams.get("session"));
    if (!stream) return res.writeHead(404).end();
    const answer = answerOf(JSON.parse(await read(req)));
    if (answer) stream.write(`event: message\ndata: ${JSON.stringify(answer)}\n\n`);
    return res.writeHead(202).end();
  }
  if (path === "/mcp" && req.method === "POST") {
    const answer = answerOf(JSON.parse(await read(req)));
    return answer ? json(res, 200, answer) : res.writeHead(202).end();
  }
  res.writeHead(405).end();
});
http.listen(0, "127.0.0.1", () => {
  base = `http://127.0.0.1:${http.address().port}`;
  console.log(`PORT ${http.address().port}`);
});
