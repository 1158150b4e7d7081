// A TLS front for a plain server of the tests', as an organisation's reverse proxy is:
// it listens on 127.0.0.1 with the certificate and key given (PEM files), prints
// `PORT <n>`, and passes every connection's bytes to and from 127.0.0.1:TARGET.
//   node tls-front.mjs CERT KEY TARGET
import { readFileSync } from "node:fs";
import { connect } from "node:net";
import { createServer } from "node:tls";

const [cert, key, target] = process.argv.slice(2);
const server = createServer({ cert: readFileSync(cert), key: readFileSync(key) }, (client) => {
  const upstream = connect(Number(target), "127.0.0.1");
  client.pipe(upstream).pipe(client);
  const end = () => {
    client.destroy();
    upstream.destroy();
  };
  client.on("error", end);
  upstream.on("error", end);
});
server.listen(0, "127.0.0.1", () => console.log(`PORT ${server.address().port}`));
