// A screenshot of the page in headless Chromium, once it has drawn (WebGPU through
// SwiftShader, so no GPU is needed). Needs Debian's chromium and `npm install
// playwright-core`; serve the page first (README.md):
//
//   node examples/web/screenshot.mjs http://localhost:8000/ examples/web/screenshot.png

import { chromium } from "playwright-core";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [url = "http://localhost:8000/", out = "screenshot.png"] = process.argv.slice(2);
const context = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), "tilec-")), {
  executablePath: "/usr/bin/chromium",
  headless: true,
  viewport: { width: 840, height: 720 },
  ignoreDefaultArgs: ["--disable-gpu"],
  args: [
    "--no-sandbox", "--enable-unsafe-webgpu", "--enable-features=Vulkan",
    "--use-vulkan=swiftshader", "--use-webgpu-adapter=swiftshader", "--ignore-gpu-blocklist",
    // the machine's network is closed: no background connections
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--no-first-run", "--disable-quic",
  ],
});
const page = context.pages()[0] ?? await context.newPage();
page.on("pageerror", (e) => console.error(`page error: ${e.message}`));
await page.goto(url);
await page.waitForFunction(() => {
  const text = document.querySelector("#status").textContent;
  return text.includes(" ms on ") || text.includes("no WebGPU");
}, null, { timeout: 60_000 });
console.log(await page.textContent("#status"));
await page.screenshot({ path: out });
await context.close();
