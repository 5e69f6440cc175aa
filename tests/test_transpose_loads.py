"""Dot operands loaded down their columns (``transpose-loads``): Triton's attention
backward loads a block of queries transposed, ``qT = tl.load(q + rows[None, :] * D +
cols[:, None])``, and reads it as B of ``k @ qT`` and, transposed back, of ``s @ qT.T``.
Read along rows instead, it is copied into one stage both dots read; on Hopper those
dots are warpgroup MMAs of 32 columns (``k @ qT``, B K-major) and 32 steps of k (``s @ q``,
A the first dot's accumulator in registers)."""

from __future__ import annotations

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
from compiler.context import parse_module
from tests.conftest import launch
from tests.test_tma_views import TmaProgram


@tc.kernel
def keys_by_queries(q, k, out, M, D: tl.constexpr, BN: tl.constexpr, BM: tl.constexpr):
    """out[keys] = sum over blocks of queries of (k @ qT).to(f16) @ q, qT loaded as the
    backward loads it: the block of queries, transposed by its pointers."""
    rn, d = tl.program_id(0) * BN + tl.arange(0, BN), tl.arange(0, D)
    kb = tl.load(k + rn[:, None] * D + d[None, :])
    acc = tl.zeros((BN, D), tl.float32)
    for m0 in range(0, M, BM):
        qT = tl.load(q + (m0 + tl.arange(0, BM))[None, :] * D + d[:, None])
        s = tl.dot(kb, qT)
        acc = tl.dot(s.to(tl.float16), tl.trans(qT), acc)
    tl.store(out + rn[:, None] * D + d[None, :], acc)


def _inputs(M: int, N: int, D: int):
    rng = np.random.default_rng(M + N)
    q = (rng.standard_normal((M, D)) / 8).astype(np.float16)
    k = (rng.standard_normal((N, D)) / 8).astype(np.float16)
    s = (k.astype(np.float32) @ q.T.astype(np.float32)).astype(np.float16)
    return q, k, s.astype(np.float32) @ q.astype(np.float32)


def test_column_running_operand(backend):
    M, N, D, BN, BM = 128, 128, 64, 64, 32
    q, k, want = _inputs(M, N, D)
    out = np.full((N, D), np.nan, np.float32)
    if launch(keys_by_queries, (N // BN,), q, k, out, M, backend=backend, D=D, BN=BN, BM=BM):
        np.testing.assert_allclose(out, want, rtol=0, atol=2.0**-8 * np.abs(want).max())


def test_read_along_rows_into_one_stage_for_two_warpgroup_dots_on_sm90():
    """At 4 warps and 2 stages: one cp.async copy a thread an iteration (the stage both dots
    read), no element-wise 2-byte load, and each dot a warpgroup MMA: 64 rows of k against
    32 queries (n32), then the scores, taken from registers, against the queries in steps
    of 16 (no wgmma reads them from shared memory)."""
    M, N, D, BN, BM = 128, 64, 64, 64, 32
    q, k, want = _inputs(M, N, D)
    out = np.full((N, D), np.nan, np.float32)
    ck = tc.compile(keys_by_queries, backend="ptx", target="sm_90", args=(q, k, out, M),
                    constants={"D": D, "BN": BN, "BM": BM}, num_warps=4, num_stages=2)
    ptx = ck.asm["ptx"]
    assert "ld.global.b16" not in ptx and "ld.global.u16" not in ptx
    assert "wgmma.mma_async.sync.aligned.m64n32k16" in ptx
    assert "wgmma.mma_async.sync.aligned.m64n64k16" in ptx and "mma.sync" not in ptx
    text = [ir for name, ir in ck.stages if name == "cse"][-1]
    loop = text[text.index("scf.for"):]
    assert loop.count("simt.cp_async ") == 1
    wgmmas = [line for line in loop.splitlines() if "simt.wgmma " in line]
    assert len(wgmmas) == D // 16 + BM // 16
    assert sum(": vector<8xf16>" in line for line in wgmmas) == BM // 16  # A in registers
    TmaProgram(parse_module(text), {"q": q.ravel(), "k": k.ravel(), "out": out.ravel()},
               {"M": M}, (0,), (1,)).run()
    np.testing.assert_allclose(out, want, rtol=0, atol=2.0**-8 * np.abs(want).max())


@pytest.mark.parametrize("BM", [16, 64])
def test_other_block_sizes_on_sm90(BM):
    """16 queries a block (the backward's masked diagonal blocks): n16 and k16 steps;
    64: whole atoms, as before."""
    M, N, D, BN = 128, 64, 64, 64
    q, k, want = _inputs(M, N, D)
    out = np.full((N, D), np.nan, np.float32)
    ck = tc.compile(keys_by_queries, backend="ptx", target="sm_90", args=(q, k, out, M),
                    constants={"D": D, "BN": BN, "BM": BM}, num_warps=4, num_stages=3)
    assert f"m64n{BM}k16" in ck.asm["ptx"]
    text = [ir for name, ir in ck.stages if name == "cse"][-1]
    TmaProgram(parse_module(text), {"q": q.ravel(), "k": k.ravel(), "out": out.ravel()},
               {"M": M}, (0,), (1,)).run()
    np.testing.assert_allclose(out, want, rtol=0, atol=2.0**-8 * np.abs(want).max())
