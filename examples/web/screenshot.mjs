// A screenshot of the page in headless Chromium (chromium.mjs), once it has drawn; serve
// the page first (README.md):
//
//   node examples/web/screenshot.mjs http://localhost:8000/ examples/web/screenshot.png

import { open } from "./chromium.mjs";

const [url = "http://localhost:8000/", out = "screenshot.png"] = process.argv.slice(2);
const { context, page } = await open(url, { width: 840, height: 720 });
await page.waitForFunction(() => {
  const text = document.querySelector("#status").textContent;
  return text.includes(" ms on ") || text.includes("no WebGPU");
}, null, { timeout: 60_000 });
console.log(await page.textContent("#status"));
await page.screenshot({ path: out });
await context.close();
