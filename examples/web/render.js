// Mandelbrot pixels from the exported tilec kernel (python mandelbrot.py --export .).
// Used by the page (main.js) and by tests/test_web_export.py in Deno.

import { mandelbrot } from "./mandelbrot.js";

const { BLOCK } = mandelbrot.spec.constants;

/** x0, y0 and the step between pixels of a `span` wide view centred on cx + i cy, as
 * `view` in mandelbrot.py. */
export function view(width, height, cx = -0.6, cy = 0.0, span = 3.0) {
  const step = span / width;
  return [cx - step * width / 2, cy - step * height / 2, step];
}

/** RGBA bytes of a width x height image of the view, computed on `device`. */
export async function render(device, width, height, [x0, y0, step], maxIter = 200) {
  const rgba = new Int32Array(width * height);
  await mandelbrot(device, Math.ceil(width * height / BLOCK), rgba, width, height,
    x0, y0, step, maxIter);
  return new Uint8ClampedArray(rgba.buffer);
}
