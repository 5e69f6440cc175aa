"""Fused attention forward (FlashAttention): softmax(Q K^T * scale) V, one program per
block of BM queries of one (batch, head), streaming K and V in blocks of BN keys with an
online softmax (a running max and sum per query), so the scores never reach memory.
Causal (each query sees the keys up to its own position) or not.

``attention`` loads through pointers; ``attention_descriptor`` reads K and V through
tensor descriptors, which Hopper copies by TMA.

    python examples/attention.py [--backend ptx|wgsl|numpy|auto] [--shape B H S D] [--causal]
"""

import numpy as np

import compiler as tc
import compiler.language as tl
from compiler.cli import reported_errors, script_parser


@tc.func
def online_step(qt, kb, vt, n0, rm, m_i, l_i, acc, scale, seq_len, MASK: tl.constexpr,
                PRECISION: tl.constexpr = "ieee"):
    """Keys ``kb`` and values ``vt`` (rows ``n0`` on) into each query's running max
    ``m_i``, sum ``l_i`` of exp(score - m_i) and output ``acc``. ``MASK``: "causal" masks
    keys past the end or after a query (the diagonal band); "end" those past the end (the
    last block, where the keys do not fill it); "none": every key is seen. ``PRECISION``:
    the products' ``input_precision`` (f32 operands on tensor cores take "tf32")."""
    keys = n0 + tl.arange(0, kb.shape[0])
    s = tl.dot(qt, tl.trans(kb), input_precision=PRECISION) * scale
    if MASK == "causal":
        s = tl.where((keys[None, :] < seq_len) & (keys[None, :] <= rm[:, None]), s,
                     -float("inf"))
    elif MASK == "end":
        s = tl.where(keys[None, :] < seq_len, s, -float("inf"))
    m_new = tl.maximum(m_i, tl.max(s, axis=1))
    p = tl.exp(s - m_new[:, None])
    alpha = tl.exp(m_i - m_new)
    l_i = l_i * alpha + tl.sum(p, axis=1)
    return m_new, l_i, acc * alpha[:, None] + tl.dot(p.to(vt.dtype), vt,
                                                     input_precision=PRECISION)


@tc.func
def block_step(qt, k, v, base, n0, rm, m_i, l_i, acc, scale, seq_len, MASK: tl.constexpr,
               BN: tl.constexpr, D: tl.constexpr):
    """``online_step`` on the block of keys and values from row ``n0`` of this head's."""
    keys, rd = n0 + tl.arange(0, BN), tl.arange(0, D)
    at = base + keys[:, None] * D + rd[None, :]
    kb = tl.load(k + at, mask=keys[:, None] < seq_len)
    vt = tl.load(v + at, mask=keys[:, None] < seq_len)
    return online_step(qt, kb, vt, n0, rm, m_i, l_i, acc, scale, seq_len, MASK)


@tc.kernel
def attention(q, k, v, out, scale, seq_len, CAUSAL: tl.constexpr, BM: tl.constexpr,
              BN: tl.constexpr, D: tl.constexpr):
    start = tl.program_id(0) * BM
    base = tl.program_id(1) * seq_len * D  # (batch, head) pairs are contiguous
    rm, rd = start + tl.arange(0, BM), tl.arange(0, D)
    qt = tl.load(q + base + rm[:, None] * D + rd[None, :], mask=rm[:, None] < seq_len)
    m_i = tl.full((BM,), -float("inf"), tl.float32)
    l_i = tl.zeros((BM,), tl.float32)
    acc = tl.zeros((BM, D), tl.float32)
    # causal: the blocks before the diagonal band are seen whole, the band masked; else
    # every whole block, then the last, partial one (if any) masked: no test in the loop
    band = start // BN * BN if CAUSAL else seq_len // BN * BN
    for n0 in range(0, band, BN):
        m_i, l_i, acc = block_step(qt, k, v, base, n0, rm, m_i, l_i, acc, scale, seq_len,
                                   "none", BN, D)
    for n0 in range(band, tl.minimum(start + BM, seq_len) if CAUSAL else seq_len, BN):
        m_i, l_i, acc = block_step(qt, k, v, base, n0, rm, m_i, l_i, acc, scale, seq_len,
                                   "causal" if CAUSAL else "end", BN, D)
    o = (acc * (1.0 / l_i)[:, None]).to(out.dtype)  # a division a row, not an element
    tl.store(out + base + rm[:, None] * D + rd[None, :], o, mask=rm[:, None] < seq_len)


@tc.kernel
def attention_descriptor(q, k, v, out, scale, seq_len, rows, CAUSAL: tl.constexpr,
                         BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr):
    """``attention`` reading K and V through tensor descriptors over all ``rows`` (batch
    x heads x seq_len) rows: copied by TMA on Hopper. A block past this head's keys reads
    the next head's (or zeros past the end), which the mask on the scores drops."""
    start = tl.program_id(0) * BM
    first = tl.program_id(1) * seq_len  # this (batch, head)'s first row
    rm, rd = start + tl.arange(0, BM), tl.arange(0, D)
    qt = tl.load(q + first * D + rm[:, None] * D + rd[None, :], mask=rm[:, None] < seq_len)
    dk = tl.make_tensor_descriptor(k, shape=[rows, D], strides=[D, 1], block_shape=[BN, D])
    dv = tl.make_tensor_descriptor(v, shape=[rows, D], strides=[D, 1], block_shape=[BN, D])
    m_i = tl.full((BM,), -float("inf"), tl.float32)
    l_i = tl.zeros((BM,), tl.float32)
    acc = tl.zeros((BM, D), tl.float32)
    band = start // BN * BN if CAUSAL else seq_len // BN * BN
    for n0 in range(0, band, BN):
        m_i, l_i, acc = online_step(qt, dk.load([first + n0, 0]), dv.load([first + n0, 0]),
                                    n0, rm, m_i, l_i, acc, scale, seq_len, "none")
    for n0 in range(band, tl.minimum(start + BM, seq_len) if CAUSAL else seq_len, BN):
        m_i, l_i, acc = online_step(qt, dk.load([first + n0, 0]), dv.load([first + n0, 0]),
                                    n0, rm, m_i, l_i, acc, scale, seq_len,
                                    "causal" if CAUSAL else "end")
    o = (acc * (1.0 / l_i)[:, None]).to(out.dtype)  # a division a row, not an element
    if seq_len % BM == 0:  # no tile reaches into the next head's rows: by TMA on Hopper
        do = tl.make_tensor_descriptor(out, shape=[rows, D], strides=[D, 1],
                                       block_shape=[BM, D])
        do.store([first + start, 0], o)
    else:
        tl.store(out + first * D + rm[:, None] * D + rd[None, :], o, mask=rm[:, None] < seq_len)


def launch(q, k, v, out, causal: bool = False, backend: str | None = None, BM: int = 64,
           BN: int = 64, num_warps: int = 4, num_stages: int = 2) -> None:
    batch, heads, seq_len, d = q.shape
    grid = (tc.cdiv(seq_len, BM), batch * heads)
    attention[grid](q, k, v, out, float(1 / np.sqrt(d)), seq_len, CAUSAL=causal, BM=BM,
                    BN=BN, D=d, backend=backend, num_warps=num_warps, num_stages=num_stages)


def launch_descriptor(q, k, v, out, causal: bool = False, backend: str | None = None,
                      BM: int = 64, BN: int = 64, num_warps: int = 4,
                      num_stages: int = 2) -> None:
    """``attention_descriptor`` on contiguous (batch, heads, seq_len, d) arrays."""
    batch, heads, seq_len, d = q.shape
    grid = (tc.cdiv(seq_len, BM), batch * heads)
    attention_descriptor[grid](q, k, v, out, float(1 / np.sqrt(d)), seq_len,
                               batch * heads * seq_len, CAUSAL=causal, BM=BM, BN=BN, D=d,
                               backend=backend, num_warps=num_warps, num_stages=num_stages)


def reference(q, k, v, causal: bool = False) -> np.ndarray:
    q64, k64, v64 = (x.astype(np.float64) for x in (q, k, v))
    s = q64 @ k64.swapaxes(-1, -2) / np.sqrt(q.shape[-1])
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return (p / p.sum(axis=-1, keepdims=True)) @ v64


def main(backend: str | None = None, shape: tuple[int, int, int, int] = (1, 2, 200, 64),
         causal: bool = False) -> None:
    rng = np.random.default_rng()
    q, k, v = (rng.standard_normal(shape).astype(np.float16) for _ in range(3))
    kind = "causal" if causal else "non-causal"
    for name, run in (("attention", launch), ("attention_descriptor", launch_descriptor)):
        out = np.full(shape, np.nan, np.float16)
        run(q, k, v, out, causal, backend)
        np.testing.assert_allclose(out.astype(np.float64), reference(q, k, v, causal),
                                   atol=2e-2)
        print(f"{name}: {'x'.join(map(str, shape))} f16 {kind} on "
              f"{tc.jit.resolve_backend(backend)}: OK")


if __name__ == "__main__":
    p = script_parser(__doc__)
    p.add_argument("--shape", type=int, nargs=4, default=(1, 2, 200, 64))
    p.add_argument("--causal", action="store_true")
    args = p.parse_args()
    with reported_errors():
        main(args.backend, tuple(args.shape), args.causal)
