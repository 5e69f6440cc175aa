// A screenshot of the page in headless Chromium (examples/web/chromium.mjs) after it has
// written 200 tokens; export the model and serve the page first (README.md):
//
//   node examples/gpt/web/screenshot.mjs http://localhost:8001/ examples/gpt/web/screenshot.png

import { open } from "../../web/chromium.mjs";

const [url = "http://localhost:8001/", out = "screenshot.png"] = process.argv.slice(2);
const { context, page } = await open(url, { width: 900, height: 640 });
await page.waitForFunction(() => !document.querySelector("#go").disabled ||
  document.querySelector("#status").textContent.includes("no WebGPU"), null, { timeout: 120_000 });
await page.fill("#count", "200");
await page.click("#go");
await page.waitForFunction(() => /done$|WebGPU error/.test(
  document.querySelector("#status").textContent), null, { timeout: 600_000 });
console.log(await page.textContent("#status"));
await page.screenshot({ path: out });
await context.close();
