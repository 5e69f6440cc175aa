"""Causal multi-head self-attention on the GPT's fused QKV activations, forward and
backward, FlashAttention-style: no T x T matrix reaches memory.

``qkv`` is (B, T, 3C): Q, K, V are its three C-wide thirds, head ``h`` the columns
``h*D .. h*D+D`` of each (D = C/H); the output is (B, T, C) with the heads side by side,
and ``lse`` (B, H, T) keeps each query's log-sum-exp of its scaled scores for the
backward. The forward streams keys through ``examples.attention.online_step`` (a running
max and sum per query). The backward recomputes the probabilities from ``lse``: one kernel
per block of queries makes dQ (and first the rows' ``delta = rowsum(dO * O)``), one per
block of keys makes dK and dV, so no two programs write the same element and no atomics
are needed. Inputs may be float32 or bfloat16 (products accumulate in f32); ``precision``
is the products' ``input_precision`` ("tf32" puts float32 ones on tensor cores).
"""

from __future__ import annotations

import math

import compiler as tc
import compiler.language as tl
from examples.attention import online_step
from examples.gpt.shapes import expect, pow2


@tc.func
def head_rows(base, rows, T, stride, D, DB: tl.constexpr):
    """The (len(rows), DB) tile of pointers to ``rows`` of one head starting at ``base``,
    and its mask (rows past ``T``, columns past ``D``)."""
    d = tl.arange(0, DB)
    return (base + rows[:, None] * stride + d[None, :],
            (rows[:, None] < T) & (d[None, :] < D))


@tc.func
def kv_step(qt, qkv, kbase, n0, rm, m_i, l_i, acc, scale, T, C, D, MASK: tl.constexpr,
            BN: tl.constexpr, DB: tl.constexpr, PRECISION: tl.constexpr):
    """``online_step`` on the keys and values ``n0 .. n0+BN`` of this head."""
    at, m = head_rows(kbase, n0 + tl.arange(0, BN), T, 3 * C, D, DB)
    kb = tl.load(qkv + at, mask=m, other=0.0)
    vt = tl.load(qkv + C + at, mask=m, other=0.0)
    return online_step(qt, kb, vt, n0, rm, m_i, l_i, acc, scale, T, MASK, PRECISION)


@tc.kernel
def attention_forward_kernel(qkv, out, lse, scale, T, H, C, D, BM: tl.constexpr,
                             BN: tl.constexpr, DB: tl.constexpr, PRECISION: tl.constexpr):
    start = tl.program_id(0) * BM
    bh = tl.program_id(1)
    b, h = bh // H, bh % H
    qbase = b * T * 3 * C + h * D  # this head's Q at (b, 0); K is C further, V 2C
    rm = start + tl.arange(0, BM)
    at, m = head_rows(qbase, rm, T, 3 * C, D, DB)
    qt = tl.load(qkv + at, mask=m, other=0.0)
    m_i = tl.full((BM,), -float("inf"), tl.float32)
    l_i = tl.zeros((BM,), tl.float32)
    acc = tl.zeros((BM, DB), tl.float32)
    # blocks of keys wholly before the first query are seen whole, the band masked
    band = start // BN * BN
    for n0 in range(0, band, BN):
        m_i, l_i, acc = kv_step(qt, qkv, qbase + C, n0, rm, m_i, l_i, acc, scale, T, C, D,
                                "none", BN, DB, PRECISION)
    for n0 in range(band, tl.minimum(start + BM, T), BN):
        m_i, l_i, acc = kv_step(qt, qkv, qbase + C, n0, rm, m_i, l_i, acc, scale, T, C, D,
                                "causal", BN, DB, PRECISION)
    oat, om = head_rows(b * T * C + h * D, rm, T, C, D, DB)
    tl.store(out + oat, (acc * (1.0 / l_i)[:, None]).to(out.dtype), mask=om)
    tl.store(lse + bh * T + rm, m_i + tl.log(l_i), mask=rm < T)


@tc.kernel
def attention_dq_kernel(qkv, out, dout, lse, delta, dqkv, scale, T, H, C, D,
                        BM: tl.constexpr, BN: tl.constexpr, DB: tl.constexpr,
                        PRECISION: tl.constexpr):
    start = tl.program_id(0) * BM
    bh = tl.program_id(1)
    b, h = bh // H, bh % H
    qbase = b * T * 3 * C + h * D
    rm = start + tl.arange(0, BM)
    qat, qm = head_rows(qbase, rm, T, 3 * C, D, DB)
    oat, om = head_rows(b * T * C + h * D, rm, T, C, D, DB)
    qt = tl.load(qkv + qat, mask=qm, other=0.0)
    do = tl.load(dout + oat, mask=om, other=0.0)
    di = tl.sum(do.to(tl.float32) * tl.load(out + oat, mask=om, other=0.0).to(tl.float32),
                axis=1)
    tl.store(delta + bh * T + rm, di, mask=rm < T)
    li = tl.load(lse + bh * T + rm, mask=rm < T, other=0.0)
    dq = tl.zeros((BM, DB), tl.float32)
    for n0 in range(0, tl.minimum(start + BM, T), BN):
        keys = n0 + tl.arange(0, BN)
        kat, km = head_rows(qbase + C, keys, T, 3 * C, D, DB)
        kb = tl.load(qkv + kat, mask=km, other=0.0)
        vt = tl.load(qkv + C + kat, mask=km, other=0.0)
        seen = (keys[None, :] <= rm[:, None]) & (keys[None, :] < T)
        s = tl.dot(qt, tl.trans(kb), input_precision=PRECISION) * scale
        p = tl.where(seen, tl.exp(s - li[:, None]), 0.0)
        ds = p * (tl.dot(do, tl.trans(vt), input_precision=PRECISION) - di[:, None])
        dq = tl.dot(ds.to(kb.dtype), kb, dq, input_precision=PRECISION)
    tl.store(dqkv + qat, (dq * scale).to(dqkv.dtype), mask=qm)


@tc.kernel
def attention_dkv_kernel(qkv, dout, lse, delta, dqkv, scale, T, H, C, D, BM: tl.constexpr,
                         BN: tl.constexpr, DB: tl.constexpr, PRECISION: tl.constexpr):
    start = tl.program_id(0) * BN
    bh = tl.program_id(1)
    b, h = bh // H, bh % H
    kbase = b * T * 3 * C + C + h * D
    keys = start + tl.arange(0, BN)
    kat, km = head_rows(kbase, keys, T, 3 * C, D, DB)
    kb = tl.load(qkv + kat, mask=km, other=0.0)
    vt = tl.load(qkv + C + kat, mask=km, other=0.0)
    dk = tl.zeros((BN, DB), tl.float32)
    dv = tl.zeros((BN, DB), tl.float32)
    # queries before this block's first key see none of its keys
    for m0 in range(start // BM * BM, T, BM):
        rm = m0 + tl.arange(0, BM)
        qat, qm = head_rows(kbase - C, rm, T, 3 * C, D, DB)
        oat, om = head_rows(b * T * C + h * D, rm, T, C, D, DB)
        qt = tl.load(qkv + qat, mask=qm, other=0.0)
        do = tl.load(dout + oat, mask=om, other=0.0)
        li = tl.load(lse + bh * T + rm, mask=rm < T, other=0.0)
        di = tl.load(delta + bh * T + rm, mask=rm < T, other=0.0)
        # transposed scores (keys x queries), so that dV and dK need no transpose of P
        seen = (keys[:, None] <= rm[None, :]) & (rm[None, :] < T)
        st = tl.dot(kb, tl.trans(qt), input_precision=PRECISION) * scale
        pt = tl.where(seen, tl.exp(st - li[None, :]), 0.0)
        dv = tl.dot(pt.to(do.dtype), do, dv, input_precision=PRECISION)
        dst = pt * (tl.dot(vt, tl.trans(do), input_precision=PRECISION) - di[None, :])
        dk = tl.dot(dst.to(qt.dtype), qt, dk, input_precision=PRECISION)
    tl.store(dqkv + kat, (dk * scale).to(dqkv.dtype), mask=km)
    tl.store(dqkv + C + kat, dv.to(dqkv.dtype), mask=km)


def _shapes(qkv, lse) -> tuple[int, int, int, int, int]:
    """(B, T, H, C, D), B, H and T from ``lse`` (B, H, T)."""
    B, H, T = lse.shape
    C3 = qkv.shape[-1]
    if C3 % (3 * H):
        raise tc.LaunchError(f"qkv's last axis must be 3 * C with C a multiple of the "
                             f"{H} heads, got shape {tuple(qkv.shape)}")
    expect("qkv", qkv, (B * T, C3))
    return B, T, H, C3 // 3, C3 // 3 // H


def _blocks(T: int, BM: int, BN: int) -> tuple[int, int]:
    """Tiles no taller than the sequence needs (at least 16, what ``tl.dot`` takes)."""
    return max(16, min(BM, pow2(T))), max(16, min(BN, pow2(T)))


def attention_forward(qkv, out, lse, backend: str | None = None, precision: str = "ieee",
                      BM: int = 64, BN: int = 64, num_warps: int = 4) -> None:
    """``out`` (B, T, C) and ``lse`` (B, H, T) of causal attention over ``qkv`` (B, T, 3C);
    ``lse``'s shape says B, H and T."""
    B, T, H, C, D = _shapes(qkv, lse)
    expect("out", out, (B * T, C))
    BM, BN = _blocks(T, BM, BN)
    attention_forward_kernel[(tc.cdiv(T, BM), B * H)](
        qkv, out, lse, 1 / math.sqrt(D), T, H, C, D, BM=BM, BN=BN, DB=max(16, pow2(D)),
        PRECISION=precision, backend=backend, num_warps=num_warps)


def attention_backward(dout, qkv, out, lse, delta, dqkv, backend: str | None = None,
                       precision: str = "ieee", BM: int = 64, BN: int = 64,
                       num_warps: int = 4) -> None:
    """``dqkv`` (B, T, 3C) from ``dout`` = d loss / d out and the forward's ``qkv``,
    ``out`` and ``lse``; ``delta`` (B, H, T) is scratch (it gets rowsum(dout * out))."""
    B, T, H, C, D = _shapes(qkv, lse)
    for name, a, shape in (("dout", dout, (B * T, C)), ("out", out, (B * T, C)),
                           ("delta", delta, (B * H, T)), ("dqkv", dqkv, (B * T, 3 * C))):
        expect(name, a, shape)
    BM, BN = _blocks(T, BM, BN)
    common = {"BM": BM, "BN": BN, "DB": max(16, pow2(D)), "PRECISION": precision,
              "backend": backend, "num_warps": num_warps}
    scale = 1 / math.sqrt(D)
    attention_dq_kernel[(tc.cdiv(T, BM), B * H)](
        qkv, out, dout, lse, delta, dqkv, scale, T, H, C, D, **common)
    attention_dkv_kernel[(tc.cdiv(T, BN), B * H)](
        qkv, dout, lse, delta, dqkv, scale, T, H, C, D, **common)
