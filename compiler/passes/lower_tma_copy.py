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
  16-bit columns (one 128-byte swizzle atom) by all the stage's rows (by one element
  along the leading dimensions of an array of 3 to 5). Where the rows are permuted for
  a warpgroup dot (``tile.async_copy.swizzled_row``), a tile of whole blocks of 16 W
  rows inside the array is one 5-D box whose dimensions follow the permutation (one per
  block, of a 3-D array); any other (at the array's end, or of 4-D and 5-D arrays) goes
  in boxes of 8 rows, each landing where the permutation puts it;
- ``tile.barrier_wait`` -> ``nvgpu.mbarrier_wait`` and ``simt.barrier`` (a stage is
  refilled only once every thread is done with what it held);
- ``tile.tma_store`` -> after a barrier (the buffer's earlier readers are done), every
  thread's ``simt.shared_store`` of its elements into a buffer swizzled as a stage is (so
  the 16-byte chunks of a warp's rows fall in different banks), fenced for the async
  proxy, a barrier, and thread 0's ``nvgpu.tma_store`` of each atom-wide box of all the
  rows and its ``nvgpu.tma_store_wait``, in an ``scf.if``.
"""

from __future__ import annotations

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr, MemRefType, TensorType, i32
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import Rewriter

from compiler.passes.axis_info import bits_of
from compiler.passes.layouts import element_ids
from compiler.passes.lower_async_copy import SWIZZLED_ALIGN, swizzled_index
from compiler.passes.lower_dot import shared_vec
from compiler.passes.simt_lowering import Lowering, lowers
from dialects import nvgpu, simt, tile
from dialects.tile.async_copy import SWIZZLE_BYTES, swizzled_row

PERMUTED_BOX_ROWS = 8  # rows a permutation keeps together
PERMUTED_MAX_LEAD = 1  # leading dimensions a permuted box has room for (of 5)


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


def _tensor_map(lo: Lowering, op: tile.TmaCopyOp | tile.TmaStoreOp, sizes: list[SSAValue],
                strides: list[SSAValue], box: tuple[int, ...]) -> SSAValue:
    """The map of ``op``'s array seen with ``sizes`` and ``strides``, read in ``box``es;
    one per kernel, at its top (the values are parameters, or made from them there)."""
    key = (op.base, *sizes, *strides, box)
    if key not in lo.tensor_maps:
        sizes, strides = ([_at_top(lo, op, v) for v in values] for values in (sizes, strides))
        lo.tensor_maps[key] = lo.prologue_op(nvgpu.TensorMapOp(
            op.base, sizes, strides, box, SWIZZLE_BYTES), op)
    return lo.tensor_maps[key]


def _at_top(lo: Lowering, op: Operation, v: SSAValue) -> SSAValue:
    """``v`` where the top of the kernel may use it: a constant made there again (the
    kernel's own come after the ops put there); a parameter or a value made there as it
    is."""
    owner = v.owner
    if isinstance(owner, arith.ConstantOp):
        return lo.prologue_op(arith.ConstantOp(owner.value, v.type), op)
    return v


class _Copy:
    """The lowering of one ``tile.tma_copy``: thread 0's ops, built into lists that
    become ``scf.if`` regions (the other threads branch around them)."""

    def __init__(self, lo: Lowering, op: tile.TmaCopyOp):
        self.lo, self.op = lo, op
        position = 1 + len(op.sizes) + len(op.strides) + len(op.starts)  # of the buffer
        buffer_t = lo.operand_types[op][position]  # the stages, before lowering
        assert isinstance(buffer_t, MemRefType)
        _, self.rows, self.row_len = buffer_t.get_shape()
        self.bits = bits_of(buffer_t.element_type)
        self.atom = 8 * SWIZZLE_BYTES // self.bits  # elements of a row in one atom
        self.warps = lo.swizzled[op.buffer]
        self.pred = lo.emit(arith.AndIOp(_thread_zero(lo, op), op.live), op)
        # the leading dimensions' coordinates (the tile is one element long there)
        *self.lead, self.row0, self.col0 = op.starts

    def const(self, value: int) -> SSAValue:
        return self.lo.const(value, self.op)

    def prologue_const(self, value: int) -> SSAValue:
        return self.lo.prologue_op(arith.ConstantOp(IntegerAttr(value, i32)), self.op)

    def scaled(self, cls: type[arith.MuliOp | arith.DivUIOp], x: SSAValue, c: int) -> SSAValue:
        """``x`` times or over ``c``, at the top of the kernel (with the tensor maps)."""
        x = _at_top(self.lo, self.op, x)
        return self.lo.prologue_op(cls(x, self.prologue_const(c)), self.op)

    def add(self, ops: list[Operation], new: Operation) -> SSAValue:
        new.location = self.op.location
        ops.append(new)
        return new.results[0] if new.results else self.pred

    def load(self, ops: list[Operation], tensor_map: SSAValue, coords: list[SSAValue],
             at: SSAValue) -> None:
        op = self.op
        self.add(ops, nvgpu.TmaLoadOp(tensor_map, coords, op.buffer, at, op.bars, op.stage,
                                      self.pred))

    def boxes(self, ops: list[Operation], stage: SSAValue, box_rows: int) -> None:
        """The tile as boxes of ``box_rows`` rows by one atom, each where the stage
        keeps those rows (``swizzled_row`` for permuted rows)."""
        op, ones = self.op, (1,) * len(self.lead)
        tensor_map = _tensor_map(self.lo, op, list(op.sizes), list(op.strides),
                                 (*ones, box_rows, self.atom))
        for a in range(self.row_len // self.atom):
            col = self.add(ops, arith.AddiOp(self.col0, self.const(a * self.atom)))
            for r in range(0, self.rows, box_rows):
                row = self.add(ops, arith.AddiOp(self.row0, self.const(r))) if r else self.row0
                placed = swizzled_row(r, self.warps) if self.warps else r
                at = self.add(ops, arith.AddiOp(
                    stage, self.const((a * self.rows + placed) * self.atom)))
                self.load(ops, tensor_map, [*self.lead, row, col], at)

    def permuted_box(self, ops: list[Operation], stage: SSAValue) -> None:
        """The tile (whole blocks of 16 W rows of the array) in boxes whose dimensions
        follow the permutation: row ``r + 8 w + 8 W h + 16 W t`` of the array seen as
        dimensions (t, w, h, r), whose box lands in the stage in the order (t, w, h, r):
        the rows ``swizzled_row`` permutes to. Of a 2-D array, one 5-D box per atom. A
        leading dimension leaves no room for t: the array is seen as (lead, w, 2 t + h,
        r), in one box per block and atom."""
        op, w, block = self.op, self.warps, 16 * self.warps
        (m, k), (ld, unit) = op.sizes[-2:], op.strides[-2:]
        if self.lead:
            head = op.sizes[0], op.strides[0]
            groups, box_head, copies = self.scaled(arith.DivUIOp, m, 8 * w), 1, self.rows // block
            first = self.add(ops, arith.DivUIOp(self.row0, self.const(8 * w)))
        else:
            head = self.scaled(arith.DivUIOp, m, block), self.scaled(arith.MuliOp, ld, block)
            groups, box_head, copies = self.prologue_const(2), self.rows // block, 1
            first = self.add(ops, arith.DivUIOp(self.row0, self.const(block)))
        sizes = [head[0], self.prologue_const(w), groups, self.prologue_const(8), k]
        strides = [head[1], self.scaled(arith.MuliOp, ld, 8), self.scaled(arith.MuliOp, ld, 8 * w),
                   ld, unit]
        tensor_map = _tensor_map(self.lo, op, sizes, strides, (box_head, w, 2, 8, self.atom))
        zero = self.const(0)
        for a in range(self.row_len // self.atom):
            col = self.add(ops, arith.AddiOp(self.col0, self.const(a * self.atom)))
            for t in range(copies):
                at = self.add(ops, arith.AddiOp(
                    stage, self.const((a * self.rows + t * block) * self.atom)))
                if self.lead:
                    group = self.add(ops, arith.AddiOp(first, self.const(2 * t))) if t else first
                    coords = [*self.lead, zero, group, zero, col]
                else:
                    coords = [first, zero, zero, zero, col]
                self.load(ops, tensor_map, coords, at)

    def whole_blocks(self, ops: list[Operation]) -> SSAValue:
        """Whether the tile's rows are whole blocks of 16 W rows of the array, all in it:
        ``row0 % 16 W == 0`` and ``0 <= row0``, ``row0 + rows <= M - M % 16 W``."""
        m, row0, block = self.op.sizes[-2], self.row0, self.const(16 * self.warps)
        aligned = self.add(ops, tile.CmpIOp("eq", self.add(ops, arith.RemUIOp(row0, block)),
                                            self.const(0)))
        rows_in = self.add(ops, arith.SubiOp(m, self.add(ops, arith.RemUIOp(m, block))))
        end = self.add(ops, arith.AddiOp(row0, self.const(self.rows)))
        inside = self.add(ops, arith.AndIOp(
            self.add(ops, tile.CmpIOp("sge", row0, self.const(0))),
            self.add(ops, tile.CmpIOp("sle", end, rows_in))))
        return self.add(ops, arith.AndIOp(aligned, inside))

    def lower(self) -> None:
        op, issue = self.op, []
        stage = self.add(issue, arith.MuliOp(op.stage, self.const(self.rows * self.row_len)))
        self.add(issue, nvgpu.MbarrierExpectOp(op.bars, op.stage, self.pred,
                                               self.rows * self.row_len * self.bits // 8))
        if self.warps and len(self.lead) <= PERMUTED_MAX_LEAD:
            whole, by_block, by_rows = self.whole_blocks(issue), [], []
            self.permuted_box(by_block, stage)
            self.boxes(by_rows, stage, PERMUTED_BOX_ROWS)
            for ops in (by_block, by_rows):
                self.add(ops, scf.YieldOp())
            self.add(issue, scf.IfOp(whole, [], by_block, by_rows))
        else:
            self.boxes(issue, stage, PERMUTED_BOX_ROWS if self.warps else self.rows)
        self.add(issue, scf.YieldOp())
        self.lo.insert(scf.IfOp(self.pred, [], issue), op)
        Rewriter.erase_op(op)


def _thread_zero(lo: Lowering, op: Operation) -> SSAValue:
    """Whether this is thread 0, the one that issues a tile's bulk copies."""
    return lo.emit(tile.CmpIOp("eq", lo.thread_id(op), lo.const(0, op)), op)


@lowers(tile.TmaCopyOp)
def _copy(lo: Lowering, op: tile.TmaCopyOp) -> None:
    _Copy(lo, op).lower()


@lowers(tile.TmaStoreOp)
def _store(lo: Lowering, op: tile.TmaStoreOp) -> None:
    t = lo.operand_types[op][-1]
    assert isinstance(t, TensorType)
    (rows, cols), bits = t.get_shape(), bits_of(t.element_type)
    atom = 8 * SWIZZLE_BYTES // bits
    buf = lo.prologue_op(simt.SharedAllocOp(t.element_type, rows * cols, SWIZZLED_ALIGN), op)
    index = swizzled_index(lo, op, t, rows, 0, bits)
    ids = element_ids(t.encoding, t.get_shape(), [cols, 1])
    lo.insert(simt.BarrierOp(), op)
    # a vector stays within one 16-byte chunk: the swizzle moves chunks, not elements
    lo.insert(simt.SharedStoreOp(buf, index, op.value,
                                 vec=min(shared_vec(ids, [0], bits), 128 // bits)), op)
    lo.insert(simt.FenceProxyAsyncOp(), op)
    lo.insert(simt.BarrierOp(), op)
    pred = _thread_zero(lo, op)
    *lead, row0, col0 = op.starts  # one element long along the leading dimensions
    tensor_map = _tensor_map(lo, op, list(op.sizes), list(op.strides),
                             ((1,) * len(lead) + (rows, atom)))
    issue = []

    def add(new: Operation) -> Operation:
        new.location = op.location
        issue.append(new)
        return new

    for a in range(cols // atom):  # box a: columns a * atom onwards, all the rows
        col = add(arith.AddiOp(col0, lo.const(a * atom, op))).results[0] if a else col0
        add(nvgpu.TmaStoreOp(tensor_map, [*lead, row0, col], buf, lo.const(a * rows * atom, op),
                             pred))
    add(nvgpu.TmaStoreWaitOp(pred))
    add(scf.YieldOp())
    lo.insert(scf.IfOp(pred, [], issue), op)
    Rewriter.erase_op(op)
