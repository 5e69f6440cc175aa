"""A warpgroup dot whose A is a transpose, ``tl.dot(tl.trans(x), y)`` (a linear layer's
weight gradient ``dy.T @ x``, summed down the rows of both): on sm_90 ``x`` stays as it was
loaded, M-major, in the stage TMA or ``cp.async`` filled (or in a buffer it is stored to
from registers), and ``ldmatrix.trans`` gives each warp the A fragments of its
accumulator rows. Whole kernels run in the TMA and wgmma simulator against NumPy (edges,
two warpgroups, two m16 tiles a warp, wgmma running on into the next iteration), the
GPT's weight-gradient kernel is compiled at GPT-2's shapes, and on a GPU the kernels run.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
from compiler.context import parse_module
from compiler.jit import availability
from examples.gpt import matmul as gpt_matmul
from tests.test_tma_views import TmaProgram


@tc.kernel
def at_b(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """c = a.T @ b for a (K, M) and b (K, N), through tensor descriptors."""
    pm, pn = tl.program_id(0), tl.program_id(1)
    da = tl.make_tensor_descriptor(a, shape=[K, M], strides=[M, 1], block_shape=[BK, BM])
    db = tl.make_tensor_descriptor(b, shape=[K, N], strides=[N, 1], block_shape=[BK, BN])
    acc = tl.zeros((BM, BN), tl.float32)
    for k0 in range(0, K, BK):
        acc = tl.dot(tl.trans(da.load([k0, pm * BM])), db.load([k0, pn * BN]), acc)
    rm, rn = pm * BM + tl.arange(0, BM), pn * BN + tl.arange(0, BN)
    tl.store(c + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@tc.kernel
def at_b_pointers(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                  SCALE: tl.constexpr):
    """c = (SCALE a).T @ b through pointers: a scaled tile is A from registers."""
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm, rn, rk = pm * BM + tl.arange(0, BM), pn * BN + tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k0 in range(0, K, BK):
        ks = k0 + rk
        x = tl.load(a + ks[:, None] * M + rm[None, :],
                    mask=(ks[:, None] < K) & (rm[None, :] < M), other=0.0)
        y = tl.load(b + ks[:, None] * N + rn[None, :],
                    mask=(ks[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(tl.trans(x if SCALE == 1 else x * SCALE), y, acc)
    tl.store(c + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def _simulate(kernel, shape, tiles, num_warps, stages, **constants):
    """``kernel`` compiled for sm_90 on random f16 a (K, M), b (K, N) and run in the
    simulator: its SIMT text, c and a.T @ b."""
    (M, N, K), (BM, BN, BK) = shape, tiles
    rng = np.random.default_rng(M + N + K)
    a = rng.standard_normal((K, M)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.full((M, N), np.nan, np.float32)
    ck = tc.compile(kernel, backend="ptx", target="sm_90", args=(a, b, c, M, N, K),
                    constants={"BM": BM, "BN": BN, "BK": BK, **constants},
                    num_warps=num_warps, num_stages=stages)
    text = [ir for name, ir in ck.stages if name == "cse"][-1]
    module = parse_module(text)
    grid = (-(-M // BM), -(-N // BN))
    for pid in np.ndindex(*grid):
        TmaProgram(module, {"a": a.ravel(), "b": b.ravel(), "c": c.ravel()},
                   {"M": M, "N": N, "K": K}, pid, grid).run()
    want = a.astype(np.float64).T @ b.astype(np.float64)
    return text, c, want


def _close(c: np.ndarray, want: np.ndarray) -> None:
    np.testing.assert_allclose(c, want, rtol=0, atol=2.0**-10 * np.abs(want).max())


def _fragments(text: str, count: int) -> None:
    """A's fragments: ``count`` ldmatrix.x4.trans a dot, before its first wgmma."""
    reads = [line for line in text.splitlines() if "simt.ldmatrix" in line]
    assert len(reads) == count and all(" trans" in r for r in reads)
    assert text.index("simt.ldmatrix") < text.index("simt.wgmma ")


@pytest.mark.parametrize("shape, tiles, num_warps, stages", [
    ((64, 64, 128), (64, 64, 64), 4, 3),  # one m16 tile a warp
    ((128, 128, 256), (128, 128, 64), 4, 4),  # two a warp; running on
    ((256, 128, 192), (128, 128, 64), 8, 4),  # two warpgroups
    ((192, 64, 136), (128, 64, 64), 8, 4),  # M and K past the last whole tile: zeros
])
def test_transposed_a_by_tma_simulated(shape, tiles, num_warps, stages):
    text, c, want = _simulate(at_b, shape, tiles, num_warps, stages)
    assert text.count("nvgpu.tma_load") and "simt.cp_async " not in text
    rows = tiles[0] // (16 * num_warps)
    _fragments(text, rows * tiles[2] // 16)
    assert ("simt.wgmma_wait 1" in text) == (stages >= 3)
    _close(c, want)


@pytest.mark.parametrize("scale", [1, 2])
def test_transposed_a_by_cp_async_or_from_registers_simulated(scale):
    """Pointers: A's source copied into an unpermuted stage by cp.async; scaled, it is
    stored from registers into the dot's buffer as it is, and read the same way, while B
    is still copied into its stages (half the copies)."""
    text, c, want = _simulate(at_b_pointers, (256, 128, 200), (128, 128, 64), 8, 3,
                              SCALE=scale)
    assert text.count("simt.cp_async ") == 6 // scale
    _fragments(text, 4)
    _close(c, want * scale)


def test_weight_gradient_of_gpt2_by_tma_on_sm90():
    """The GPT's dw += dy.T @ x at GPT-2's attention projection (768 x 768 from 8192 rows,
    split in 3): dy and x copied by TMA, A's fragments by ldmatrix.trans, wgmma running on,
    no register spilled."""
    M, N, K = 8192, 768, 768
    bf16 = ml_dtypes.bfloat16
    dy, x, dw = np.zeros((M, N), bf16), np.zeros((M, K), bf16), np.zeros((N, K), np.float32)
    ck = tc.compile(gpt_matmul.linear_backward_w_kernel, backend="ptx", target="sm_90",
                    args=(dy, x, dw, M, N, K, N),
                    constants={"BN": 128, "BK": 128, "BM": 64, "GROUP": 8, "ATOMIC": True,
                               "PRECISION": "ieee"}, num_warps=8, num_stages=4)
    ptx = ck.asm["ptx"]
    assert "cp.async.bulk.tensor.2d" in ptx and "ld.global" not in ptx
    assert ptx.count("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16") == 4
    assert ptx.count("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16") == 4
    assert "wgmma.wait_group.sync.aligned 1" in ptx
    assert ck.n_spills == 0


@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(256, 384, 320), (200, 136, 200)])
def test_transposed_a_on_gpu(shape):
    if not availability("ptx")[0]:
        pytest.skip(f"ptx: {availability('ptx')[1]}")
    M, N, K = shape
    rng = np.random.default_rng(9)
    a = rng.standard_normal((K, M)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    want = a.astype(np.float64).T @ b.astype(np.float64)
    for kernel, extra in ((at_b, {}), (at_b_pointers, {"SCALE": 1})):
        c = np.full((M, N), np.nan, np.float32)
        kernel[(-(-M // 128), -(-N // 128))](a, b, c, M, N, K, BM=128, BN=128, BK=64,
                                             **extra, backend="ptx", num_warps=8,
                                             num_stages=4)
        _close(c, want)
