// The page: draws the set on the canvas; a click zooms in on the point, shift-click out.

import { render, view } from "./render.js";

const canvas = document.querySelector("canvas");
const status = document.querySelector("#status");
const adapter = await navigator.gpu?.requestAdapter();
if (!adapter) {
  status.textContent = "This browser has no WebGPU adapter (navigator.gpu).";
  throw new Error(status.textContent);
}
const device = await adapter.requestDevice();
const { description, vendor, architecture } = adapter.info ?? {};
const gpuName = description || [vendor, architecture].filter(Boolean).join(" ") || "this GPU";
let [cx, cy, span] = [-0.6, 0.0, 3.0];

async function draw() {
  const { width, height } = canvas;
  const start = performance.now();
  const pixels = await render(device, width, height, view(width, height, cx, cy, span));
  canvas.getContext("2d").putImageData(new ImageData(pixels, width, height), 0, 0);
  const ms = (performance.now() - start).toFixed(1);
  status.textContent = `centre ${cx.toFixed(6)} + ${cy.toFixed(6)}i, span ${span.toPrecision(3)}: ` +
    `${ms} ms on ${gpuName}`;
}

canvas.addEventListener("click", (e) => {
  const [x0, y0, step] = view(canvas.width, canvas.height, cx, cy, span);
  const box = canvas.getBoundingClientRect();
  cx = x0 + (e.clientX - box.left) * canvas.width / box.width * step;
  cy = y0 + (e.clientY - box.top) * canvas.height / box.height * step;
  span *= e.shiftKey ? 2 : 0.5;
  draw();
});
await draw();
