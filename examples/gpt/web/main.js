// The page: loads the exported GPT (gpt.js, gpt.bin, model.json) and writes after the
// prompt, token by token, showing tokens per second.

import { load } from "./gpt.js";
import { generate } from "./generate.js";
import { subgroupSize } from "./tilec-runtime.js";

const status = document.querySelector("#status");
const button = document.querySelector("#go");
const adapter = await navigator.gpu?.requestAdapter();
if (!adapter) {
  status.textContent = "This browser has no WebGPU adapter (navigator.gpu).";
  throw new Error(status.textContent);
}
// with subgroups where the GPU has them: the kernels' shuffles use them (tilec-runtime.js)
const device = await adapter.requestDevice({
  requiredFeatures: adapter.features.has("subgroups") ? ["subgroups"] : [],
});
device.addEventListener("uncapturederror", (e) => { // WebGPU reports these, never throws
  status.textContent = `WebGPU error: ${e.error.message}`;
  console.error(e.error.message);
});
const { description, vendor, architecture } = adapter.info ?? {};
const gpuName = description || [vendor, architecture].filter(Boolean).join(" ") || "this GPU";
const meta = await (await fetch("./model.json")).json();
const graph = await load(device);
const { block_size: blockSize, n_layer: layers, n_embd: width } = meta.config;
const subgroups = await subgroupSize(device);
status.textContent = `Ready: ${layers} layers, ${width} wide, ${meta.launches_per_token} ` +
  `kernel launches a token, on ${gpuName}` +
  (subgroups ? `, with subgroups of ${subgroups}.` : ".");
button.disabled = false;

const bytes = new TextDecoder();
button.addEventListener("click", async () => {
  button.disabled = true;
  const text = document.querySelector("#prompt").value;
  const prompt = Array.from(new TextEncoder().encode(text)).slice(-(blockSize - 1));
  const count = Math.max(1, Math.min(Number(document.querySelector("#count").value) || 1,
    blockSize + 1 - prompt.length));
  document.querySelector("#given").textContent = bytes.decode(new Uint8Array(prompt));
  const made = document.querySelector("#made");
  const tokens = [];
  const start = performance.now();
  await generate(device, graph, prompt, count, blockSize, (t) => {
    tokens.push(t);
    made.textContent = bytes.decode(new Uint8Array(tokens.map((x) => Math.min(x, 255))));
    const seconds = (performance.now() - start) / 1000;
    status.textContent = `${tokens.length} tokens, ${(tokens.length / seconds).toFixed(1)} ` +
      `tokens/s on ${gpuName}${subgroups ? ` (subgroups of ${subgroups})` : ""}, the ` +
      `prompt's ${prompt.length} tokens included in the time`;
  });
  status.textContent += ": done";
  button.disabled = false;
});
