"""TMA for the arrays of 3 to 5 dimensions cuTile kernels tile with leading dimensions of
size 1: a batch of matrices read as ``(1, tm, tk)`` tiles, attention's heads as ``(1, 1,
tm, d)``. On sm_90 their loads feeding a warpgroup dot are copied by TMA with tensor maps
of the array's full rank (boxes one element long in the leading dimensions) and their
stores of a dot's result go out by TMA the same way.

Without a GPU the PTX is compiled and its tensor maps checked, and whole kernels run in
the SIMT simulator, whose TMA model copies boxes of a tensor map into swizzled stages
(zeros outside the array) and completes a barrier's phase once the bytes it expects have
landed; every backend runs the kernels against NumPy.
"""

from math import prod
from typing import ClassVar

import numpy as np
import pytest

import compiler as tc
import compiler.tile as ct
from compiler.context import parse_module
from tests.conftest import launch
from tests.test_wgmma import WgmmaProgram, _swizzle

C = ct.Constant[int]
ZERO = ct.PaddingMode.ZERO


@ct.kernel
def batched_matmul(a, b, c, TM: C, TN: C, TK: C):
    """c[z] = a[z] @ b[z]: one (TM, TN) tile of one matrix of the batch per program, its
    operands loaded as (1, TM, TK) and (1, TK, TN) tiles and reshaped for the mma."""
    z, i, j = ct.bid(0), ct.bid(1), ct.bid(2)
    acc = ct.full((TM, TN), 0.0, dtype=ct.float32)
    for k in range(ct.cdiv(a.shape[2], TK)):
        x = ct.load(a, index=(z, i, k), shape=(1, TM, TK), padding_mode=ZERO)
        y = ct.load(b, index=(z, k, j), shape=(1, TK, TN), padding_mode=ZERO)
        acc = ct.mma(ct.reshape(x, (TM, TK)), ct.reshape(y, (TK, TN)), acc)
    ct.store(c, index=(z, i, j), tile=ct.reshape(ct.astype(acc, c.dtype), (1, TM, TN)))


@ct.kernel
def heads_matmul(a, bt, c, H: C, TM: C, TN: C, TK: C):
    """c[z, h] = a[z, h] @ bt[z, h]^T for each of H heads: (1, 1, TM, TK) tiles of 4-D
    arrays, bt's read transposed by the load's order (attention's K)."""
    z, h, i, j = ct.bid(0) // H, ct.bid(0) % H, ct.bid(1), ct.bid(2)
    acc = ct.full((TM, TN), 0.0, dtype=ct.float32)
    for k in range(ct.cdiv(a.shape[3], TK)):
        x = ct.load(a, index=(z, h, i, k), shape=(1, 1, TM, TK), padding_mode=ZERO)
        y = ct.load(bt, index=(z, h, k, j), shape=(1, 1, TK, TN), order=(0, 1, 3, 2),
                    padding_mode=ZERO)
        acc = ct.mma(x.reshape((TM, TK)), y.reshape((TK, TN)), acc)
    ct.store(c, index=(z, h, i, j), tile=acc.astype(c.dtype).reshape((1, 1, TM, TN)))


def _batched(rng, batch: int, m: int, n: int, k: int, pad: int = 0):
    """a, b and c of a batched product; a is a view of a taller array (``pad`` rows more
    per matrix), so its batch stride is not m * k."""
    a = rng.standard_normal((batch, m + pad, k)).astype(np.float16)[:, :m]
    b = rng.standard_normal((batch, k, n)).astype(np.float16)
    return a, b, np.full((batch, m, n), np.nan, np.float16)


def _close(got: np.ndarray, a: np.ndarray, b: np.ndarray) -> None:
    want = a.astype(np.float64) @ b.astype(np.float64)
    tol = 2e-3 * np.sqrt(a.shape[-1]) * max(np.abs(want).max(), 1.0)
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=0, atol=tol)


# -- the PTX ---------------------------------------------------------------------------------

def test_batch_of_matrices_goes_by_tma_and_wgmma():
    """BatchMatMul's 128x256x128 f16 tiles on 8 warps: A's rows, permuted for the
    accumulator's warps, as one 5-D box per atom (batch, warp w, 8 W-row group 2 t + h,
    row r, column) or, at the array's end, 8-row boxes; B in boxes of all its rows; C
    stored by TMA. Every map is of the array's rank, one element long in the batch."""
    a, b, c = (np.zeros(s, np.float16) for s in ((2, 256, 256), (2, 256, 512), (2, 256, 512)))
    ck = tc.compile(batched_matmul, backend="ptx", target="sm_90",
                    args=(a, b, c, 128, 256, 128), num_warps=8, num_stages=2)
    ptx = ck.asm["ptx"]
    assert ptx.count("wgmma.mma_async") and "fma.rn.f32" not in ptx
    assert "ld.global" not in ptx and "st.global" not in ptx
    assert "cp.async.bulk.tensor.5d.shared" in ptx and "cp.async.bulk.tensor.3d.shared" in ptx
    assert "cp.async.bulk.tensor.3d.global.shared::cta.bulk_group" in ptx
    # parameters: a, a_shape0..2, a_stride0..1 (0-5), b (6-11), c (12-17)
    one = (-1, 1, 1)

    def param(i, scale=1, divisor=1):
        return (i, scale, divisor)

    def flat(*entries):
        return [x for e in entries for x in e]

    assert ck.metadata.extra["tensor_maps"] == [
        {"base": 0, "dtype": "f16",
         "sizes": flat(param(1), (-1, 8, 1), param(2, 1, 64), (-1, 8, 1), param(3)),
         "strides": flat(param(4), param(5, 8), param(5, 64), param(5), one),
         "box": [1, 8, 2, 8, 64], "swizzle": 128},
        {"base": 0, "dtype": "f16", "sizes": flat(param(1), param(2), param(3)),
         "strides": flat(param(4), param(5), one), "box": [1, 8, 64], "swizzle": 128},
        {"base": 6, "dtype": "f16", "sizes": flat(param(7), param(8), param(9)),
         "strides": flat(param(10), param(11), one), "box": [1, 128, 64], "swizzle": 128},
        {"base": 12, "dtype": "f16", "sizes": flat(param(13), param(14), param(15)),
         "strides": flat(param(16), param(17), one), "box": [1, 128, 64], "swizzle": 128}]
    copies = dict(ck.stages)["pipeline-loads"]
    assert copies.count("tile.tma_copy %a sizes[%a_shape0, %a_shape1, %a_shape2]") == 2


def test_heads_go_by_tma_with_4d_maps():
    """(1, 1, TM, TK) tiles of 4-D arrays: A in 8-row boxes (a permuted box has no room
    for two leading dimensions), B through the load's transpose in one box, C by TMA."""
    x = np.zeros((2, 3, 128, 128), np.float16)
    ck = tc.compile(heads_matmul, backend="ptx", target="sm_90",
                    args=(x, x, x, 3, 64, 64, 64), num_warps=4, num_stages=3)
    ptx = ck.asm["ptx"]
    assert ptx.count("wgmma.mma_async") and "ld.global" not in ptx
    assert [m["box"] for m in ck.metadata.extra["tensor_maps"]] == [
        [1, 1, 8, 64], [1, 1, 64, 64], [1, 1, 64, 64]]
    assert "cp.async.bulk.tensor.4d.global.shared::cta.bulk_group" in ptx
    # the transpose of the 2-D tile loaded: no 4-D transpose, no reshape left
    tile_ir = ck.asm["tile"]
    assert "tile.reshape" not in tile_ir and "tile.trans %" in tile_ir
    assert "[0, 1, 3, 2]" not in tile_ir


def test_leading_strides_of_unknown_alignment_keep_pointers():
    """A batch stride TMA cannot take (8 bytes past a multiple of 16) leaves every load of
    the loop to pointers and masks, the dot still on wgmma."""
    memory = np.zeros(2 * 64 * 64 + 4, np.float16)
    a = np.lib.stride_tricks.as_strided(memory, (2, 64, 64), ((64 * 64 + 4) * 2, 128, 2))
    b, c = np.zeros((2, 64, 64), np.float16), np.zeros((2, 64, 64), np.float16)
    ck = tc.compile(batched_matmul, backend="ptx", target="sm_90", args=(a, b, c, 64, 64, 64),
                    num_warps=4, num_stages=3)
    ptx = ck.asm["ptx"]
    assert "shared::cluster.global" not in ptx and "ld.global" in ptx
    assert "wgmma.mma_async" in ptx


# -- simulated -------------------------------------------------------------------------------

class TmaProgram(WgmmaProgram):
    """The wgmma simulator plus TMA: ``nvgpu.tensor_map`` describes an array; thread 0's
    ``nvgpu.tma_load`` reads its box at issue (zeros outside the array) and lands it,
    swizzled, when a wait completes the phase of the barrier it arrives on, which needs
    the arrivals the barrier was made for and the bytes they expected; ``nvgpu.tma_store``
    writes the box of its buffer inside the array. Thread 0's ``scf.if`` (the only
    condition that differs by thread) runs its ops for every thread, each gated by its
    predicate."""

    def run(self) -> None:
        self.maps: list = []
        self.barriers: dict = {}
        super().run()
        assert not any(b["arrived"] for b in self.barriers.values()), "copies never waited for"

    def _if(self, op, cond):
        if np.all(cond == cond.flat[0]):
            return super()._if(op, cond)
        assert not cond[1:].any(), "only thread 0 issues bulk copies"
        return self.block(op.true_region.block)

    def _thread_zero(self, pred) -> bool:
        pred = np.broadcast_to(pred, (self.threads, 1))
        assert not pred[1:].any(), "a bulk copy issued by a thread other than 0"
        return bool(pred[0, 0])

    def _scalars(self, values) -> list[int]:
        out = []
        for v in values:
            v = np.broadcast_to(self.env[v], (self.threads, 1))
            assert (v == v[0]).all(), "a TMA operand that differs by thread"
            out.append(int(v[0, 0]))
        return out

    def _tensor_map(self, op, *_):
        self.maps.append((self.env[op.base], self._scalars(op.sizes),
                          self._scalars(op.strides), list(op.box.get_values())))
        return np.array([[len(self.maps) - 1]])

    def _box(self, op):
        """The box ``op`` moves: (array, global indices, whether each is inside, shared
        indices from ``op.index``, swizzled), row-major in the box."""
        base, sizes, strides, box = self.maps[int(self.env[op.map].flat[0])]
        at = self._scalars(op.coords)
        where = np.indices(box).reshape(len(box), -1) + np.array(at)[:, None]
        inside = ((where >= 0) & (where < np.array(sizes)[:, None])).all(axis=0)
        flat = (where * np.array(strides)[:, None]).sum(axis=0)
        size = base.itemsize
        dst = _swizzle(size * (self._scalars([op.index])[0] + np.arange(prod(box)))) // size
        return base, flat, inside, dst

    def _init(self, op, bars):
        for stage in range(op.bars.type.get_shape()[0]):
            self.barriers[(op.bars, stage)] = {"arrivals": op.arrivals.value.data,
                                               "arrived": 0, "expected": 0, "landed": 0,
                                               "pending": [], "completed": 0}

    def _expect(self, op, bars, stage, pred):
        if self._thread_zero(pred):
            barrier = self.barriers[(op.bars, self._scalars([op.stage])[0])]
            barrier["arrived"] += 1
            barrier["expected"] += op.bytes.value.data

    def _tma_load(self, op, *_):
        if not self._thread_zero(self.env[op.pred]):
            return
        base, flat, inside, dst = self._box(op)
        self.writes(op.buffer, dst)  # not where anyone may still read
        barrier = self.barriers[(op.bars, self._scalars([op.stage])[0])]
        values = np.where(inside, base[np.where(inside, flat, 0)], 0)
        barrier["pending"].append((self.env[op.buffer], dst, values))
        barrier["landed"] += values.size * base.itemsize

    def _wait_phase(self, op, *_):
        stage, parity = self._scalars([op.stage, op.phase])
        barrier = self.barriers[(op.bars, stage)]
        if barrier["arrived"]:
            assert barrier["arrived"] == barrier["arrivals"], "a phase short of arrivals"
            assert barrier["landed"] == barrier["expected"], "bytes expected != bytes copied"
            for buf, dst, values in barrier["pending"]:
                buf[dst] = values
            barrier.update(arrived=0, expected=0, landed=0, pending=[])
            barrier["completed"] += 1
        assert barrier["completed"] and (barrier["completed"] - 1) % 2 == parity, \
            "a wait for a phase that never completes"

    def _inval(self, op, bars):
        assert not any(b["arrived"] for (v, _), b in self.barriers.items() if v is op.bars)

    def _tma_store(self, op, *_):
        if not self._thread_zero(self.env[op.pred]):
            return
        base, flat, inside, src = self._box(op)
        self.reads(op.buffer, src)
        base[flat[inside]] = self.env[op.buffer][src[inside]]

    HANDLERS: ClassVar = {
        **WgmmaProgram.HANDLERS, "scf.if": _if, "nvgpu.tensor_map": _tensor_map,
        "nvgpu.mbarrier_init": _init, "nvgpu.mbarrier_expect": _expect,
        "nvgpu.tma_load": _tma_load, "nvgpu.mbarrier_wait": _wait_phase,
        "nvgpu.mbarrier_inval": _inval, "nvgpu.tma_store": _tma_store,
        "nvgpu.tma_store_wait": lambda self, op, pred: None,
        "arith.divui": lambda self, op, a, b: a.astype(np.int64) // b,
        "arith.remui": lambda self, op, a, b: a.astype(np.int64) % b}


def _simulate(kernel, arrays: dict, constants: tuple, grid: tuple, num_warps: int,
              stages: int = 3) -> str:
    """``kernel`` compiled for sm_90 and run in the simulator over ``grid`` (arrays as
    views: their strides are the kernel's); its SIMT text."""
    ck = tc.compile(kernel, backend="ptx", target="sm_90",
                    args=(*arrays.values(), *constants), num_warps=num_warps,
                    num_stages=stages)
    text = [ir for name, ir in ck.stages if name == "cse"][-1]
    module = parse_module(text)
    flat, scalars = {}, {}
    for name, x in arrays.items():
        whole = x.base if x.base is not None else x
        assert whole.flags.c_contiguous and np.shares_memory(whole, x)
        flat[name] = whole.reshape(-1)
        assert x.__array_interface__["data"][0] == whole.__array_interface__["data"][0]
        for d in range(x.ndim):
            scalars[f"{name}_shape{d}"] = x.shape[d]
            scalars[f"{name}_stride{d}"] = x.strides[d] // x.itemsize
    for pid in np.ndindex(*reversed(grid)):
        TmaProgram(module, flat, scalars, tuple(reversed(pid)), grid).run()
    return text


@pytest.mark.parametrize("shape, tiles, num_warps", [
    # rows past the last whole block (8-row boxes), K and N zero-padded, a batch stride
    # not m * k
    ((2, 100, 80, 144), (64, 64, 64), 4),
    # two warpgroups: A's permuted box of 8 warps
    ((2, 256, 128, 128), (128, 128, 64), 8),
    # tiles of two blocks of 16 x 4 rows: one box per block
    ((2, 256, 64, 128), (128, 64, 64), 4),
])
def test_batched_matmul_by_tma_simulated(shape, tiles, num_warps):
    batch, m, n, k = shape
    a, b, c = _batched(np.random.default_rng(2), batch, m, n, k, pad=8)
    grid = (batch, -(-m // tiles[0]), -(-n // tiles[1]))
    text = _simulate(batched_matmul, {"a": a, "b": b, "c": c}, tiles, grid, num_warps)
    assert "nvgpu.tma_load" in text and "nvgpu.tma_store" in text and "simt.wgmma " in text
    _close(c, a, b)


@pytest.mark.parametrize("stages, num_warps", [(3, 4), (3, 8), (4, 8)])
def test_a_tma_staged_dot_runs_on_and_its_stage_is_refilled_after_it(stages, num_warps):
    """From 3 stages the dot runs on into the next iteration (it waits for all but its
    latest wgmma), and the stage the last iteration read is refilled by TMA only after that
    wait and a barrier: copies stay 2 iterations ahead (at 3 stages, refilling at the top
    would leave them 1 ahead). Eight k steps wrap the ring of stages twice or more."""
    a, b, c = _batched(np.random.default_rng(4), 1, 128, 128, 512)
    text = _simulate(batched_matmul, {"a": a, "b": b, "c": c}, (128, 128, 64), (1, 1, 1),
                     num_warps, stages)
    loop = text[text.index("scf.for"):]
    wait = loop.index("simt.wgmma_wait 1")
    assert wait < loop.index("simt.barrier", wait) < loop.index("nvgpu.tma_load", wait)
    _close(c, a, b)


def test_heads_matmul_by_tma_simulated():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 2, 72, 128)).astype(np.float16)
    bt = rng.standard_normal((2, 2, 80, 128)).astype(np.float16)
    c = np.full((2, 2, 72, 80), np.nan, np.float16)
    text = _simulate(heads_matmul, {"a": a, "bt": bt, "c": c}, (2, 64, 64, 64), (4, 2, 2), 4)
    assert "nvgpu.tma_load" in text and "simt.wgmma " in text
    _close(c, a, np.swapaxes(bt, 2, 3))


# -- every backend ---------------------------------------------------------------------------

def test_batched_matmul(backend, rng):
    """Small tiles on numpy and wgsl (lavapipe compiles big ones slowly); on ptx the
    sample's 128x256x128, by TMA on sm_90, edges in every dimension."""
    tiles = (128, 256, 128) if backend == "ptx" else (32, 32, 32)
    a, b, c = _batched(rng, 2, 136, 272, 144, pad=8)
    grid = (2, -(-136 // tiles[0]), -(-272 // tiles[1]))
    if launch(batched_matmul, grid, a, b, c, backend=backend,
              num_warps=8 if backend == "ptx" else 4,
              **dict(zip(("TM", "TN", "TK"), tiles))):
        _close(c, a, b)


def test_heads_matmul(backend, rng):
    tiles = (64, 64, 64) if backend == "ptx" else (32, 32, 32)
    a = rng.standard_normal((2, 3, 72, 96)).astype(np.float16)
    bt = rng.standard_normal((2, 3, 80, 96)).astype(np.float16)
    c = np.full((2, 3, 72, 80), np.nan, np.float16)
    grid = (6, -(-72 // tiles[0]), -(-80 // tiles[1]))
    if launch(heads_matmul, grid, a, bt, c, backend=backend, H=3,
              **dict(zip(("TM", "TN", "TK"), tiles))):
        _close(c, a, np.swapaxes(bt, 2, 3))


def test_batched_matmul_of_one_b_for_every_batch(backend, rng):
    """b broadcast over the batch (a batch stride of 0): every matrix of a times the same
    b; on sm_90 the stride goes into the tensor map as it is."""
    tiles = (64, 64, 64) if backend == "ptx" else (32, 32, 32)
    a, _, c = _batched(rng, 3, 64, 64, 64)
    b = np.broadcast_to(rng.standard_normal((1, 64, 64)).astype(np.float16), (3, 64, 64))
    if launch(batched_matmul, (3, 64 // tiles[0], 64 // tiles[1]), a, b, c, backend=backend,
              **dict(zip(("TM", "TN", "TK"), tiles))):
        _close(c, a, b)
