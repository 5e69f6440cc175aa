"""Part of tile-to-simt: stages filled by TMA (tile IR from ``pipeline-loads``) -> SIMT IR
with the nvgpu dialect.

- ``tile.barrier_alloc`` -> ``simt.shared_alloc`` of 8-byte words, made barriers by
  ``nvgpu.mbarrier_init`` between two ``simt.barrier`` (nobody still uses the words;
  everybody sees them initialized); ``tile.barrier_release`` -> ``simt.barrier`` and
  ``nvgpu.mbarrier_inval``;
- ``tile.tma_copy`` -> thread 0's ``nvgpu.mbarrier_expect`` of the tile's bytes and the
  ``nvgpu.tma_load`` of its boxes, in an ``scf.if`` (the other threads branch around
  them rather than step through them predicated off), from one ``nvgpu.tensor_map`` per array and box shape
  (built at the top of the kernel: its operands are kernel parameters). A box is 64
  16-bit columns (one 128-byte swizzle atom) by all the stage's rows, or by 8 rows where
  the rows are permuted for a warpgroup dot (``tile.async_copy.swizzled_row``): each group
  of 8 lands where that permutation puts it;
- ``tile.barrier_wait`` -> ``nvgpu.mbarrier_wait`` and ``simt.barrier`` (a stage is
  refilled only once every thread is done with what it held).
"""

from __future__ import annotations

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import Rewriter

from compiler.passes.axis_info import bits_of
from compiler.passes.simt_lowering import Lowering, lowers
from dialects import nvgpu, simt, tile
from dialects.tile.async_copy import SWIZZLE_BYTES, swizzled_row

PERMUTED_BOX_ROWS = 8  # rows a permutation keeps together


@lowers(tile.BarrierAllocOp)
def _alloc(lo: Lowering, op: tile.BarrierAllocOp) -> None:
    t = op.result.type
    assert isinstance(t, MemRefType)
    bars = lo.prologue_op(simt.SharedAllocOp(t.element_type, t.get_shape()[0],
                                             nvgpu.BARRIER_BYTES), op)
    lo.insert(simt.BarrierOp(), op)
    lo.insert(nvgpu.MbarrierInitOp(bars, op.arrivals.value.data), op)
    lo.insert(simt.BarrierOp(), op)
    lo.replace(op, bars)


@lowers(tile.BarrierReleaseOp)
def _release(lo: Lowering, op: tile.BarrierReleaseOp) -> None:
    lo.insert(simt.BarrierOp(), op)
    lo.insert(nvgpu.MbarrierInvalOp(op.bars), op)
    Rewriter.erase_op(op)


@lowers(tile.BarrierWaitOp)
def _wait(lo: Lowering, op: tile.BarrierWaitOp) -> None:
    lo.insert(nvgpu.MbarrierWaitOp(op.bars, op.stage, op.phase), op)
    lo.insert(simt.BarrierOp(), op)
    Rewriter.erase_op(op)


def _tensor_map(lo: Lowering, op: tile.TmaCopyOp, box: tuple[int, int]) -> SSAValue:
    """The map of ``op``'s array read in ``box``es, one per kernel."""
    key = (op.base, *op.sizes, *op.strides, box)
    if key not in lo.tensor_maps:
        lo.tensor_maps[key] = lo.prologue_op(nvgpu.TensorMapOp(
            op.base, list(op.sizes), list(op.strides), box, SWIZZLE_BYTES), op)
    return lo.tensor_maps[key]


@lowers(tile.TmaCopyOp)
def _copy(lo: Lowering, op: tile.TmaCopyOp) -> None:
    position = 1 + len(op.sizes) + len(op.strides) + len(op.starts)  # of the buffer
    buffer_t = lo.operand_types[op][position]  # the stages, before lowering
    assert isinstance(buffer_t, MemRefType)
    _, rows, row_len = buffer_t.get_shape()
    bits = bits_of(buffer_t.element_type)
    atom = 8 * SWIZZLE_BYTES // bits  # elements of a row in one swizzle atom
    warps = lo.swizzled[op.buffer]
    box_rows = PERMUTED_BOX_ROWS if warps else rows
    tensor_map = _tensor_map(lo, op, (box_rows, atom))
    first = lo.emit(tile.CmpIOp("eq", lo.thread_id(op), lo.const(0, op)), op)
    pred = lo.emit(arith.AndIOp(first, op.live), op)
    issue: list[Operation] = []  # thread 0's work, branched around by the others

    def add(new: Operation) -> SSAValue:
        new.location = op.location
        issue.append(new)
        return new.results[0] if new.results else pred

    stage = add(arith.MuliOp(op.stage, lo.const(rows * row_len, op)))
    add(nvgpu.MbarrierExpectOp(op.bars, op.stage, pred, rows * row_len * bits // 8))
    row0, col0 = op.starts
    for a in range(row_len // atom):
        col = add(arith.AddiOp(col0, lo.const(a * atom, op)))
        for r in range(0, rows, box_rows):
            row = add(arith.AddiOp(row0, lo.const(r, op))) if r else row0
            placed = swizzled_row(r, warps) if warps else r
            at = add(arith.AddiOp(stage, lo.const((a * rows + placed) * atom, op)))
            add(nvgpu.TmaLoadOp(tensor_map, [row, col], op.buffer, at, op.bars, op.stage,
                                pred))
    add(scf.YieldOp())
    lo.insert(scf.IfOp(pred, [], issue), op)
    Rewriter.erase_op(op)
