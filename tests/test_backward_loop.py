"""A loop shaped like attention's backward over blocks of queries for one block of keys:
four dots an iteration, two operands loaded through pointers the loop advances. On Hopper
the loop carries the sum of the pointers' steps instead of the pointers (``carry-sums``),
and the dot that does not read the one before it runs beside it (``sink-wgmma-waits``):
the SIMT simulator checks that no result of a warpgroup MMA is read before a wait
covers it."""

from __future__ import annotations

import re

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
from compiler.context import parse_module
from compiler.jit import availability
from tests.conftest import launch
from tests.test_tma_views import TmaProgram

M, N, D, BN, BM = 128, 64, 64, 64, 32


@tc.kernel
def key_grads(q, k, v, do, dk_out, dv_out, M, D: tl.constexpr, BN: tl.constexpr,
              BM: tl.constexpr, CAUSAL: tl.constexpr):
    """For the keys ``rn``: dV = S dO and dK = dS Q, summed over the blocks of queries,
    where S = K Q^T (zero where a query comes before the key, if ``CAUSAL``) and
    dS = S * (V dO^T)."""
    rn, d = tl.program_id(0) * BN + tl.arange(0, BN), tl.arange(0, D)
    kb = tl.load(k + rn[:, None] * D + d[None, :])
    vb = tl.load(v + rn[:, None] * D + d[None, :])
    dk = tl.zeros((BN, D), tl.float32)
    dv = tl.zeros((BN, D), tl.float32)
    qT_ptrs = q + tl.arange(0, BM)[None, :] * D + d[:, None]
    do_ptrs = do + tl.arange(0, BM)[:, None] * D + d[None, :]
    for m0 in range(0, M, BM):
        qT = tl.load(qT_ptrs)
        s = tl.dot(kb, qT)
        if CAUSAL:
            s = tl.where((m0 + tl.arange(0, BM))[None, :] >= rn[:, None], s, 0.0)
        g = tl.load(do_ptrs)
        dv = tl.dot(s.to(tl.float16), g, dv)
        dp = tl.dot(vb, tl.trans(g))
        dk = tl.dot((s * dp).to(tl.float16), tl.trans(qT), dk)
        qT_ptrs += BM * D
        do_ptrs += BM * D
    tl.store(dk_out + rn[:, None] * D + d[None, :], dk)
    tl.store(dv_out + rn[:, None] * D + d[None, :], dv)


@tc.kernel
def query_grads(q, k, v, do, dq_out, N, D: tl.constexpr, BM: tl.constexpr,
                BN: tl.constexpr):
    """For the queries ``rm``: dQ = dS K summed over the blocks of keys, where
    dS = (Q K^T) * (dO V^T): the two score dots read nothing of each other."""
    rm, d = tl.program_id(0) * BM + tl.arange(0, BM), tl.arange(0, D)
    qb = tl.load(q + rm[:, None] * D + d[None, :])
    gb = tl.load(do + rm[:, None] * D + d[None, :])
    dq = tl.zeros((BM, D), tl.float32)
    kT_ptrs = k + tl.arange(0, BN)[None, :] * D + d[:, None]
    vT_ptrs = v + tl.arange(0, BN)[None, :] * D + d[:, None]
    for _ in range(0, N, BN):
        kT = tl.load(kT_ptrs)
        s = tl.dot(qb, kT)
        dp = tl.dot(gb, tl.load(vT_ptrs))
        dq = tl.dot((s * dp).to(tl.float16), tl.trans(kT), dq)
        kT_ptrs += BN * D
        vT_ptrs += BN * D
    tl.store(dq_out + rm[:, None] * D + d[None, :], dq)


def _operands(queries: int, keys: int, seed: int) -> tuple:
    """q, k, v and dO in f16."""
    rng = np.random.default_rng(seed)
    return tuple((rng.standard_normal((n, D)) / 4).astype(np.float16)
                 for n in (queries, keys, keys, queries))


def _wanted(q, k, v, do, causal: bool = False) -> tuple:
    """dK and dV as ``key_grads`` computes them, and dQ as ``query_grads`` (unmasked),
    with the same roundings to f16."""
    f, half = np.float32, np.float16
    s = k.astype(f) @ q.T.astype(f)
    dp = v.astype(f) @ do.T.astype(f)
    dq = (s * dp).T.astype(half).astype(f) @ k.astype(f)
    if causal:
        s = np.where(np.arange(len(q))[None, :] >= np.arange(len(k))[:, None], s, f(0))
    dv = s.astype(half).astype(f) @ do.astype(f)
    return (s * dp).astype(half).astype(f) @ q.astype(f), dv, dq


def _inputs(causal: bool = False):
    ins = _operands(M, N, 7)
    dk, dv, _ = _wanted(*ins, causal)
    return ins, dk, dv


def _simulated(text: str, arrays: dict, scalars: dict) -> None:
    """Run one program of ``text`` (SIMT IR) in the wgmma simulator, arrays in place."""
    TmaProgram(parse_module(text), {n: a.ravel() for n, a in arrays.items()}, scalars,
               (0,), (1,)).run()


def _close(got, want):
    np.testing.assert_allclose(got, want, rtol=0, atol=2.0**-7 * np.abs(want).max())


@pytest.mark.parametrize("causal", [False, True])
def test_backward_loop(backend, causal):
    ins, dk_want, dv_want = _inputs(causal)
    dk, dv = (np.full((N, D), np.nan, np.float32) for _ in range(2))
    if launch(key_grads, (N // BN,), *ins, dk, dv, M, backend=backend, D=D, BN=BN, BM=BM,
              CAUSAL=causal):
        _close(dk, dk_want)
        _close(dv, dv_want)


def _compiled(causal: bool = False, stages: int = 3):
    ins, *_ = _inputs()
    out = np.zeros((N, D), np.float32)
    return tc.compile(key_grads, backend="ptx", target="sm_90", args=(*ins, out, out, M),
                      constants={"D": D, "BN": BN, "BM": BM, "CAUSAL": causal}, num_warps=4,
                      num_stages=stages)


def _simulate(text: str, causal: bool) -> None:
    ins, dk_want, dv_want = _inputs(causal)
    dk, dv = (np.zeros((N, D), np.float32) for _ in range(2))
    _simulated(text, dict(zip(KEY_ARGS, (*ins, dk, dv), strict=True)), {"M": M})
    _close(dk, dk_want)
    _close(dv, dv_want)


KEY_ARGS = ("q", "k", "v", "do", "dk_out", "dv_out")


def _stage(ck, name: str) -> str:
    return [ir for stage, ir in ck.stages if stage == name][-1]


def _loop(text: str) -> str:
    return text[text.index("scf.for"):text.index("scf.yield")]


def test_loop_carries_sums_not_offsets_on_sm90():
    """The two advanced offset tiles become two i32 iter_args."""
    head = _loop(_stage(_compiled(), "carry-sums")).splitlines()[0]
    assert "xi32>" not in head.split("->")[1] and head.split("->")[1].count("i32") >= 2


def test_independent_dots_share_a_wait_on_sm90():
    """dV's and dP's warpgroup MMAs are issued before one wait: 3 waits an iteration, not
    4; the simulated kernel reads no result early and computes the same."""
    ck = _compiled()
    before, after = (_stage(ck, name) for name in ("rematerialize", "sink-wgmma-waits"))
    assert _loop(before).count("simt.wgmma_wait 0") == 4
    assert _loop(after).count("simt.wgmma_wait 0") == 3
    _simulate(after, causal=False)


@pytest.mark.parametrize("causal", [False, True])
def test_accumulating_dots_run_on_at_five_stages_on_sm90(causal):
    """At 5 stages (the tutorial's backward) dV and dK, whose A is the scores in registers,
    run on past their iteration as Triton's do: each waited for by count (all but the
    latest group), the copies one iteration less ahead; the simulator checks that no stage
    is rewritten while a wgmma may read it."""
    after = _stage(_compiled(causal, stages=5), "sink-wgmma-waits")
    waits = [line.strip() for line in _loop(after).splitlines() if "simt.wgmma_wait" in line]
    assert waits == ["simt.wgmma_wait 0", "simt.wgmma_wait 1"] * 2
    _simulate(after, causal)


def test_masked_scores_stay_fragments_and_operands_staged_on_sm90():
    """Masked by ``tl.where``, the scores are still A of dV's warpgroup MMA in registers, so
    the loop's loads go to shared-memory stages, not through registers."""
    ck = _compiled(causal=True)
    loop = _loop(_stage(ck, "sink-wgmma-waits"))
    assert loop.count("simt.cp_async ") == 2 and "simt.load " not in loop
    assert sum(": vector<8xf16>" in line for line in loop.splitlines()
               if "simt.wgmma " in line) == 2 * BM // 16
    _simulate(_stage(ck, "sink-wgmma-waits"), causal=True)


QM, KN = 64, 128  # queries of one program, keys: blocks of BM (32) keys


def _query_inputs():
    ins = _operands(QM, KN, 11)
    return ins, _wanted(*ins)[2]


def test_query_loop(backend):
    (q, k, v, do), want = _query_inputs()
    dq = np.full((QM, D), np.nan, np.float32)
    if launch(query_grads, (1,), q, k, v, do, dq, KN, backend=backend, D=D, BM=QM, BN=BM):
        _close(dq, want)


def test_query_loop_runs_dq_on_at_five_stages_on_sm90():
    """At 5 stages dQ runs on into the next iteration; the score dots before it are each
    waited for in turn (``sink-wgmma-waits`` leaves a loop whose dot runs on as it is),
    and the simulated loop is right."""
    (q, k, v, do), want = _query_inputs()
    dq = np.zeros((QM, D), np.float32)
    ck = tc.compile(query_grads, backend="ptx", target="sm_90", args=(q, k, v, do, dq, KN),
                    constants={"D": D, "BM": QM, "BN": BM}, num_warps=4, num_stages=5)
    after = _stage(ck, "sink-wgmma-waits")
    waits = [line.strip() for line in _loop(after).splitlines() if "simt.wgmma_wait" in line]
    assert waits == ["simt.wgmma_wait 0", "simt.wgmma_wait 0", "simt.wgmma_wait 1"]
    _simulated(after, {"q": q, "k": k, "v": v, "do": do, "dq_out": dq}, {"N": KN})
    _close(dq, want)


def test_simulator_catches_a_result_read_before_its_wait_on_sm90():
    """The check the test above relies on: without the loop's first wait, the scores are
    read while their wgmmas may still run."""
    after = _stage(_compiled(), "sink-wgmma-waits")
    loop = after.index("scf.for")
    broken = after[:loop] + re.sub(r"\n\s*simt.wgmma_wait 0", "", after[loop:], count=1)
    ins, *_ = _inputs()
    out = np.zeros((N, D), np.float32)
    with pytest.raises(AssertionError, match="before waiting"):
        _simulated(broken, dict(zip(KEY_ARGS, (*ins, out, out), strict=True)), {"M": M})


@pytest.mark.gpu
@pytest.mark.parametrize("causal", [False, True])
def test_running_on_from_copied_stages_repeatedly_gpu(causal):
    """On a GPU at 5 stages, where dV, dK and dQ run on into the next iteration from
    cp.async stages: many programs and iterations, launched again and again, every result
    right and each the same as the first (a race would show as a wrong or varying one)."""
    ok, why = availability("ptx")
    if not ok:
        pytest.skip(f"ptx: {why}")
    m, n, f = 1024, 512, np.float32
    q, k, v, do = _operands(m, n, 13)
    dk_want, dv_want, dq_want = _wanted(q, k, v, do, causal)
    first = None
    for _ in range(5):
        dk, dv = (np.full((n, D), np.nan, f) for _ in range(2))
        dq = np.full((m, D), np.nan, f)
        key_grads[(n // BN,)](q, k, v, do, dk, dv, m, D=D, BN=BN, BM=BM, CAUSAL=causal,
                              backend="ptx", num_warps=4, num_stages=5)
        query_grads[(m // QM,)](q, k, v, do, dq, n, D=D, BM=QM, BN=BM, backend="ptx",
                                num_warps=4, num_stages=5)
        _close(dk, dk_want)
        _close(dv, dv_want)
        _close(dq, dq_want)
        got = (dk, dv, dq)
        first = first or got
        assert all(np.array_equal(a, b) for a, b in zip(got, first, strict=True))
