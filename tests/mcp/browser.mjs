// A person's browser, for the tests' sign-ins: opens the page it is given (an
// authorization server's, which the tests' servers answer with a redirect at once) and
// follows where it sends it, to the proxy's loopback listener. `BROWSER` names it.
// With BROWSER_LOG set, each page it is asked to open is appended to that file, a line
// each, for a test to read what the person was shown.
//   node browser.mjs URL
import { appendFileSync } from "node:fs";

const [url] = process.argv.slice(2);
if (process.env.BROWSER_LOG) appendFileSync(process.env.BROWSER_LOG, `${url}\n`);
try {
  const page = await fetch(url, { redirect: "follow" });
  await page.text();
} catch (error) {
  console.error(`browser.mjs: ${error}`);
  process.exit(1);
}
