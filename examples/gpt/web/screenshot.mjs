// A screenshot of the page in headless Chromium after it has written 200 tokens (WebGPU
// through SwiftShader, so no GPU is needed). Needs Debian's chromium and `npm install
// playwright-core`; export the model and serve the page first (README.md):
//
//   node examples/gpt/web/screenshot.mjs http://localhost:8001/ examples/gpt/web/screenshot.png

import { chromium } from "playwright-core";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [url = "http://localhost:8001/", out = "screenshot.png"] = process.argv.slice(2);
const context = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), "tilec-")), {
  executablePath: "/usr/bin/chromium",
  headless: true,
  viewport: { width: 900, height: 640 },
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
page.on("console", (m) => m.type() === "error" && console.error(`console: ${m.text()}`));
await page.goto(url);
await page.waitForFunction(() => !document.querySelector("#go").disabled ||
  document.querySelector("#status").textContent.includes("no WebGPU"), null, { timeout: 120_000 });
await page.fill("#count", "200");
await page.click("#go");
await page.waitForFunction(() => /done$|WebGPU error/.test(
  document.querySelector("#status").textContent), null, { timeout: 600_000 });
console.log(await page.textContent("#status"));
await page.screenshot({ path: out });
await context.close();
