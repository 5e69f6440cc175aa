"""Generation's kernels: a key/value cache, so that a decoding step runs the model on the
new tokens only, attention of those tokens' queries over everything cached, and the greedy
choice of the next token.

A layer's cache is (B, maxT, 2C): each position's key (the QKV output's middle third)
then its value (the last third). ``copy_rows`` moves the new positions' keys and values
from the QKV output into it (and, with other strides, picks each sequence's last row out
of a batch); ``cached_attention`` is the forward of ``examples.gpt.attention`` with the
keys and values read from the cache and the queries standing at positions ``t0`` on, so
the prompt's prefill (``t0`` = 0, every prompt token a query) and each decoding step
(one query at ``t0``) are the same launch.

The position ``t0`` is not an argument but an int32 array of one element on the device
(``pos``) that the kernels read, and ``next_token`` writes the chosen token where the next
step reads it and ``advance`` moves ``pos`` on: a decoding step is then the same launches
with the same arguments every time, which a ``tc.graph`` captures once and replays, and a
launch's arguments never vary with the position (no specialization per position).
"""

from __future__ import annotations

import math

import compiler as tc
import compiler.language as tl
from examples.attention import online_step
from examples.gpt.attention import head_rows
from examples.gpt.shapes import expect, pow2


@tc.kernel
def copy_rows_kernel(src, dst, pos, n_rows, width, src_at, src_batch, src_row, dst_at,
                     dst_batch, dst_row, dst_rows, BR: tl.constexpr, BC: tl.constexpr,
                     AT_POS: tl.constexpr):
    r = tl.program_id(0) * BR + tl.arange(0, BR)
    b = tl.program_id(1)
    c = tl.arange(0, BC)
    d = r  # the rows written: from pos[0] on with AT_POS, none past dst_rows
    if AT_POS:
        d += tl.load(pos)
    live = (r < n_rows) & (d < dst_rows)
    for c0 in range(0, width, BC):
        mask = live[:, None] & (c0 + c[None, :] < width)
        v = tl.load(src + src_at + b * src_batch + r[:, None] * src_row + c0 + c[None, :],
                    mask=mask, other=0.0)
        tl.store(dst + dst_at + b * dst_batch + d[:, None] * dst_row + c0 + c[None, :],
                 v.to(dst.dtype), mask=mask)


@tc.kernel
def cached_attention_kernel(qkv, cache, out, pos, scale, Tn, maxT, H, C, D, BM: tl.constexpr,
                            BN: tl.constexpr, DB: tl.constexpr, PRECISION: tl.constexpr):
    t0 = tl.load(pos)
    start = tl.program_id(0) * BM
    bh = tl.program_id(1)
    b, h = bh // H, bh % H
    rq = start + tl.arange(0, BM)  # the new tokens; they stand at positions t0 + rq
    at, m = head_rows(b * Tn * 3 * C + h * D, rq, Tn, 3 * C, D, DB)
    qt = tl.load(qkv + at, mask=m, other=0.0)
    m_i = tl.full((BM,), -float("inf"), tl.float32)
    l_i = tl.zeros((BM,), tl.float32)
    acc = tl.zeros((BM, DB), tl.float32)
    kbase = b * maxT * 2 * C + h * D
    # one causal mask for every block of keys: a decoding step's one query sees them all
    for n0 in range(0, t0 + tl.minimum(start + BM, Tn), BN):
        kat, km = head_rows(kbase, n0 + tl.arange(0, BN), t0 + Tn, 2 * C, D, DB)
        kb = tl.load(cache + kat, mask=km, other=0.0)
        vt = tl.load(cache + C + kat, mask=km, other=0.0)
        m_i, l_i, acc = online_step(qt, kb, vt, n0, t0 + rq, m_i, l_i, acc, scale, t0 + Tn,
                                    "causal", PRECISION)
    oat, om = head_rows(b * Tn * C + h * D, rq, Tn, C, D, DB)
    tl.store(out + oat, (acc * (1.0 / l_i)[:, None]).to(out.dtype), mask=om)


@tc.kernel
def next_token_kernel(logits, tok, hist, pos, Tn, V, hist_row, BLOCK: tl.constexpr):
    b = tl.program_id(0)
    v = tl.arange(0, BLOCK)
    best = tl.full((BLOCK,), -float("inf"), tl.float32)
    at = tl.zeros((BLOCK,), tl.int32)
    for v0 in range(0, V, BLOCK):  # each lane keeps its first maximum: a strict >
        x = tl.load(logits + b * V + v0 + v, mask=v0 + v < V, other=-float("inf"))
        better = x > best
        best = tl.where(better, x, best)
        at = tl.where(better, v0 + v, at)
    token = tl.min(tl.where(best == tl.max(best, axis=0), at, V), axis=0)  # the first of all
    tl.store(tok + b, token)
    tl.store(hist + b * hist_row + tl.load(pos) + Tn, token)


@tc.kernel
def advance_kernel(pos, n):
    tl.store(pos, tl.load(pos) + n)


def copy_rows(src, dst, n_rows: int, width: int, src_at: int, src_batch: int, src_row: int,
              dst_at: int, dst_batch: int, dst_row: int, batches: int,
              backend: str | None = None, pos=None, dst_rows: int | None = None) -> None:
    """For each of ``batches`` batches b and each row r < ``n_rows``: ``width`` elements
    from ``src[src_at + b*src_batch + r*src_row]`` on to the same place of ``dst``
    (``dst_at``, ``dst_batch``, ``dst_row``), converted to ``dst``'s dtype; with ``pos``
    (an int32 array of one element) row r goes to row ``pos[0] + r`` of ``dst`` instead,
    and rows from ``dst_rows`` on are not written. The offsets are elements, not views,
    since WGSL binds views only at 256-byte multiples."""
    BR = min(16, pow2(n_rows))
    copy_rows_kernel[(tc.cdiv(n_rows, BR), batches)](
        src, dst, src if pos is None else pos, n_rows, width, src_at, src_batch, src_row,
        dst_at, dst_batch, dst_row, n_rows if dst_rows is None else dst_rows, BR=BR,
        BC=min(256, pow2(width)), AT_POS=pos is not None, backend=backend)


def cache_keys_values(qkv, cache, pos, backend: str | None = None) -> None:
    """The keys and values of ``qkv`` (B, Tn, 3C) into ``cache`` (B, maxT, 2C) at
    positions ``pos[0] ..`` (``pos``: an int32 array of one element); positions from maxT
    on are dropped."""
    B, Tn, C3 = qkv.shape
    C, maxT = C3 // 3, cache.shape[1]
    expect("cache", cache, (B, maxT, 2 * C))
    expect("pos", pos, (1,))
    if Tn > maxT:
        raise tc.LaunchError(f"{Tn} positions do not fit a cache of {maxT}")
    copy_rows(qkv, cache, Tn, 2 * C, C, Tn * C3, C3, 0, maxT * 2 * C, 2 * C, B,
              backend=backend, pos=pos, dst_rows=maxT)


def last_rows(x, out, backend: str | None = None) -> None:
    """``out[b] = x[b, -1]`` for ``x`` (B, T, C) and ``out`` (B, C)."""
    B, T, C = x.shape
    expect("out", out, (B, C))
    copy_rows(x, out, 1, C, (T - 1) * C, T * C, C, 0, C, C, B, backend=backend)


def cached_attention(qkv, cache, out, pos, n_head: int, backend: str | None = None,
                     precision: str = "ieee", BM: int = 64, BN: int = 64,
                     num_warps: int = 4) -> None:
    """``out`` (B, Tn, C): causal attention of the queries of ``qkv`` (B, Tn, 3C), at
    positions ``t0 .. t0+Tn`` with ``t0 = pos[0]`` (``pos``: an int32 array of one
    element), over the keys and values of ``cache`` (B, maxT, 2C) at positions
    ``0 .. t0+Tn`` (``cache_keys_values`` wrote the new ones)."""
    B, Tn, C3 = qkv.shape
    C, maxT = C3 // 3, cache.shape[1]
    if C % n_head:
        raise tc.LaunchError(f"qkv's width {C3} is not 3 * C with C a multiple of the "
                             f"{n_head} heads")
    expect("cache", cache, (B, maxT, 2 * C))
    expect("out", out, (B * Tn, C))
    expect("pos", pos, (1,))
    D = C // n_head
    # the key block from the cache's length, not t0's: one compilation for every step
    BM, BN = max(16, min(BM, pow2(Tn))), max(16, min(BN, pow2(maxT)))
    cached_attention_kernel[(tc.cdiv(Tn, BM), B * n_head)](
        qkv, cache, out, pos, 1 / math.sqrt(D), Tn, maxT, n_head, C, D, BM=BM, BN=BN,
        DB=max(16, pow2(D)), PRECISION=precision, backend=backend, num_warps=num_warps)


def next_token(logits, tok, hist, pos, Tn: int, backend: str | None = None,
               BLOCK: int = 4096, num_warps: int = 8) -> None:
    """Greedy choice on the device: each row's likeliest token of ``logits`` (B, V), the
    first of equals as ``np.argmax`` takes it, into ``tok`` (B,) and into ``hist`` (B, L)
    at column ``pos[0] + Tn``, the position the token will stand at after a step of
    ``Tn`` tokens from ``pos[0]``."""
    B, V = logits.shape
    expect("tok", tok, (B,))
    expect("pos", pos, (1,))
    if len(hist.shape) != 2 or hist.shape[0] != B:
        raise tc.LaunchError(f"hist must have shape ({B}, L), got {tuple(hist.shape)}")
    # one program a row, so wide blocks: few dependent loads in its loop over the row
    next_token_kernel[(B,)](logits, tok, hist, pos, Tn, V, hist.shape[1],
                            BLOCK=min(BLOCK, pow2(V)), backend=backend, num_warps=num_warps)


def advance(pos, n: int, backend: str | None = None) -> None:
    """``pos[0] += n`` on the device."""
    expect("pos", pos, (1,))
    # one warp: each warp's first lane stores a scalar, and a second could read the new one
    advance_kernel[(1,)](pos, n, backend=backend, num_warps=1)
