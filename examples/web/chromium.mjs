// Headless Chromium for the example pages' screenshots: Debian's chromium with WebGPU on
// SwiftShader (a CPU Vulkan, so no GPU is needed), through playwright-core (`npm install
// --no-save playwright-core` in examples/web). Page errors and console errors go to
// stderr.

import { chromium } from "playwright-core";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A fresh browser context and its page at `url`: `{ context, page }`. */
export async function open(url, viewport) {
  const context = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), "tilec-")), {
    executablePath: "/usr/bin/chromium",
    headless: true,
    viewport,
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
  return { context, page };
}
