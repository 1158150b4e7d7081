// A person's browser, for the tests' sign-ins: opens the page it is given (an
// authorization server's, which the tests' servers answer with a redirect at once) and
// follows where it sends it, to the proxy's loopback listener. `BROWSER` names it.
// With BROWSER_LOG set, each page it is asked to open is appended to that file, a line
// each, for a test to read what the person was shown: the URL it was given, then, after a
// space, where that first sent it (the proxy's one-time link leads to the authorization
// server's page), when it did.
//   node browser.mjs URL
import { appendFileSync } from "node:fs";

const [url] = process.argv.slice(2);
try {
  const first = await fetch(url, { redirect: "manual" });
  const location = first.status >= 300 && first.status < 400 ? first.headers.get("location") : null;
  await first.text();
  if (process.env.BROWSER_LOG) {
    appendFileSync(process.env.BROWSER_LOG, location ? `${url} ${location}\n` : `${url}\n`);
  }
  if (location) {
    const page = await fetch(new URL(location, url), { redirect: "follow" });
    await page.text();
  }
} catch (error) {
  console.error(`browser.mjs: ${error}`);
  process.exit(1);
}
