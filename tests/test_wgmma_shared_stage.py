"""One shared-memory stage read by several warpgroup dots: attention's backward reads a
block of keys as B of ``q @ k.T`` (K-major, through the transpose) and as B of ``ds @ k``
(N-major), so ``pipeline-loads`` copies it once per iteration into a swizzled stage that
both wgmmas read in place; a load that reaches a dot only through other math (the
log-sum-exp a score is shifted by) waits in registers beside the stages. Kernels run in
the TMA and wgmma simulator against NumPy; the GPT's backward kernels are compiled at
GPT-2's shape."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
from compiler.context import parse_module
from examples.gpt import attention
from tests.test_tma_views import TmaProgram


@tc.kernel
def scores_back(q, k, shift, out, N, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
                SHIFTED: tl.constexpr):
    """out = sum over blocks of keys of (q @ kb.T - shift[keys]) @ kb: each block of
    keys ``kb`` feeds two dots, once transposed."""
    rm, d = tl.program_id(0) * BM + tl.arange(0, BM), tl.arange(0, D)
    qt = tl.load(q + rm[:, None] * D + d[None, :])
    acc = tl.zeros((BM, D), tl.float32)
    for n0 in range(0, N, BN):
        keys = n0 + tl.arange(0, BN)
        kb = tl.load(k + keys[:, None] * D + d[None, :], mask=keys[:, None] < N, other=0.0)
        s = tl.dot(qt, tl.trans(kb))
        if SHIFTED:
            s = s - tl.load(shift + keys, mask=keys < N, other=0.0)[None, :]
        acc = tl.dot(s.to(tl.float16), kb, acc)
    tl.store(out + rm[:, None] * D + d[None, :], acc)


def _run(N: int, shifted: bool, stages: int):
    M, D, BM, BN = 64, 64, 64, 64
    rng = np.random.default_rng(N)
    q = (rng.standard_normal((M, D)) / 8).astype(np.float16)
    k = (rng.standard_normal((N, D)) / 8).astype(np.float16)
    shift = rng.standard_normal(N).astype(np.float32) / 8
    out = np.full((M, D), np.nan, np.float32)
    ck = tc.compile(scores_back, backend="ptx", target="sm_90", args=(q, k, shift, out, N),
                    constants={"D": D, "BM": BM, "BN": BN, "SHIFTED": shifted},
                    num_warps=4, num_stages=stages)
    text = [ir for name, ir in ck.stages if name == "cse"][-1]
    TmaProgram(parse_module(text), {"q": q.ravel(), "k": k.ravel(), "shift": shift,
                                    "out": out.ravel()}, {"N": N}, (0,), (1,)).run()
    s = q.astype(np.float32) @ k.T.astype(np.float32) - (shift if shifted else 0)
    want = s.astype(np.float16).astype(np.float32) @ k.astype(np.float32)
    return text, out, want


@pytest.mark.parametrize("N, shifted, stages", [(256, False, 2), (200, True, 3)])
def test_one_stage_read_by_two_wgmma_dots_simulated(N, shifted, stages):
    text, out, want = _run(N, shifted, stages)
    loop = text[text.index("scf.for"):text.index("scf.yield")]
    # one copy of each thread's share of the keys an iteration, read in place by both
    # dots (nothing stored from registers in the loop); the shift waits in registers
    assert loop.count("simt.cp_async ") == 1 and "simt.shared_store" not in loop
    assert loop.count("simt.load ") == shifted
    assert loop.count("simt.wgmma ") == 2 * (64 // 16)  # two dots, k in steps of 16
    np.testing.assert_allclose(out, want, rtol=0, atol=2.0**-9 * np.abs(want).max())


@pytest.mark.parametrize("kernel, tiles", [("dq", attention.DQ), ("dkv", attention.DKV)])
def test_gpt_attention_backward_stages_its_blocks_on_sm90(kernel, tiles):
    """At GPT-2's shape (T 1024, 12 heads of 64, bf16) the backward's blocks (keys and
    values for dQ; queries and output gradients for dK and dV) are copied by cp.async
    and read by wgmma in place."""
    B, H, T, D = 1, 12, 1024, 64
    C = H * D
    bf16 = ml_dtypes.bfloat16
    qkv, out = np.zeros((B * T, 3 * C), bf16), np.zeros((B * T, C), bf16)
    lse = np.zeros((B * H, T), np.float32)
    args = ((qkv, out, out, lse, lse, qkv) if kernel == "dq" else (qkv, out, lse, lse, qkv)) \
        + (0.125, T, H, C, D)
    fn = attention.attention_dq_kernel if kernel == "dq" else attention.attention_dkv_kernel
    ck = tc.compile(fn, backend="ptx", target="sm_90", args=args,
                    constants={"BM": tiles.BM, "BN": tiles.BN, "DB": D, "PRECISION": "ieee",
                               "STAGES": tiles.num_stages}, num_warps=tiles.num_warps)
    ptx = ck.asm["ptx"]
    assert "cp.async.cg.shared.global" in ptx
    assert ptx.count("wgmma.mma_async") >= 4
