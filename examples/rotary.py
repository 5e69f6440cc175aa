"""Rotary position embedding (RoPE), interleaved pairs: in each head, the pair of features
``(2i, 2i + 1)`` at position ``t`` is rotated by the angle ``t * base**(-2i / head_dim)``.
Each program takes a (BLOCK_SEQ, head_dim) tile of one head, reshapes it to
(BLOCK_SEQ, head_dim / 2, 2) and splits it into the even and odd features, rotates them with
the cos/sin tables, and joins them back.

    python examples/rotary.py [--backend ptx|wgsl|numpy|auto] [--heads H] [--seq S] [--dim D]
"""

import numpy as np

import compiler as tc
import compiler.language as tl
from compiler.cli import reported_errors, script_parser


@tc.kernel
def rotary(x, cos, sin, out, seq_len, BLOCK_SEQ: tl.constexpr, DIM: tl.constexpr):
    head, blk = tl.program_id(0), tl.program_id(1)
    rows = (blk * BLOCK_SEQ + tl.arange(0, BLOCK_SEQ))[:, None]
    mask = rows < seq_len
    offs = head * seq_len * DIM + rows * DIM + tl.arange(0, DIM)[None, :]
    even, odd = tl.split(tl.reshape(tl.load(x + offs, mask=mask, other=0.0),
                                    BLOCK_SEQ, DIM // 2, 2))
    angle = rows * (DIM // 2) + tl.arange(0, DIM // 2)[None, :]
    c = tl.load(cos + angle, mask=mask, other=0.0)
    s = tl.load(sin + angle, mask=mask, other=0.0)
    rotated = tl.join(even * c - odd * s, even * s + odd * c)
    tl.store(out + offs, tl.reshape(rotated, BLOCK_SEQ, DIM), mask=mask)


def tables(seq_len: int, dim: int, base: float = 10000.0) -> tuple[np.ndarray, np.ndarray]:
    """The (seq_len, dim / 2) cos and sin of each position's angle for each pair."""
    inv_freq = base ** (-np.arange(0, dim, 2) / dim)
    theta = np.arange(seq_len)[:, None] * inv_freq[None, :]
    return np.cos(theta).astype(np.float32), np.sin(theta).astype(np.float32)


def launch(x: np.ndarray, cos: np.ndarray, sin: np.ndarray, out: np.ndarray,
           backend: str | None = None, block_seq: int = 16) -> None:
    heads, seq_len, dim = x.shape
    rotary[(heads, tc.cdiv(seq_len, block_seq))](x, cos, sin, out, seq_len, BLOCK_SEQ=block_seq,
                                                 DIM=dim, backend=backend)


def reference(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    x64 = x.astype(np.float64)
    even, odd = x64[..., 0::2], x64[..., 1::2]
    out = np.empty_like(x64)
    out[..., 0::2] = even * cos - odd * sin
    out[..., 1::2] = even * sin + odd * cos
    return out


def main(backend: str | None = None, heads: int = 3, seq: int = 40, dim: int = 32) -> None:
    x = np.random.default_rng().standard_normal((heads, seq, dim), dtype=np.float32)
    cos, sin = tables(seq, dim)
    out = np.full_like(x, np.nan)
    launch(x, cos, sin, out, backend)
    np.testing.assert_allclose(out, reference(x, cos, sin), rtol=1e-5, atol=1e-6)
    print(f"rotary: {heads}x{seq}x{dim} float32 on {tc.jit.resolve_backend(backend)}: OK")


if __name__ == "__main__":
    ap = script_parser(__doc__)
    ap.add_argument("--heads", type=int, default=3)
    ap.add_argument("--seq", type=int, default=40)
    ap.add_argument("--dim", type=int, default=32)
    a = ap.parse_args()
    with reported_errors():
        main(a.backend, a.heads, a.seq, a.dim)
