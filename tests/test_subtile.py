"""Epilogue subtiling (Triton's persistent matmul): ``split(permute(reshape(acc, (M, 2, N /
2)), (0, 2, 1)))`` gives the two column halves of ``acc``. ``canonicalize`` rewrites it to
two ``tile.extract`` windows, which take the operand's layout, so on a wgmma accumulator
the halves are registers picked, not a trip through shared memory: numerics on every
backend against NumPy, and the sm_90 PTX no larger than the unsplit epilogue's."""

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
from compiler.context import parse_module
from tests.conftest import launch
from tests.test_tma_views import TmaProgram


@tc.kernel
def halves_kernel(x, out, M: tl.constexpr, N: tl.constexpr, ALSO_3D: tl.constexpr):
    r = tl.arange(0, M)[:, None]
    c = tl.arange(0, N // 2)[None, :]
    a = tl.load(x + r * N + tl.arange(0, N)[None, :])
    t = tl.permute(tl.reshape(a, (M, 2, N // 2)), (0, 2, 1))
    lo, hi = tl.split(t)
    if ALSO_3D:  # the permuted tile has another use: it stays
        lo = lo + tl.sum(t, axis=2)
    tl.store(out + r * N + c, hi)
    tl.store(out + r * N + N // 2 + c, lo)


@pytest.mark.parametrize("also_3d", [False, True])
def test_halves_of_a_loaded_tile(backend, rng, also_3d):
    M, N = 8, 16
    a = rng.standard_normal((M, N)).astype(np.float32)
    out = np.zeros(M * N, np.float32)
    lo, hi = a[:, :N // 2], a[:, N // 2:]
    if also_3d:
        lo = lo + (lo + hi)
    if launch(halves_kernel, (1,), a, out, backend=backend, M=M, N=N, ALSO_3D=also_3d):
        np.testing.assert_allclose(out.reshape(M, N), np.concatenate([hi, lo], 1),
                                   rtol=1e-6)


@tc.kernel
def subtiled_matmul(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                    BK: tl.constexpr, SUB: tl.constexpr):
    ad = tl.make_tensor_descriptor(a, (M, K), (K, 1), (BM, BK))
    bd = tl.make_tensor_descriptor(b, (N, K), (K, 1), (BN, BK))
    if SUB:
        cd = tl.make_tensor_descriptor(c, (M, N), (N, 1), (BM, BN // 2))
    else:
        cd = tl.make_tensor_descriptor(c, (M, N), (N, 1), (BM, BN))
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(tl.cdiv(K, BK)):
        acc = tl.dot(ad.load([pm * BM, k * BK]), bd.load([pn * BN, k * BK]).T, acc)
    if SUB:
        halves = tl.permute(tl.reshape(acc, (BM, 2, BN // 2)), (0, 2, 1))
        acc0, acc1 = tl.split(halves)
        cd.store([pm * BM, pn * BN], acc0.to(tl.float16))
        cd.store([pm * BM, pn * BN + BN // 2], acc1.to(tl.float16))
    else:
        cd.store([pm * BM, pn * BN], acc.to(tl.float16))


def test_subtiled_matmul(backend, rng):
    M, N, K = 32, 32, 32
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((N, K)).astype(np.float16)
    c = np.zeros((M, N), np.float16)
    if launch(subtiled_matmul, (2, 1), a, b, c, M, N, K, backend=backend,
              BM=16, BN=32, BK=16, SUB=True):
        want = a.astype(np.float32) @ b.astype(np.float32).T
        np.testing.assert_allclose(c.astype(np.float32), want, rtol=1e-2, atol=1e-2)


def test_subtiled_epilogue_picks_registers_on_sm90():
    """The tutorial's BLOCK_M = 128, BLOCK_N = 256 with 8 warps: before, the halves went
    through shared memory lane by lane (a thousand more ``st.shared``, ten times the
    spills)."""
    def build(sub: bool):
        return tc.compile(subtiled_matmul, signature="*f16,*f16,*f16,i32,i32,i32",
                          constants={"BM": 128, "BN": 256, "BK": 64, "SUB": sub},
                          backend="ptx", target="sm_90", num_warps=8)
    split, whole = build(True), build(False)
    assert "wgmma" in split.asm["ptx"]
    assert split.asm["ptx"].count("st.shared") == whole.asm["ptx"].count("st.shared")
    assert split.n_spills <= whole.n_spills


@pytest.mark.parametrize("num_warps", [4, 8])
def test_subtiled_wgmma_epilogue_in_the_simulator(num_warps):
    """The sm_90 kernel itself (TMA, wgmma, the halves picked from the accumulator's
    registers) run by the SIMT simulator: the stores give a @ b.T."""
    M, N, K = 128, 256, 128
    rng = np.random.default_rng(5)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((N, K)).astype(np.float16)
    c = np.full((M, N), np.nan, np.float16)
    ck = tc.compile(subtiled_matmul, backend="ptx", target="sm_90", args=(a, b, c, M, N, K),
                    constants={"BM": 128, "BN": 256, "BK": 64, "SUB": True},
                    num_warps=num_warps, num_stages=2)
    module = parse_module([ir for name, ir in ck.stages if name == "cse"][-1])
    TmaProgram(module, {"a": a.ravel(), "b": b.ravel(), "c": c.ravel()},
               {"M": M, "N": N, "K": K}, (0, 0), (1, 1)).run()
    want = a.astype(np.float32) @ b.astype(np.float32).T
    np.testing.assert_allclose(c.astype(np.float32), want, rtol=1e-2, atol=1e-2)
