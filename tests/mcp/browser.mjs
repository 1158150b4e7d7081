// A person's browser, for the tests' sign-ins: opens the page it is given and goes
// where it is sent, with the cookies each site set, as a person at the keyboard would:
// a page with a form (a provider's sign-in page, its consent page) is filled in (any
// name and password, which a provider's development pages take) and sent, until the
// last page, the proxy's loopback listener's. `BROWSER` names it.
// With BROWSER_LOG set, each page it is asked to open is appended to that file, a line
// each, for a test to read what the person was shown: the URL it was given, then, after a
// space, where that first sent it (the proxy's one-time link leads to the authorization
// server's page), when it did.
//   node browser.mjs URL
import { appendFileSync } from "node:fs";

const [url] = process.argv.slice(2);
// Cookies by host and port, as a browser keeps them (paths aside: sending a cookie to
// more of its site's pages than it asked for changes nothing here).
const jar = new Map();
const cookiesOf = (at) => [...(jar.get(at.host) ?? new Map())].map(([name, value]) => `${name}=${value}`).join("; ");
const keep = (at, response) => {
  const site = jar.get(at.host) ?? new Map();
  for (const line of response.headers.getSetCookie()) {
    const [pair] = line.split(";");
    const cut = pair.indexOf("=");
    site.set(pair.slice(0, cut).trim(), pair.slice(cut + 1).trim());
  }
  jar.set(at.host, site);
};
const open = async (at, init = {}) => {
  const response = await fetch(at, { ...init, redirect: "manual", headers: { ...init.headers, cookie: cookiesOf(at) } });
  keep(at, response);
  return response;
};
// A form's action and its fields, hidden ones as they are and the ones a person types.
const formOf = (page, at) => {
  const form = /<form[^>]*action="([^"]*)"[^>]*method="post"[^>]*>([\s\S]*?)<\/form>/i.exec(page);
  if (!form) return null;
  const fields = new URLSearchParams();
  for (const [input] of form[2].matchAll(/<input[^>]*>/gi)) {
    const name = /name="([^"]*)"/.exec(input)?.[1];
    if (!name) continue;
    const type = /type="([^"]*)"/.exec(input)?.[1] ?? "text";
    const value = /value="([^"]*)"/.exec(input)?.[1];
    fields.set(name, value ?? (type === "password" ? "a password" : "person"));
  }
  return { action: new URL(form[1].replaceAll("&amp;", "&"), at), fields };
};

try {
  const first = await open(new URL(url));
  const location = first.status >= 300 && first.status < 400 ? first.headers.get("location") : null;
  await first.text();
  if (process.env.BROWSER_LOG) {
    appendFileSync(process.env.BROWSER_LOG, location ? `${url} ${location}\n` : `${url}\n`);
  }
  let at = location ? new URL(location, url) : null;
  let init = {};
  // A bound on the pages of one sign-in, so that a loop ends.
  for (let pages = 0; at && pages < 20; pages += 1) {
    const response = await open(at, init);
    init = {};
    const page = await response.text();
    const next = response.headers.get("location");
    if (response.status >= 300 && response.status < 400 && next) {
      at = new URL(next, at);
      continue;
    }
    const form = response.ok ? formOf(page, at) : null;
    if (!form) break;
    init = {
      method: "POST",
      body: form.fields.toString(),
      headers: { "content-type": "application/x-www-form-urlencoded" },
    };
    at = form.action;
  }
} catch (error) {
  console.error(`browser.mjs: ${error}`);
  process.exit(1);
}
