// Serves a web-standard fetch handler (`(Request) => Promise<Response>`) on 127.0.0.1
// with node:http, printing `PORT <n>` once it listens (the tests' support crate waits for
// that line), on the port `PORT` names (a server restarted where its clients knew it) or
// a free one. `onBody(method, body)` sees each request's body first, for servers that log.
// Shared by the tests' own servers on the TypeScript SDK's 2.x line, whose HTTP entry is
// a fetch handler.
import { createServer } from "node:http";

export function serveFetch(fetch, onBody = () => {}) {
  const server = createServer((req, res) => {
    // A client that goes away mid-request (the conformance suite aborts some on purpose)
    // ends that request, not the server.
    serve(req, res).catch(() => res.destroy());
  });
  const serve = async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = Buffer.concat(chunks).toString("utf8");
    onBody(req.method, body);
    // A client that goes away aborts the request, so a stream the SDK holds open ends.
    const gone = new AbortController();
    res.on("close", () => gone.abort());
    const request = new Request(`http://${req.headers.host}${req.url}`, {
      method: req.method,
      headers: Object.entries(req.headers).flatMap(([name, value]) =>
        [value].flat().map((one) => [name, one]),
      ),
      body: req.method === "POST" ? body : undefined,
      signal: gone.signal,
    });
    const response = await fetch(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    try {
      if (response.body) for await (const chunk of response.body) res.write(chunk);
    } catch {
      // The client went away mid-stream.
    }
    res.end();
  };
  server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => console.log(`PORT ${server.address().port}`));
  return server;
}
