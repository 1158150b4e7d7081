// A person's browser, for the tests' sign-ins: opens the page it is given (an
// authorization server's, which the tests' servers answer with a redirect at once) and
// follows where it sends it, to the proxy's loopback listener. `BROWSER` names it.
//   node browser.mjs URL
const [url] = process.argv.slice(2);
try {
  const page = await fetch(url, { redirect: "follow" });
  await page.text();
} catch (error) {
  console.error(`browser.mjs: ${error}`);
  process.exit(1);
}
