"""A tensor-core dot's epilogue, loaded and stored coalesced: outside loops, a pointer
access of a tile computed from a dot's result (or combined with it) takes a layout of its
own, and the tile goes between the two through shared memory, its rows padded so that both
sides move whole aligned runs without bank conflicts (``assign-layouts``,
``shared_banks``). Kernels written as Triton users write a scaled product (a GELU
derivative or a residual in the GPT, a bias in a matmul), run in the wgmma simulator
against NumPy and compiled for sm_90."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import TensorType, bf16, f16

import compiler as tc
import compiler.language as tl
from compiler.context import parse_module
from compiler.passes.assign_layouts import blocked_layout
from compiler.passes.layouts import element_ids
from compiler.passes.shared_banks import plan_exchange, requests, row_padded, widest_run
from dialects.tile import MmaLayoutAttr
from tests.conftest import launch
from tests.test_tma_views import TmaProgram


@tc.kernel
def scaled_product(a, b, scale, out, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                   BK: tl.constexpr):
    """out = (a @ b) * scale, elementwise, for one (BM, BN) tile of rows and columns."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k0 in range(0, K, BK):
        x = tl.load(a + rm[:, None] * K + (k0 + rk)[None, :], mask=rm[:, None] < M, other=0.0)
        y = tl.load(b + (k0 + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(x, y, acc)
    at = rm[:, None] * N + rn[None, :]
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    acc *= tl.load(scale + at, mask=mask, other=0.0).to(tl.float32)
    tl.store(out + at, acc.to(out.dtype.element_ty), mask=mask)


def _compiled(M: int, N: int, K: int, BM: int, BN: int, out_dtype=np.float16,
              target: str = "sm_90"):
    rng = np.random.default_rng(M + N)
    a = (rng.standard_normal((M, K)) / 4).astype(np.float16)
    b = (rng.standard_normal((K, N)) / 4).astype(np.float16)
    scale = rng.standard_normal((M, N)).astype(np.float16)
    out = np.full((M, N), np.nan, out_dtype)
    ck = tc.compile(scaled_product, backend="ptx", target=target,
                    args=(a, b, scale, out, M, N, K),
                    constants={"BM": BM, "BN": BN, "BK": 64}, num_warps=4, num_stages=2)
    return ck, (a, b, scale, out)


def test_epilogue_load_and_store_are_coalesced_and_right():
    M, N, K, BM, BN = 100, 64, 128, 64, 64
    ck, (a, b, scale, out) = _compiled(M, N, K, BM, BN)
    stages = dict(ck.stages)
    layouts = stages["assign-layouts"]
    assert layouts.count("tile.convert_layout") == 2  # after the load, before the store
    text = [ir for name, ir in ck.stages if name == "cse"][-1]
    epilogue = text[text.rindex("scf.yield"):]
    # f16 scale and out, 8 a thread each access (16 bytes), not the accumulator's 2
    assert "simt.load %scale" in epilogue and "simt.store %out" in epilogue
    for line in epilogue.splitlines():
        if "simt.load %scale" in line or "simt.store %out" in line:
            assert "{vec = 8 : i32}" in line, line
    for pid in range(2):  # the second tile is ragged: rows 64..99 of 128
        TmaProgram(parse_module(text), {"a": a.ravel(), "b": b.ravel(),
                                        "scale": scale.ravel(), "out": out.ravel()},
                   {"M": M, "N": N, "K": K}, (pid, 0), (2, 1)).run()
    want = (a.astype(np.float32) @ b.astype(np.float32)) * scale.astype(np.float32)
    np.testing.assert_allclose(out.astype(np.float32), want, rtol=2e-3,
                               atol=2e-3 * np.abs(want).max())


@pytest.mark.parametrize("target, converted", [("sm_90", True), ("sm_80", False)])
def test_epilogue_converts_where_one_trip_holds_it(target, converted):
    """A 128 x 128 f32 tile needs 66 KiB with its padding: one trip of Hopper's 96 KiB,
    more than the 48 KiB of older GPUs, where it is stored in the accumulator's layout as
    it lies (and so is the f16 scale loaded, since its indices and mask are the store's)."""
    ck, _ = _compiled(128, 128, 64, 128, 128, np.float32, target)
    layouts = dict(ck.stages)["assign-layouts"]
    assert layouts.count("tile.convert_layout") == (2 if converted else 0)
    store = next(line for line in layouts.splitlines() if line.strip().startswith("tile.store"))
    assert ("#tile.mma" in store) != converted


def test_small_epilogue_keeps_the_dot_layout():
    """A decoding step's 16 x 32 tile over 4 warps is 4 elements a thread: the conversion's
    two barriers would cost more than the one access a thread it saves."""
    ck, _ = _compiled(16, 32, 64, 16, 32)
    layouts = dict(ck.stages)["assign-layouts"]
    assert "#tile.mma" in layouts and "tile.convert_layout" not in layouts


@pytest.mark.parametrize("shape, warps, dtype, elem", [((128, 128), 8, bf16, 2),
                                                       ((128, 256), 8, f16, 2),
                                                       ((64, 64), 4, f16, 2)])
def test_accumulator_to_coalesced_plan_is_conflict_free(shape, warps, dtype, elem):
    mma = TensorType(dtype, shape, MmaLayoutAttr(3, (warps, 1)))
    coalesced = TensorType(dtype, shape, blocked_layout(shape, warps, 16, 128))
    plan = plan_exchange(mma, coalesced, elem)
    # 4 bytes a lane from the accumulator (two columns), 16 into the coalesced layout
    assert (plan.src_vec, plan.dst_vec) == (2, 8)
    assert plan.weights == row_padded(shape, 8)
    for t, vec in ((mma, plan.src_vec), (coalesced, plan.dst_vec)):
        ids = element_ids(t.encoding, shape, plan.weights)
        accesses, per_access = ids.shape[1] // vec, max(1, vec * elem // 4)
        # one wavefront per request of a warp (16 bytes a lane: 4 requests of 8 lanes)
        assert requests(ids, vec, elem) == 2 * accesses * per_access
    # unpadded, the accumulator's 8 rows of a warp fall on the same banks
    ids = element_ids(mma.encoding, shape, row_padded(shape, 0))
    assert requests(ids, 2, elem) > 2 * (ids.shape[1] // 2)


def test_widest_run_needs_aligned_consecutive_lanes():
    ids = np.array([[0, 1, 2, 3, 8, 9, 10, 11], [4, 5, 6, 7, 12, 13, 14, 15]])
    assert widest_run(ids, 8) == 4
    assert widest_run(ids + 2, 8) == 2  # runs of 4 starting at 2 and 6: aligned by 2 only
    assert widest_run(ids[:, ::-1], 8) == 1


@tc.kernel
def transpose(x, y, N: tl.constexpr):
    r = tl.arange(0, N)
    t = tl.load(x + r[:, None] * N + r[None, :])
    tl.store(y + r[:, None] * N + r[None, :], tl.trans(t))


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.float16])
def test_trips_count_what_shared_memory_holds(backend, dtype):
    """A 128 x 128 transpose of narrow elements moves in trips: on WGSL each element
    takes a 32-bit word of workgroup memory, so its trips hold 16 KiB of words (WebGPU's
    guarantee), 5 of them; on PTX the elements take their own size, one trip."""
    x = (np.arange(128 * 128) % 101).astype(dtype).reshape(128, 128)
    y = np.zeros_like(x)
    if backend != "numpy":
        ck = tc.compile(transpose, args=(x, y), constants={"N": 128}, backend=backend)
        shared = ck.metadata.extra["shared"]
        assert shared <= 16 * 1024 if backend == "wgsl" else shared <= 128 * 129 * x.itemsize
    if launch(transpose, (1,), x, y, backend=backend, N=128):
        np.testing.assert_array_equal(y, x.T)
