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
from dataclasses import dataclass, replace

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
                             BN: tl.constexpr, DB: tl.constexpr, PRECISION: tl.constexpr,
                             STAGES: tl.constexpr):
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
    for n0 in tl.range(0, band, BN, num_stages=STAGES):
        m_i, l_i, acc = kv_step(qt, qkv, qbase + C, n0, rm, m_i, l_i, acc, scale, T, C, D,
                                "none", BN, DB, PRECISION)
    for n0 in range(band, tl.minimum(start + BM, T), BN):
        m_i, l_i, acc = kv_step(qt, qkv, qbase + C, n0, rm, m_i, l_i, acc, scale, T, C, D,
                                "causal", BN, DB, PRECISION)
    oat, om = head_rows(b * T * C + h * D, rm, T, C, D, DB)
    tl.store(out + oat, (acc * (1.0 / l_i)[:, None]).to(out.dtype), mask=om)
    tl.store(lse + bh * T + rm, m_i + tl.log(l_i), mask=rm < T)


@tc.func
def dq_step(qt, do, qkv, kbase, n0, rm, li, di, dq, scale, T, C, D, CAUSAL: tl.constexpr,
            BN: tl.constexpr, DB: tl.constexpr, PRECISION: tl.constexpr):
    """dQ of the queries ``rm`` plus the share of the keys ``n0 .. n0+BN``."""
    keys = n0 + tl.arange(0, BN)
    kat, km = head_rows(kbase, keys, T, 3 * C, D, DB)
    kb = tl.load(qkv + kat, mask=km, other=0.0)
    vt = tl.load(qkv + C + kat, mask=km, other=0.0)
    p = tl.exp(tl.dot(qt, tl.trans(kb), input_precision=PRECISION) * scale - li[:, None])
    if CAUSAL:
        p = tl.where((keys[None, :] <= rm[:, None]) & (keys[None, :] < T), p, 0.0)
    ds = p * (tl.dot(do, tl.trans(vt), input_precision=PRECISION) - di[:, None])
    return tl.dot(ds.to(kb.dtype), kb, dq, input_precision=PRECISION)


@tc.kernel
def attention_dq_kernel(qkv, out, dout, lse, delta, dqkv, scale, T, H, C, D,
                        BM: tl.constexpr, BN: tl.constexpr, DB: tl.constexpr,
                        PRECISION: tl.constexpr, STAGES: tl.constexpr):
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
    # as in the forward: keys wholly before the first query unmasked, then the band
    band = start // BN * BN
    for n0 in tl.range(0, band, BN, num_stages=STAGES):
        dq = dq_step(qt, do, qkv, qbase + C, n0, rm, li, di, dq, scale, T, C, D, False, BN,
                     DB, PRECISION)
    for n0 in range(band, tl.minimum(start + BM, T), BN):
        dq = dq_step(qt, do, qkv, qbase + C, n0, rm, li, di, dq, scale, T, C, D, True, BN,
                     DB, PRECISION)
    tl.store(dqkv + qat, (dq * scale).to(dqkv.dtype), mask=qm)


@tc.func
def dkv_step(kb, vt, qkv, dout, lse, delta, qbase, obase, lbase, m0, keys, dk, dv, scale, T,
             C, D, CAUSAL: tl.constexpr, BM: tl.constexpr, DB: tl.constexpr,
             PRECISION: tl.constexpr):
    """dK and dV of the keys ``keys`` plus the share of the queries ``m0 .. m0+BM``.
    Queries past T load as zeros, and so add nothing."""
    rm = m0 + tl.arange(0, BM)
    qat, qm = head_rows(qbase, rm, T, 3 * C, D, DB)
    oat, om = head_rows(obase, rm, T, C, D, DB)
    qt = tl.load(qkv + qat, mask=qm, other=0.0)
    do = tl.load(dout + oat, mask=om, other=0.0)
    li = tl.load(lse + lbase + rm, mask=rm < T, other=0.0)
    di = tl.load(delta + lbase + rm, mask=rm < T, other=0.0)
    # transposed scores (keys x queries), so that dV and dK need no transpose of P
    pt = tl.exp(tl.dot(kb, tl.trans(qt), input_precision=PRECISION) * scale - li[None, :])
    if CAUSAL:
        pt = tl.where((keys[:, None] <= rm[None, :]) & (rm[None, :] < T), pt, 0.0)
    dv = tl.dot(pt.to(do.dtype), do, dv, input_precision=PRECISION)
    dst = pt * (tl.dot(vt, tl.trans(do), input_precision=PRECISION) - di[None, :])
    return tl.dot(dst.to(qt.dtype), qt, dk, input_precision=PRECISION), dv


@tc.kernel
def attention_dkv_kernel(qkv, dout, lse, delta, dqkv, scale, T, H, C, D, BM: tl.constexpr,
                         BN: tl.constexpr, DB: tl.constexpr, PRECISION: tl.constexpr,
                         STAGES: tl.constexpr):
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
    # queries before this block's first key see none of its keys; blocks of queries from
    # the one after its last key on see all of them, those between the band
    first = start // BM * BM
    full = (start + BN - 1 + BM - 1) // BM * BM
    for m0 in range(first, tl.minimum(full, T), BM):
        dk, dv = dkv_step(kb, vt, qkv, dout, lse, delta, kbase - C, b * T * C + h * D,
                          bh * T, m0, keys, dk, dv, scale, T, C, D, True, BM, DB, PRECISION)
    for m0 in tl.range(full, T, BM, num_stages=STAGES):
        dk, dv = dkv_step(kb, vt, qkv, dout, lse, delta, kbase - C, b * T * C + h * D,
                          bh * T, m0, keys, dk, dv, scale, T, C, D, False, BM, DB, PRECISION)
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


@dataclass(frozen=True)
class Tiles:
    """One kernel's blocks: BM queries by BN keys, its warps, and the stages of the
    unmasked loop's loads."""

    BM: int
    BN: int
    num_warps: int = 4
    num_stages: int = 1


# the quickest of a sweep at GPT-2's shape (T 1024, D 64, bf16) on an H200
# (benchmarks/RESULTS.md, 2026-11-28/29): 181 -> 81 us forward, 511 -> 244 us backward
FORWARD = Tiles(128, 64, 4, 3)
DQ = Tiles(128, 64, 4, 2)
DKV = Tiles(64, 128, 8, 2)


def _launch(kernel, tiles: Tiles, T: int, by_keys: bool, args: tuple, D: int,
            precision: str, backend: str | None) -> None:
    """``kernel`` over blocks of queries (of keys when ``by_keys``) and heads, with
    ``tiles`` no taller than the sequence needs (at least 16, what ``tl.dot`` takes) and
    no more warps than tiles so cut share out on tensor cores (4 for 64 x 64 and less)."""
    BM, BN = (max(16, min(b, pow2(T))) for b in (tiles.BM, tiles.BN))
    heads = args[-1]
    kernel[(tc.cdiv(T, BN if by_keys else BM), heads)](
        *args[:-1], BM=BM, BN=BN, DB=max(16, pow2(D)), PRECISION=precision,
        STAGES=tiles.num_stages, backend=backend,
        num_warps=min(tiles.num_warps, max(4, BM * BN // 1024)))


def attention_forward(qkv, out, lse, backend: str | None = None, precision: str = "ieee",
                      **tiles) -> None:
    """``out`` (B, T, C) and ``lse`` (B, H, T) of causal attention over ``qkv`` (B, T, 3C);
    ``lse``'s shape says B, H and T. ``tiles`` (BM, BN, num_warps, num_stages) replace
    ``FORWARD``'s."""
    B, T, H, C, D = _shapes(qkv, lse)
    expect("out", out, (B * T, C))
    _launch(attention_forward_kernel, replace(FORWARD, **tiles), T, False,
            (qkv, out, lse, 1 / math.sqrt(D), T, H, C, D, B * H), D, precision, backend)


def attention_backward(dout, qkv, out, lse, delta, dqkv, backend: str | None = None,
                       precision: str = "ieee", dq_tiles: dict | None = None,
                       dkv_tiles: dict | None = None, **tiles) -> None:
    """``dqkv`` (B, T, 3C) from ``dout`` = d loss / d out and the forward's ``qkv``,
    ``out`` and ``lse``; ``delta`` (B, H, T) is scratch (it gets rowsum(dout * out)).
    ``tiles`` replace both kernels' (``DQ``, ``DKV``), ``dq_tiles`` and ``dkv_tiles`` one's."""
    B, T, H, C, D = _shapes(qkv, lse)
    for name, a, shape in (("dout", dout, (B * T, C)), ("out", out, (B * T, C)),
                           ("delta", delta, (B * H, T)), ("dqkv", dqkv, (B * T, 3 * C))):
        expect(name, a, shape)
    scale = 1 / math.sqrt(D)
    _launch(attention_dq_kernel, replace(replace(DQ, **tiles), **(dq_tiles or {})), T, False,
            (qkv, out, dout, lse, delta, dqkv, scale, T, H, C, D, B * H), D, precision,
            backend)
    _launch(attention_dkv_kernel, replace(replace(DKV, **tiles), **(dkv_tiles or {})), T, True,
            (qkv, dout, lse, delta, dqkv, scale, T, H, C, D, B * H), D, precision, backend)
