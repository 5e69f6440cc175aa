"""Layer normalization, forward: each program normalizes one row to zero mean and unit
variance, then scales by ``weight`` and shifts by ``bias``; it also writes the row's mean
and 1/std (what a backward pass needs), as Triton's tutorial does.

    python examples/layernorm.py [--backend ptx|wgsl|numpy|auto] [--rows R] [--cols C]
"""

import numpy as np

import compiler as tc
import compiler.language as tl
from compiler.cli import reported_errors, script_parser


@tc.kernel
def layernorm(x, weight, bias, out, mean, rstd, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    v = tl.load(x + row * n_cols + cols, mask=mask, other=0.0)
    mu = tl.sum(v, axis=0) / n_cols
    centered = tl.where(mask, v - mu, 0.0)
    inv_std = 1.0 / tl.sqrt(tl.sum(centered * centered, axis=0) / n_cols + eps)
    w = tl.load(weight + cols, mask=mask)
    b = tl.load(bias + cols, mask=mask)
    tl.store(out + row * n_cols + cols, centered * inv_std * w + b, mask=mask)
    tl.store(mean + row, mu)
    tl.store(rstd + row, inv_std)


def block_for(n_cols: int) -> int:
    return 1 << max(0, n_cols - 1).bit_length()


def launch(x, weight, bias, out, mean, rstd, eps: float = 1e-5, backend: str | None = None,
           num_warps: int = 4) -> None:
    rows, cols = x.shape
    layernorm[(rows,)](x, weight, bias, out, mean, rstd, cols, eps, BLOCK=block_for(cols),
                       backend=backend, num_warps=num_warps)


def reference(x, weight, bias, eps: float = 1e-5):
    x64 = x.astype(np.float64)
    mu = x64.mean(axis=1, keepdims=True)
    inv_std = 1 / np.sqrt(((x64 - mu) ** 2).mean(axis=1, keepdims=True) + eps)
    return (x64 - mu) * inv_std * weight + bias, mu[:, 0], inv_std[:, 0]


def main(backend: str | None = None, rows: int = 200, cols: int = 1000) -> None:
    rng = np.random.default_rng()
    x = (rng.standard_normal((rows, cols)) * 3 + 1).astype(np.float32)
    weight = rng.standard_normal(cols).astype(np.float32)
    bias = rng.standard_normal(cols).astype(np.float32)
    out = np.full_like(x, np.nan)
    mean, rstd = np.zeros(rows, np.float32), np.zeros(rows, np.float32)
    launch(x, weight, bias, out, mean, rstd, backend=backend)
    want, want_mean, want_rstd = reference(x, weight, bias)
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(mean, want_mean, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(rstd, want_rstd, rtol=1e-5)
    print(f"layernorm: {rows}x{cols} float32 on {tc.jit.resolve_backend(backend)}: OK")


if __name__ == "__main__":
    p = script_parser(__doc__)
    p.add_argument("--rows", type=int, default=200)
    p.add_argument("--cols", type=int, default=1000)
    a = p.parse_args()
    with reported_errors():
        main(a.backend, a.rows, a.cols)
