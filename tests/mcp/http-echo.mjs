// A Streamable HTTP MCP server of the tests' own, written against the specification with
// node:http alone (no SDK), so that a test sees every byte and header the proxy sends.
// It prints `PORT <n>` on stdout once it listens on 127.0.0.1, and appends one JSON line
// per HTTP request it gets ({method, headers, body}) to the file named by its argument.
//
// Both eras: a legacy session starts with `initialize` (answered with an Mcp-Session-Id,
// which every later request must carry, and a GET stream that sends one log message and
// hangs up, then resumes after it when asked with Last-Event-ID);
// a 2026-07-28 request carries its version in `_meta`, which must match the
// MCP-Protocol-Version header, as Mcp-Method and Mcp-Name must match the body.
//
// Tools:
//   note    owns a `reason` parameter (R5); answers with the arguments it received
//   record  answers with the arguments it received; its `region` is an x-mcp-header
//   stream  answers on an SSE stream, after a progress notification
//   fail    the HTTP answer is 500, with no JSON-RPC body
//   drop    an SSE stream that ends without the answer
//   hang    never answers, and keeps the request open
//   endless an SSE event whose data never ends, written for as long as it is read
//   crlf    answers with JSON whose whitespace holds carriage returns around a second,
//           forged answer (to id 99): one message to a JSON parser, two to a reader that
//           ends lines at CR
//   batch   answers with a JSON-RPC batch: its own answer and a forged one (to id 99)
//   change  `note` no longer owns a `reason` from now; answered on an SSE stream that
//           first says so with notifications/tools/list_changed
//   grant   `record` owns a `reason` from now (answered as `change` is)
//   ask     asks the client (elicitation/create, id "ask-1") on the call's SSE stream,
//           and answers the call with the content the client answered it with, once
//           the client's answer is POSTed (or says none came, after 60 s)
//   flood   an SSE stream of log notifications that never ends, written as it is read
//   batch1  answers with a one-element JSON-RPC batch holding its own answer
//   hop     answers with a header that its `Connection` names (`X-Hop`)
//
// `record` owns a `reason` too for a listing whose `_meta` says the client can elicit:
// a server that declares its tools by the caller's capabilities.
//
// `subscriptions/listen` is answered on an SSE stream that says the tools changed at
// once, then stays open, as a subscription's stream does.
import { createServer } from "node:http";
import { appendFileSync } from "node:fs";

const log = process.argv[2];
const flags = process.argv.slice(3);
// With --hang-up, every GET stream ends at once without an event.
const hangUp = flags.includes("--hang-up");
// With --poll, every GET stream is a poll (2025-11-25): it sends an event id with no
// message and ends, asking to be asked again in 100 ms; the eighth also carries a note.
const poll = flags.includes("--poll");
let polls = 0;
// With --hang-delete, a DELETE is never answered.
const hangDelete = flags.includes("--hang-delete");
// With --hang-list, a tools/list is never answered, and kept open.
const hangList = flags.includes("--hang-list");
// With --endless-pages, every page of tools/list names a next one, for ever.
const endlessPages = flags.includes("--endless-pages");
let pages = 0;
// With --pages N, tools/list answers in N pages, the cursor `page-K` naming the K-th.
const paged = flags.includes("--pages") ? Number(flags[flags.indexOf("--pages") + 1]) : 0;
// With --refuse-posts, every POST is answered 501 with no JSON-RPC body, once it is read.
const refusePosts = flags.includes("--refuse-posts");
// With --unauthorized, every POST is answered 401 with a Bearer challenge naming the
// resource's metadata, and an OAuth error body, as a server that signs users in does.
const unauthorized = flags.includes("--unauthorized");
// With --cacheable=<ttlMs>,<scope>, every listing says it may be reused for that long by
// that scope (2026-07-28's cacheable results).
const cacheable = flags.find((flag) => flag.startsWith("--cacheable="))?.split("=")[1].split(",");
const reuse = cacheable ? { ttlMs: Number(cacheable[0]), cacheScope: cacheable[1] } : {};
// With --redirect, every request to /mcp is sent to /mcp/ (307), where it is served: the
// common trailing-slash redirect. --redirect=303 (or another status) sends it so instead.
const redirect = flags.includes("--redirect")
  ? "307"
  : flags.find((flag) => flag.startsWith("--redirect="))?.split("=")[1];
// With --ping-list, a tools/list is answered with an SSE stream of comments alone, for ever.
const pingList = flags.includes("--ping-list");
// With --deaf, a POST whose body passes 1 MiB is read no further, and never answered.
const deaf = flags.includes("--deaf");
// With --expiring, each initialize starts a session of its own (session-1, session-2, …),
// and a call of the tool `expire` ends the current one: every later request naming it
// is answered 404, as a server that expires sessions answers.
const expiring = flags.includes("--expiring");
// With --redeploying too, a session's end is a new version of the server: from then on
// `note` no longer owns a `reason`, and `record` owns one.
const redeploying = flags.includes("--redeploying");
let sessions = 0;
let current;
const expired = new Set();
// With --refuse-discover, server/discover is refused (400) with a session id on the
// answer, as the Python SDK's servers refuse a method they do not know.
const refuseDiscover = flags.includes("--refuse-discover");
// The client's answers to the server's own requests, by id, and who waits for them.
const answers = new Map();
const MODERN = "2026-07-28";
const SESSION = "session-1f2e";
current = SESSION;
const object = (properties) => ({ type: "object", properties });
const tools = [
  { name: "note", inputSchema: object({ reason: { type: "string" } }) },
  {
    name: "record",
    inputSchema: object({
      text: { type: "string" },
      region: { type: "string", "x-mcp-header": "Region" },
    }),
  },
  { name: "stream", inputSchema: object({ text: { type: "string" } }) },
  { name: "fail", inputSchema: object({}) },
  { name: "drop", inputSchema: object({}) },
  { name: "crlf", inputSchema: object({}) },
  { name: "batch", inputSchema: object({}) },
  { name: "hang", inputSchema: object({}) },
  { name: "endless", inputSchema: object({}) },
  { name: "change", inputSchema: object({}) },
  { name: "grant", inputSchema: object({}) },
  { name: "ask", inputSchema: object({}) },
  { name: "flood", inputSchema: object({}) },
  { name: "batch1", inputSchema: object({}) },
  { name: "hop", inputSchema: object({}) },
];
const recordOwningReason = {
  name: "record",
  inputSchema: object({ text: { type: "string" }, reason: { type: "string" } }),
};
// The tools as declared to a listing made with `meta`.
const declared = (meta) =>
  meta["io.modelcontextprotocol/clientCapabilities"]?.elicitation
    ? tools.map((tool) => (tool.name === "record" ? recordOwningReason : tool))
    : tools;

const json = (res, status, body, headers = {}) => {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
};
const result = (id, value) => ({ jsonrpc: "2.0", id, result: value });
const mismatch = (res, id, what) =>
  json(res, 400, { jsonrpc: "2.0", id, error: { code: -32020, message: `Header mismatch: ${what}` } });
const sse = (res) => {
  res.writeHead(200, { "content-type": "text/event-stream", "x-accel-buffering": "no" });
  return (message) => res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
};

const server = createServer((req, res) => {
  if (redirect && req.url === "/mcp") {
    appendFileSync(log, JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body: "" }) + "\n");
    return res.writeHead(Number(redirect), { location: "/mcp/" }).end();
  }
  let body = "";
  req.setEncoding("utf8");
  req.on("data", (chunk) => {
    body += chunk;
    if (deaf && body.length > 1 << 20) req.pause();
  });
  req.on("end", () => {
    appendFileSync(log, JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body }) + "\n");
    if (req.method === "GET") {
      if (expired.has(req.headers["mcp-session-id"])) return json(res, 404, {});
      if (req.headers["mcp-session-id"] !== current) return json(res, 405, {});
      const note = (data) => JSON.stringify({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data } });
      res.writeHead(200, { "content-type": "text/event-stream", "x-accel-buffering": "no" });
      if (hangUp) return res.end();
      if (poll) {
        polls += 1;
        const after = polls === 8 ? `id: m${polls}\nevent: message\ndata: ${note("after seven polls")}\n\n` : "";
        return res.end(`retry: 100\nid: p${polls}\ndata:\n\n${after}`);
      }
      if (req.headers["last-event-id"] === undefined) {
        // The first stream sends one event and hangs up, as a server behind a proxy
        // that cuts long requests does: the client is to come back for the rest.
        return res.end(`retry: 100\nid: 1\nevent: message\ndata: ${note("from the GET stream")}\n\n`);
      }
      if (req.headers["last-event-id"] === "1") {
        res.write(`id: 2\nevent: message\ndata: ${note("resumed after event 1")}\n\n`);
      }
      return; // kept open, as a server's stream is
    }
    if (req.method === "DELETE") return hangDelete ? undefined : json(res, 200, {});
    if (refusePosts) return res.writeHead(501).end("no POST here");
    if (unauthorized) {
      const metadata = `http://${req.headers.host}/.well-known/oauth-protected-resource/mcp`;
      res.writeHead(401, {
        "content-type": "application/json",
        "www-authenticate": `Bearer error="invalid_token", resource_metadata="${metadata}"`,
      });
      return res.end(JSON.stringify({ error: "invalid_token", error_description: "Missing Authorization header" }));
    }
    const message = JSON.parse(body);
    const { id, method, params = {} } = message;
    const meta = params._meta ?? {};
    const modern = meta["io.modelcontextprotocol/protocolVersion"] === MODERN;
    if (modern) {
      if (req.headers["mcp-protocol-version"] !== MODERN) return mismatch(res, id, "MCP-Protocol-Version");
      if (req.headers["mcp-method"] !== method) return mismatch(res, id, "Mcp-Method");
    } else if (method !== "initialize" && method !== "server/discover") {
      const given = req.headers["mcp-session-id"];
      if (expired.has(given)) {
        return json(res, 404, { jsonrpc: "2.0", id: null, error: { code: -32001, message: "Session not found" } });
      }
      if (given !== current) {
        return json(res, 400, { jsonrpc: "2.0", id: null, error: { code: -32000, message: "no session" } });
      }
    }
    if (id === undefined) return res.writeHead(202).end();
    if (method === undefined) {
      // The client answering the server's own request.
      answers.get(id)?.(message.result ?? message.error);
      return res.writeHead(202).end();
    }
    switch (method) {
      case "initialize":
        if (expiring) current = `session-${++sessions}`;
        return json(
          res,
          200,
          result(id, {
            protocolVersion: "2025-06-18",
            capabilities: { tools: {} },
            serverInfo: { name: "http-echo", version: "1.0.0" },
          }),
          { "mcp-session-id": current },
        );
      case "server/discover":
        if (refuseDiscover) {
          return json(res, 400, { jsonrpc: "2.0", id, error: { code: -32601, message: "Method not found" } },
            { "mcp-session-id": "probe-refused" });
        }
        return json(res, 200, result(id, { supportedVersions: [MODERN], capabilities: { tools: {} },
          serverInfo: { name: "http-echo", version: "1.0.0" } }));
      case "tools/list":
        if (hangList) return;
        if (pingList) {
          res.writeHead(200, { "content-type": "text/event-stream" });
          const ping = setInterval(() => res.write(": ping\n\n"), 100);
          return res.on("close", () => clearInterval(ping));
        }
        if (endlessPages) return json(res, 200, result(id, { tools, nextCursor: `page-${++pages}` }));
        if (paged) {
          const all = declared(meta);
          const page = Number(String(params.cursor ?? "page-0").slice("page-".length));
          const size = Math.ceil(all.length / paged);
          const next = page + 1 < paged ? { nextCursor: `page-${page + 1}` } : {};
          return json(res, 200, result(id, { tools: all.slice(page * size, (page + 1) * size), ...next }));
        }
        return json(res, 200, result(id, { tools: declared(meta), ...reuse }));
      case "subscriptions/listen": {
        sse(res)({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
        return; // kept open
      }
      case "tools/call": {
        if (modern && req.headers["mcp-name"] !== params.name) return mismatch(res, id, "Mcp-Name");
        const text = (t) => ({ content: [{ type: "text", text: t }] });
        const args = JSON.stringify(params.arguments ?? {});
        switch (params.name) {
          case "expire":
            expired.add(current);
            if (redeploying) {
              tools[0] = { name: "note", inputSchema: object({ text: { type: "string" } }) };
              tools[1] = recordOwningReason;
            }
            return json(res, 200, result(id, text("expired")));
          case "note":
          case "record":
            return json(res, 200, result(id, text(args)));
          case "stream": {
            const send = sse(res);
            send({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: 1, progress: 1 } });
            send(result(id, text(args)));
            return res.end();
          }
          case "fail":
            return res.writeHead(500).end("internal trouble");
          case "crlf": {
            const forged = JSON.stringify(result(99, text("forged")));
            res.writeHead(200, { "content-type": "application/json" });
            const answer = JSON.stringify(result(id, text("real")));
            return res.end(answer.slice(0, -1) + `,"x":\r${forged}\r}`);
          }
          case "batch":
            return json(res, 200, [result(id, text("real")), result(99, text("forged"))]);
          case "change": {
            tools[0] = { name: "note", inputSchema: object({ text: { type: "string" } }) };
            const send = sse(res);
            send({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
            send(result(id, text("changed")));
            return res.end();
          }
          case "grant": {
            tools[1] = recordOwningReason;
            const send = sse(res);
            send({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
            send(result(id, text("granted")));
            return res.end();
          }
          case "ask": {
            const send = sse(res);
            const asked = "ask-1";
            const timer = setTimeout(() => answered(null), 60_000);
            const answered = (answer) => {
              clearTimeout(timer);
              answers.delete(asked);
              send(result(id, text(answer ? `accepted: ${JSON.stringify(answer.content)}` : "no answer came")));
              res.end();
            };
            answers.set(asked, answered);
            return send({ jsonrpc: "2.0", id: asked, method: "elicitation/create",
              params: { message: "which?", requestedSchema: object({ x: { type: "string" } }) } });
          }
          case "flood": {
            const send = sse(res);
            let open = true;
            let n = 0;
            res.on("close", () => (open = false));
            const note = () => ({ jsonrpc: "2.0", method: "notifications/message",
              params: { level: "info", data: `flood ${n++}` } });
            const more = () => {
              while (open && send(note()));
              if (open) res.once("drain", more);
            };
            return more();
          }
          case "batch1":
            return json(res, 200, [result(id, text("alone"))]);
          case "hop":
            return json(res, 200, result(id, text("hop")), { connection: "x-hop", "x-hop": "secret" });
          case "drop": {
            sse(res);
            return res.end();
          }
          case "hang":
            return;
          case "endless": {
            res.writeHead(200, { "content-type": "text/event-stream" });
            res.write("event: message\ndata: ");
            const chunk = "x".repeat(64 * 1024);
            let open = true;
            res.on("close", () => (open = false));
            const more = () => {
              while (open && res.write(chunk));
              if (open) res.once("drain", more);
            };
            return more();
          }
        }
        return json(res, 200, result(id, { ...text(`no tool ${params.name}`), isError: true }));
      }
    }
    return json(res, 404, { jsonrpc: "2.0", id, error: { code: -32601, message: "Method not found" } });
  });
});
server.listen(0, "127.0.0.1", () => console.log(`PORT ${server.address().port}`));
