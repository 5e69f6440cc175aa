"""Row-wise softmax, fused: one program per row reads the row once, takes its max, the
exponentials and their sum, and writes the normalized row once.

    python examples/softmax.py [--backend ptx|wgsl|numpy|auto] [--rows R] [--cols C]
"""

import numpy as np

import compiler as tc
import compiler.language as tl
from compiler.cli import reported_errors, script_parser


@tc.kernel
def softmax(x, out, n_cols, x_stride, out_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    # -inf beyond the row: it never wins the max and its exponential adds 0 to the sum
    v = tl.load(x + row * x_stride + cols, mask=mask, other=-float("inf"))
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(out + row * out_stride + cols, e / tl.sum(e, axis=0), mask=mask)


def block_for(n_cols: int) -> int:
    """The tile width: the next power of two holding a whole row."""
    return 1 << max(0, n_cols - 1).bit_length()


def launch(x: np.ndarray, out: np.ndarray, backend: str | None = None, num_warps: int = 4) -> None:
    rows, cols = x.shape
    softmax[(rows,)](x, out, cols, x.shape[1], out.shape[1], BLOCK=block_for(cols),
                     backend=backend, num_warps=num_warps)


def reference(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def main(backend: str | None = None, rows: int = 300, cols: int = 781) -> None:
    x = np.random.default_rng().standard_normal((rows, cols), dtype=np.float32) * 4
    out = np.full_like(x, np.nan)
    launch(x, out, backend)
    np.testing.assert_allclose(out, reference(x), rtol=1e-5, atol=1e-7)
    print(f"softmax: {rows}x{cols} float32 on {tc.jit.resolve_backend(backend)}: OK")


if __name__ == "__main__":
    p = script_parser(__doc__)
    p.add_argument("--rows", type=int, default=300)
    p.add_argument("--cols", type=int, default=781)
    a = p.parse_args()
    with reported_errors():
        main(a.backend, a.rows, a.cols)
