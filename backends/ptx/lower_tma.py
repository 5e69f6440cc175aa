"""Part of simt-to-ptx: Hopper's tensor memory accelerator (the nvgpu dialect) -> ``ptx``.

- ``nvgpu.tensor_map`` -> ``ptx.tensor_map_param`` (and thread 0's ``prefetch.tensormap``):
  its operands must be kernel parameters, constants, or parameters times or over
  constants, so the launcher can make the map from the arguments;
- the barrier and copy ops -> ``ptx.asm``: ``mbarrier.init`` / ``inval`` (thread 0, with
  ``fence.mbarrier_init`` so the copies see initialized barriers), ``mbarrier.arrive.
  expect_tx``, ``cp.async.bulk.tensor`` (coordinates innermost first, as TMA counts
  dimensions) and a ``mbarrier.try_wait.parity`` loop;
- ``nvgpu.tma_store`` -> ``cp.async.bulk.tensor`` from shared to global memory in a bulk
  group, ``nvgpu.tma_store_wait`` -> ``cp.async.bulk.commit_group`` and ``wait_group.read``.

A barrier is 8 bytes of shared memory: barrier ``stage`` of ``bars`` is at
``bars + 8 stage``.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, MemRefType, i32
from xdsl.ir import BlockArgument, SSAValue

from backends.ptx.lower_core import BYTES, Lowering, dtype, lowers, unsupported
from dialects import nvgpu, ptx


def _entry(lo: Lowering, op: nvgpu.TensorMapOp, v: SSAValue) -> tuple[int, int, int]:
    """``v`` as a tensor map recipe entry ``(i, scale, divisor)``: kernel parameter ``i``
    (-1: none, so 1) times ``scale``, divided by ``divisor``: a parameter, a constant, or
    a parameter multiplied or divided by a constant."""
    if isinstance(v, BlockArgument) and v.block is lo.kernel.body.block:
        return (v.index, 1, 1)
    owner = v.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr) \
            and owner.value.value.data >= 0:
        return (-1, owner.value.value.data, 1)
    if isinstance(owner, arith.MuliOp | arith.DivUIOp):
        (i, scale, div), (j, c, one) = (_entry(lo, op, x) for x in owner.operands)
        if j == -1 and one == 1 and c > 0:
            return (i, scale * c, div) if isinstance(owner, arith.MuliOp) else (i, scale, div * c)
    raise unsupported(op, "a tensor map of a value that is not a kernel parameter")


@lowers(nvgpu.TensorMapOp)
def tensor_map(lo: Lowering, op: nvgpu.TensorMapOp) -> SSAValue:
    maps = [o for o in lo.kernel.walk() if isinstance(o, nvgpu.TensorMapOp)]
    base = _entry(lo, op, op.base)
    if base[0] < 0:
        raise unsupported(op, "a tensor map of a pointer that is not a kernel parameter")
    recipe = {"base": base[0], "dtype": dtype(op.base.type.pointee),  # pyright: ignore
              "sizes": [x for v in op.sizes for x in _entry(lo, op, v)],
              "strides": [x for v in op.strides for x in _entry(lo, op, v)],
              "box": list(op.box.get_values()), "swizzle": op.swizzle.value.data}
    address = lo.value(ptx.TensorMapParamOp(maps.index(op), recipe))
    # thread 0 has the map fetched now, not at the first copy
    lo.emit(ptx.AsmOp("setp.eq.u32 {p}, {1}, 0;@{p} prefetch.tensormap [{0}]",
                      [address, lo.value(ptx.SRegOp("%tid.x"))]))
    return address


def _barrier(lo: Lowering, bars: SSAValue, stage: SSAValue) -> SSAValue:
    """The shared address of barrier ``stage``."""
    return lo.inst("mad.lo.s32", [lo.values[stage], lo.const(nvgpu.BARRIER_BYTES, "i32"),
                                  lo.values[bars]], i32)


def _each_barrier(lo: Lowering, bars: SSAValue, instruction: str) -> None:
    """``instruction`` (``{1}`` the barrier's address) on every barrier, by thread 0."""
    t = bars.type
    assert isinstance(t, MemRefType)
    steps = "".join(f"@{{p}} {instruction.replace('{1}', f'{{1}}+{nvgpu.BARRIER_BYTES * i}')};"
                    for i in range(t.get_shape()[0]))
    tid = lo.value(ptx.SRegOp("%tid.x"))
    lo.emit(ptx.AsmOp(f"setp.eq.u32 {{p}}, {{0}}, 0;{steps}", [tid, lo.values[bars]]))


@lowers(nvgpu.MbarrierInitOp)
def mbarrier_init(lo: Lowering, op: nvgpu.MbarrierInitOp) -> None:
    _each_barrier(lo, op.bars, f"mbarrier.init.shared::cta.b64 [{{1}}], {op.arrivals.value.data}")
    lo.emit(ptx.PlainOp("fence.mbarrier_init.release.cluster"))


@lowers(nvgpu.MbarrierInvalOp)
def mbarrier_inval(lo: Lowering, op: nvgpu.MbarrierInvalOp) -> None:
    _each_barrier(lo, op.bars, "mbarrier.inval.shared::cta.b64 [{1}]")


@lowers(nvgpu.MbarrierExpectOp)
def mbarrier_expect(lo: Lowering, op: nvgpu.MbarrierExpectOp) -> None:
    lo.emit(ptx.AsmOp(f"@{{0}} mbarrier.arrive.expect_tx.shared::cta.b64 _, [{{1}}], "
                      f"{op.bytes.value.data}",
                      [lo.values[op.pred], _barrier(lo, op.bars, op.stage)]))


@lowers(nvgpu.TmaLoadOp)
def tma_load(lo: Lowering, op: nvgpu.TmaLoadOp) -> None:
    dst = _shared_address(lo, op.buffer, op.index)
    coords = [lo.values[c] for c in reversed(op.coords)]  # innermost first
    n = len(coords)
    inner = ", ".join(f"{{{4 + i}}}" for i in range(n))
    lo.emit(ptx.AsmOp(
        f"@{{0}} cp.async.bulk.tensor.{n}d.shared::cluster.global.tile.mbarrier::"
        f"complete_tx::bytes [{{1}}], [{{2}}, {{{inner}}}], [{{3}}]",
        [lo.values[op.pred], dst, lo.values[op.map], _barrier(lo, op.bars, op.stage),
         *coords]))


@lowers(nvgpu.MbarrierWaitOp)
def mbarrier_wait(lo: Lowering, op: nvgpu.MbarrierWaitOp) -> None:
    lo.emit(ptx.AsmOp("{label}:;mbarrier.try_wait.parity.shared::cta.b64 {p}, [{0}], {1};"
                      "@!{p} bra {label}",
                      [_barrier(lo, op.bars, op.stage), lo.values[op.phase]]))


def _shared_address(lo: Lowering, buffer: SSAValue, index: SSAValue) -> SSAValue:
    """The shared address of element ``index`` of ``buffer``."""
    size = BYTES[dtype(buffer.type.element_type)]  # pyright: ignore
    return lo.inst("mad.lo.s32", [lo.values[index], lo.const(size, "i32"), lo.values[buffer]],
                   i32)


@lowers(nvgpu.TmaStoreOp)
def tma_store(lo: Lowering, op: nvgpu.TmaStoreOp) -> None:
    coords = [lo.values[c] for c in reversed(op.coords)]  # innermost first
    inner = ", ".join(f"{{{3 + i}}}" for i in range(len(coords)))
    lo.emit(ptx.AsmOp(
        f"@{{0}} cp.async.bulk.tensor.{len(coords)}d.global.shared::cta.bulk_group "
        f"[{{2}}, {{{inner}}}], [{{1}}]",
        [lo.values[op.pred], _shared_address(lo, op.buffer, op.index), lo.values[op.map],
         *coords]))


@lowers(nvgpu.TmaStoreWaitOp)
def tma_store_wait(lo: Lowering, op: nvgpu.TmaStoreWaitOp) -> None:
    lo.emit(ptx.AsmOp("@{0} cp.async.bulk.commit_group;@{0} cp.async.bulk.wait_group.read 0",
                      [lo.values[op.pred]]))
