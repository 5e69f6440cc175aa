"""Part of tile-to-simt: shared-memory stages filled by asynchronous copies (tile IR with
layouts, from ``pipeline-loads``) -> SIMT IR.

- ``tile.shared_alloc`` -> one ``simt.shared_alloc`` of all its stages, rows one after
  another (``row_len`` elements each), or 128-byte swizzled (1024-byte aligned, each
  thread's copies placed by the same bit arithmetic as ``swizzled_row`` and the atoms);
- ``tile.async_copy`` -> ``simt.cp_async``: each thread copies its own elements of the
  tile (its lanes under the pointer tile's layout) into the stage, ``vec`` lanes (4, 8 or
  16 bytes) a copy; an access narrower than 4 bytes, which ``cp.async`` cannot make, is a
  ``simt.load`` and ``simt.shared_store`` instead (the wait's barrier orders it all the same);
- ``tile.async_commit`` / ``tile.async_wait`` -> ``simt.cp_async_commit`` /
  ``simt.cp_async_wait`` and ``simt.barrier`` (after a ``simt.fence_proxy_async`` where
  swizzled stages are read by ``wgmma``, through the async proxy);
- ``tile.shared_read`` feeding only tensor-core dots (directly, or a warpgroup dot
  through a transpose) is left to them (``lower_mma_dot`` reads the stage with
  ``ldmatrix``: ``Lowering.views``); anywhere else each thread reads
  its elements with ``simt.shared_load``.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects import arith, vector
from xdsl.dialects.builtin import (
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    MemRefType,
    TensorType,
    i64,
)
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import Rewriter

from compiler.passes.axis_info import bits_of
from compiler.passes.layouts import element_ids, ilog2
from compiler.passes.lower_dot import shared_vec
from compiler.passes.lower_shapes import _index, wgmma_operand
from compiler.passes.simt_lowering import Lowering, lowers
from dialects import simt, tile
from dialects.tile import MmaLayoutAttr, like
from dialects.tile.async_copy import SWIZZLE_BYTES, WARPGROUP, swizzled_place

CP_ASYNC_BITS = (32, 64, 128)  # the sizes one cp.async copies


def _stage_shape(lo: Lowering, op: Operation, index: int) -> tuple[int, int]:
    """Rows and row length of a stage of ``op``'s buffer operand ``index``."""
    t = lo.operand_types[op][index]
    assert isinstance(t, MemRefType)
    _, rows, row_len = t.get_shape()
    return rows, row_len


def _stage_start(lo: Lowering, op: Operation, stage: SSAValue, size: int) -> SSAValue:
    """The element where ``stage`` starts: ``stage * size``."""
    return lo.emit(arith.MuliOp(stage, lo.const(size, op)), op)


def _weights(t: TensorType, row_len: int) -> list[int]:
    """Each dimension's stride in a stage of rows of ``row_len``: a 1-D tile is one row."""
    return [row_len, 1][-len(t.get_shape()):]


SWIZZLED_ALIGN = 1024  # bytes: the 8-row period of the 128-byte swizzle


@lowers(tile.SharedAllocOp)
def _alloc(lo: Lowering, op: tile.SharedAllocOp) -> None:
    t = op.result.type
    stages, rows, row_len = t.get_shape()
    size = stages * rows * row_len
    align = 0 if op.swizzle is None else SWIZZLED_ALIGN
    buffer = lo.prologue_op(simt.SharedAllocOp(t.element_type, size, align), op)
    if op.swizzle is not None:
        lo.swizzled[buffer] = 0 if op.warps is None else op.warps.value.data
        lo.async_proxy |= not _read_by_ldmatrix(op)
    lo.replace(op, buffer)


def _read_by_ldmatrix(op: tile.SharedAllocOp) -> bool:
    """Whether only ``mma.sync`` dots read ``op``'s stages (with ``ldmatrix``, not through
    the async proxy as wgmma does)."""
    reads = [u.operation for u in op.result.uses if isinstance(u.operation, tile.SharedReadOp)]
    return all(isinstance(u.operation, tile.DotOp)
               and isinstance(enc := u.operation.result.type.encoding, MmaLayoutAttr)
               and enc.version.data == 2
               for r in reads for u in r.result.uses)


def _places(lo: Lowering, op: Operation, t: TensorType, buffer: SSAValue,
            shape: tuple[int, int], start: SSAValue) -> SSAValue:
    """Each lane's element of ``buffer``, whose stage of ``shape`` starts at ``start``: its
    place in the stage (swizzled, or rows one after another) plus ``start``."""
    rows, row_len = shape
    if buffer in lo.swizzled:
        bits = bits_of(buffer.type.element_type)  # pyright: ignore[reportAttributeAccessIssue]
        warps = lo.swizzled[buffer]
        index = swizzled_index(lo, op, t, rows, warps, bits)
        row, col = (element_ids(t.encoding, t.get_shape(), w) for w in ([1, 0], [0, 1]))
        numbers = np.vectorize(lambda r, c: swizzled_place(r, c, rows, warps, bits))(row, col)
    else:
        index = _index(lo, op, (t, _weights(t, row_len)))
        numbers = element_ids(t.encoding, t.get_shape(), _weights(t, row_len))
    placed = lo.emit(arith.AddiOp(index, lo.emit(vector.BroadcastOp(start, index.type), op)),
                     op)
    return _from_few(lo, op, placed, numbers)


def _from_few(lo: Lowering, op: Operation, placed: SSAValue, numbers: np.ndarray) -> SSAValue:
    """``placed`` (whose lanes hold ``numbers[thread]`` plus one value) as few of its lanes
    plus constants: a lane that is another's plus the same number in every thread is made
    so. Each stage's places are then a base per group and immediate offsets, which ptxas
    folds into the copies' addresses, instead of one register (and one add a stage) a
    lane."""
    picks, offsets, bases = [], [], []
    for lane in range(numbers.shape[1]):
        for base in bases:  # "another's plus a constant" holds within groups of lanes
            step = numbers[:, lane] - numbers[:, base]
            if (step == step[0]).all():
                break
        else:
            base, step = lane, np.zeros(1, np.int64)
            bases.append(lane)
        picks.append(base)
        offsets.append(int(step[0]))
    if picks == list(range(len(picks))):
        return placed
    t = placed.type
    few = lo.emit(vector.ShuffleOp(placed, placed, DenseArrayBase.from_list(i64, picks),
                                      result_type=t), op)
    steps = lo.emit(arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(t, offsets)), op)
    return lo.emit(arith.AddiOp(few, steps), op)


def swizzled_index(lo: Lowering, op: Operation, t: TensorType, rows: int, warps: int,
                   bits: int) -> SSAValue:
    """Each lane's element in a 128-byte-swizzled stage: its row (permuted as
    ``tile.async_copy.swizzled_row`` for ``warps``) in the atom of its column, its 16-byte
    chunk XORed with the row's place in its 8."""
    row, col = (_index(lo, op, (t, w)) for w in ([1, 0], [0, 1]))

    def apply(cls, x: SSAValue, value: int) -> SSAValue:
        c = arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(x.type, [value]))
        return lo.prologue_op(cls(x, lo.prologue_op(c, op)), op)

    def field(shift: int, width: int, to: int) -> SSAValue:
        """``row`` bits ``[shift, shift + width)`` moved to bit ``to``."""
        x = apply(arith.AndIOp, apply(arith.ShRUIOp, row, shift), (1 << width) - 1)
        return apply(arith.ShLIOp, x, to)

    if warps:  # rows r + 8 w + 8 W (2 t + h) -> 64 (t G + g) + 16 w' + 8 h + r
        lw, lg = ilog2(warps), ilog2(warps // WARPGROUP)
        parts = [apply(arith.AndIOp, row, 7), field(3 + lw, 1, 3), field(3, 2, 4),
                 apply(arith.ShLIOp, apply(arith.ShRUIOp, row, 4 + lw), 6 + lg)]
        if lg:
            parts.append(field(5, lg, 6))
        row = parts[0]
        for p in parts[1:]:
            row = lo.prologue_op(arith.OrIOp(row, p), op)
    atom, chunk = 8 * SWIZZLE_BYTES // bits, 128 // bits  # elements
    swizzle = apply(arith.ShLIOp, apply(arith.AndIOp, row, 7), ilog2(chunk))
    inner = lo.prologue_op(arith.XOrIOp(apply(arith.AndIOp, col, atom - 1), swizzle), op)
    outer = apply(arith.MuliOp, apply(arith.ShRUIOp, col, ilog2(atom)), rows * atom)
    placed = lo.prologue_op(arith.AddiOp(apply(arith.MuliOp, row, atom), inner), op)
    return lo.prologue_op(arith.AddiOp(placed, outer), op)


@lowers(tile.AsyncCopyOp)
def _copy(lo: Lowering, op: tile.AsyncCopyOp) -> None:
    ptr_t = lo.operand_types[op][0]
    assert isinstance(ptr_t, TensorType)
    rows, row_len = _stage_shape(lo, op, 1)
    start = _stage_start(lo, op, op.stage, rows * row_len)
    where = _places(lo, op, ptr_t, op.buffer, (rows, row_len), start)
    base, src = lo.access(op)  # pyright: ignore[reportArgumentType]
    elem = op.buffer.type.element_type  # pyright: ignore[reportAttributeAccessIssue]
    bits = bits_of(elem)
    ids = element_ids(ptr_t.encoding, ptr_t.get_shape(), _weights(ptr_t, row_len))
    vec = min(1 if op.vec is None else op.vec.value.data, shared_vec(ids, [row_len], bits))
    if vec * bits in CP_ASYNC_BITS:
        lo.insert(simt.CpAsyncOp(op.buffer, where, base, src, op.mask, vec), op)
    else:
        zero = lo.emit(arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(
            like(where.type, elem), [0])), op)
        value = lo.emit(simt.LoadOp(base, src, op.mask, zero, vec), op)
        lo.insert(simt.SharedStoreOp(op.buffer, where, value, vec=vec), op)
    Rewriter.erase_op(op)


@lowers(tile.AsyncCommitOp)
def _commit(lo: Lowering, op: tile.AsyncCommitOp) -> None:
    lo.insert(simt.CpAsyncCommitOp(), op)
    Rewriter.erase_op(op)


@lowers(tile.AsyncWaitOp)
def _wait(lo: Lowering, op: tile.AsyncWaitOp) -> None:
    lo.insert(simt.CpAsyncWaitOp(op.pending.value.data), op)
    if lo.async_proxy:  # wgmma reads the stages through the async proxy
        lo.insert(simt.FenceProxyAsyncOp(), op)
    lo.insert(simt.BarrierOp(), op)
    Rewriter.erase_op(op)


def _to_tensor_cores(op: tile.SharedReadOp) -> bool:
    """Whether only tensor-core dots read the stage: as an operand, or through a
    transpose (``lower_shapes.wgmma_operand``: a warpgroup dot reads the stage as it is)."""
    return all((isinstance(u.operation, tile.DotOp) and u.index < 2
                and isinstance(u.operation.result.type.encoding, MmaLayoutAttr))
               or (isinstance(u.operation, tile.TransOp) and wgmma_operand(u.operation))
               for u in op.result.uses)


@lowers(tile.SharedReadOp)
def _read(lo: Lowering, op: tile.SharedReadOp) -> None:
    rows, row_len = _stage_shape(lo, op, 0)
    start = _stage_start(lo, op, op.stage, rows * row_len)
    if _to_tensor_cores(op):
        lo.views[op.result] = (op.buffer, start, row_len)
        lo.dead.append(op)
        return
    t = op.result.type
    ids = element_ids(t.encoding, t.get_shape(), _weights(t, row_len))
    vec = shared_vec(ids, [row_len], bits_of(t.element_type))
    where = _places(lo, op, t, op.buffer, (rows, row_len), start)  # swizzling keeps vec
    lo.replace(op, lo.emit(simt.SharedLoadOp(op.buffer, where, vec), op))
