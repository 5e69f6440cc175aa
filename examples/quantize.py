"""int8 quantization by rows, and back: each program takes one row, scales it so that its
largest magnitude becomes 127, rounds to int8 and keeps the scale; dequantizing multiplies
back. On WGSL the int8 array is packed four to a 32-bit word.

    python examples/quantize.py [--backend ptx|wgsl|numpy|auto] [--rows R] [--cols C]
"""

import numpy as np

import compiler as tc
import compiler.language as tl
from compiler.cli import reported_errors, script_parser


@tc.kernel
def quantize_rows(x, q, scales, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    v = tl.load(x + row * n_cols + cols, mask=mask, other=0.0)
    scale = tl.maximum(tl.max(tl.abs(v), axis=0), 1e-30) / 127.0
    # round half away from zero; .to(tl.int8) saturates (and |v / scale| <= 127 anyway)
    r = v / scale
    rounded = tl.where(r >= 0, tl.floor(r + 0.5), -tl.floor(0.5 - r))
    tl.store(q + row * n_cols + cols, rounded.to(tl.int8), mask=mask)
    tl.store(scales + row, scale)


@tc.kernel
def dequantize_rows(q, scales, out, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    v = tl.load(q + row * n_cols + cols, mask=mask).to(tl.float32)
    tl.store(out + row * n_cols + cols, v * tl.load(scales + row), mask=mask)


def reference(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The same arithmetic in float32 NumPy: int8 rows and their scales."""
    scale = np.maximum(np.abs(x).max(axis=1), np.float32(1e-30)) / np.float32(127.0)
    r = x / scale[:, None]
    rounded = np.where(r >= 0, np.floor(r + np.float32(0.5)), -np.floor(np.float32(0.5) - r))
    return rounded.astype(np.int8), scale.astype(np.float32)


def main(backend: str | None = None, rows: int = 64, cols: int = 1000) -> None:
    x = (np.random.default_rng(0).standard_normal((rows, cols)) * 3).astype(np.float32)
    q, scales = np.zeros((rows, cols), np.int8), np.zeros(rows, np.float32)
    block = 1 << max(0, cols - 1).bit_length()
    quantize_rows[(rows,)](x, q, scales, cols, BLOCK=block, backend=backend)
    want_q, want_scales = reference(x)
    # WGSL lets a driver's float division be 2.5 ulp off (NVIDIA's is): a scale may differ
    # in its last bits, and a value on a rounding tie by one step
    np.testing.assert_allclose(scales, want_scales, rtol=3e-7)
    assert np.abs(q.astype(np.int32) - want_q).max() <= 1
    back = np.zeros_like(x)
    dequantize_rows[(rows,)](q, scales, back, cols, BLOCK=block, backend=backend)
    np.testing.assert_array_equal(back, q.astype(np.float32) * scales[:, None])
    assert np.abs(back - x).max() <= scales.max() / 2 * (1 + 1e-6)  # within half a step
    print(f"quantize: {rows}x{cols} float32 -> int8 -> float32 on "
          f"{tc.jit.resolve_backend(backend)}: OK")


if __name__ == "__main__":
    p = script_parser(__doc__)
    p.add_argument("--rows", type=int, default=64)
    p.add_argument("--cols", type=int, default=1000)
    args = p.parse_args()
    with reported_errors():
        main(args.backend, args.rows, args.cols)
