"""The Mandelbrot set as RGBA pixels, one pixel per tile element: the kernel that
``index.html`` runs on the user's GPU through WebGPU after ``--export``.

    python examples/web/mandelbrot.py [--backend ptx|wgsl|numpy|auto]
    python examples/web/mandelbrot.py --export examples/web   # mandelbrot.js + runtime

Every program iterates ``max_iter`` times; a point that has escaped keeps its ``z``
and stops counting, so the count is the iteration at which it escaped.
"""

import numpy as np

import compiler as tc
import compiler.language as tl
from compiler.cli import reported_errors, script_parser

SIGNATURE = "*i32,i32,i32,f32,f32,f32,i32"
CONSTANTS = {"BLOCK": 256}


@tc.kernel
def mandelbrot(rgba, width, height, x0, y0, step, max_iter, BLOCK: tl.constexpr):
    pix = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    cx = x0 + (pix % width).to(tl.float32) * step
    cy = y0 + (pix // width).to(tl.float32) * step
    zx = tl.zeros([BLOCK], tl.float32)
    zy = tl.zeros([BLOCK], tl.float32)
    count = tl.zeros([BLOCK], tl.int32)
    for _ in range(max_iter):
        bounded = zx * zx + zy * zy <= 4.0
        x_next = zx * zx - zy * zy + cx
        zy = tl.where(bounded, 2.0 * zx * zy + cy, zy)
        zx = tl.where(bounded, x_next, zx)
        count += bounded.to(tl.int32)
    # a smooth palette of t in [0, 1]: black inside the set (t = 1) and far outside
    t = count.to(tl.float32) / max_iter
    s = 1.0 - t
    r = (9.0 * s * t * t * t * 255.0).to(tl.int32)
    g = (15.0 * s * s * t * t * 255.0).to(tl.int32)
    b = (8.5 * s * s * s * t * 255.0).to(tl.int32)
    opaque = -16777216  # alpha 255 in the top byte: RGBA bytes in little-endian order
    tl.store(rgba + pix, r | (g << 8) | (b << 16) | opaque, mask=pix < width * height)


def reference(width: int, height: int, x0: float, y0: float, step: float,
              max_iter: int) -> np.ndarray:
    """The same pixels in NumPy, float32 as the kernel computes them."""
    f = np.float32
    pix = np.arange(width * height)
    cx = f(x0) + (pix % width).astype(f) * f(step)
    cy = f(y0) + (pix // width).astype(f) * f(step)
    zx, zy = np.zeros_like(cx), np.zeros_like(cy)
    count = np.zeros(pix.size, np.int32)
    for _ in range(max_iter):
        bounded = zx * zx + zy * zy <= 4
        zx, zy = (np.where(bounded, zx * zx - zy * zy + cx, zx),
                  np.where(bounded, f(2) * zx * zy + cy, zy))
        count += bounded
    t = count.astype(f) / f(max_iter)
    s = f(1) - t
    r = (f(9) * s * t * t * t * f(255)).astype(np.int32)
    g = (f(15) * s * s * t * t * f(255)).astype(np.int32)
    b = (f(8.5) * s * s * s * t * f(255)).astype(np.int32)
    return r | (g << 8) | (b << 16) | np.int32(-16777216)


def view(width: int, height: int, cx: float = -0.6, cy: float = 0.0,
         span: float = 3.0) -> tuple[float, float, float]:
    """x0, y0 and the step between pixels of a ``span`` wide view centred on cx + i cy."""
    step = span / width
    return cx - step * width / 2, cy - step * height / 2, step


def main(backend: str | None = None, width: int = 320, height: int = 240,
         max_iter: int = 200) -> None:
    x0, y0, step = view(width, height)
    rgba = np.zeros(width * height, np.int32)
    mandelbrot[(tc.cdiv(width * height, CONSTANTS["BLOCK"]),)](
        rgba, width, height, x0, y0, step, max_iter, **CONSTANTS, backend=backend)
    # Rounding differs where a GPU contracts a * b + c into one FMA: a few points on
    # the set's boundary escape one iteration earlier or later.
    same = np.mean(rgba == reference(width, height, x0, y0, step, max_iter))
    assert same > 0.99, f"only {same:.2%} of the pixels match NumPy"
    print(f"mandelbrot: {width}x{height}, {same:.2%} of pixels as NumPy's, on "
          f"{tc.jit.resolve_backend(backend)}: OK")


if __name__ == "__main__":
    p = script_parser(__doc__)
    p.add_argument("--export", metavar="DIR", help="write mandelbrot.js (and the tilec "
                   "web runtime) for the page in DIR instead of running")
    a = p.parse_args()
    with reported_errors():
        if a.export:
            tc.export(mandelbrot, SIGNATURE, CONSTANTS, output=f"{a.export}/mandelbrot.js")
            print(f"wrote {a.export}/mandelbrot.js and {a.export}/tilec-runtime.js")
        else:
            main(a.backend)
