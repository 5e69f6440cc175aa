"""Part of tile-to-simt: ``tile.dot`` (tile IR with layouts) -> SIMT IR, the portable path
on FMA units (CUDA cores, WGSL): shared-memory staging and register blocking. A result
layout with a lowering of its own in ``DOT_LOWERINGS`` (``#tile.mma``: ``lower_mma_dot``,
version 3 ``lower_wgmma_dot``) goes there instead.

The result's layout (``assign_layouts.dot_layout``) gives each thread a block of rows and
columns of the product; its accumulator vector is that block, row-major. Every thread
writes its elements of ``a`` and ``b`` to shared memory (``a`` transposed, k-major, so
both operands are read along a row of the buffer), then one ``scf.for`` over k, carrying
the accumulator, reads the A values of the thread's rows and the B values of its columns
(two ``simt.shared_load`` of short vectors), spreads them over the block with
``vector.shuffle`` and accumulates with one ``math.fma`` (integers: ``muli`` + ``addi``).
The code is the same few ops for any tile size.

Operands are widened to the accumulator's type before they are written (f16/bf16 -> f32,
i8 -> i32), so the loop does no conversions and shared memory never holds 8-bit values;
f32 travels as i32 bits (the buffer ``lower_shapes`` uses too). ``tf32`` rounds each f32
operand to 10 mantissa bits (nearest, ties away) on the way in; ``tf32x3`` is computed as
``ieee``, which is at least as accurate. When ``a`` and ``b`` together exceed
``SHARED_CHUNK`` elements, an outer ``scf.for`` moves them ``kc`` rows of k at a time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from xdsl.dialects import arith, math, scf, vector
from xdsl.dialects.builtin import (
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float32Type,
    IntegerType,
    TensorType,
    VectorType,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from compiler.context import source_loc
from compiler.errors import CompileError
from compiler.passes.axis_info import bits_of
from compiler.passes.layouts import (
    DimMap,
    element_ids,
    lane_map,
    num_threads,
    per_thread_shape,
)
from compiler.passes.lower_shapes import SHARED_CHUNK, _index, padded_strides
from compiler.passes.simt_lowering import Lowering, lowers
from dialects import simt, tile
from dialects.arith_shaped import ExtSIOp
from dialects.tile import MmaLayoutAttr, element_type, like

# (result layout class, version) -> its dot lowering, where not FMAs (feature modules
# register here; the version of a ``#tile.mma``, else 0)
DOT_LOWERINGS: dict[tuple[type[Attribute], int], Callable[[Lowering, tile.DotOp], None]] = {}
TF32_HALF, TF32_KEEP = 0x1000, -0x2000  # half of the 13 dropped bits; the kept bits
F32_ABS, F32_INF = 0x7FFFFFFF, 0x7F800000


@dataclass(frozen=True)
class _Plan:
    """Where a dot's operands go in shared memory: per k, a row of ``row_a`` (M, padded)
    elements of A then, after all ``kc`` rows of A, rows of ``row_b`` (N) of B."""

    k: int
    kc: int  # rows of k per trip through shared memory
    row_a: int
    row_b: int

    @property
    def b_offset(self) -> int:
        return self.kc * self.row_a

    @property
    def size(self) -> int:
        return self.kc * (self.row_a + self.row_b)


def plan(m: int, n: int, k: int) -> _Plan:
    """A is stored transposed, so its rows are padded against bank conflicts of the
    (usually row-major) threads writing it; B keeps its orientation."""
    row_a = padded_strides([k, m])[0]
    kc = k
    while kc > 1 and kc * (row_a + n) > SHARED_CHUNK:
        kc //= 2
    return _Plan(k, kc, row_a, n)


class At:
    """Builds ops at one insertion point with the dot's source location; constants go to
    ``hoist`` (in front of the dot) when building inside a loop."""

    def __init__(self, point: InsertPoint, loc: Attribute, hoist: At | None = None):
        self.point, self.loc, self.hoist = point, loc, hoist

    def inside(self, body: Block) -> At:
        """A builder at the end of ``body`` that hoists constants where this one does."""
        return At(InsertPoint.at_end(body), self.loc, self.hoist or self)

    def __call__(self, new: Operation) -> SSAValue:
        new.location = self.loc
        Rewriter.insert_op(new, self.point)
        return new.results[0] if new.results else None  # pyright: ignore[reportReturnType]

    def const(self, value: int, t: Attribute = i32) -> SSAValue:
        if self.hoist is not None:
            return self.hoist.const(value, t)
        if isinstance(t, VectorType):
            return self(arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(t, [value])))
        return self(arith.ConstantOp.from_int_and_width(value, t))  # pyright: ignore


@lowers(tile.DotOp)
def lower_dot(lo: Lowering, op: tile.DotOp) -> None:
    """Replace ``op`` by staging through shared memory and a k loop of FMAs (registered
    with tile-to-simt)."""
    a_t, b_t, acc_t = lo.operand_types[op]
    assert isinstance(a_t, TensorType) and isinstance(b_t, TensorType)
    assert isinstance(acc_t, TensorType)
    if acc_t.encoding != op.result.type.encoding:
        raise CompileError("tile.dot accumulator and result need one layout (run "
                           "assign-layouts)", source_loc(op))
    layout = acc_t.encoding
    version = layout.version.data if isinstance(layout, MmaLayoutAttr) else 0
    special = DOT_LOWERINGS.get((type(layout), version))
    if special is not None:
        special(lo, op)
        return
    (m, k), n = a_t.get_shape(), b_t.get_shape()[1]
    p = plan(m, n, k)
    at = At(InsertPoint.before(op), op.location)
    acc_elem = element_type(acc_t)
    a = _staged(at, op.a, acc_elem, op.input_precision.data)
    b = _staged(at, op.b, acc_elem, op.input_precision.data)
    buf = lo.shared_buffer(element_type(a.type), p.size, op)
    stores = (_store(lo, op, a, a_t, [1, p.row_a], 0, p),
              _store(lo, op, b, b_t, [p.row_b, 1], p.b_offset, p))
    reads = _reads(lo, op, acc_t, p, bits_of(element_type(a.type)))
    trips = p.k // p.kc
    if trips == 1:
        stores = tuple(st._replace(index=add_offset(lo, op, st.index, st.offset), offset=0)
                       for st in stores)
        lo.replace(op, _trip(at, p, buf, stores, None, op.acc, reads))
        return
    body = Block(arg_types=[i32, op.acc.type])
    inner = at.inside(body)
    inner(scf.YieldOp(_trip(inner, p, buf, stores, body.args[0], body.args[1], reads)))
    loop = scf.ForOp(at.const(0), at.const(trips), at.const(1), [op.acc], body)
    lo.replace(op, at(loop))


def _staged(at: At, v: SSAValue, acc_elem: Attribute, precision: str) -> SSAValue:
    """An operand's per-thread vector as shared memory holds it: in the accumulator's
    type, f32 as its i32 bits (rounded to tf32 for ``tf32``)."""
    if isinstance(acc_elem, IntegerType):
        if element_type(v.type) != acc_elem:
            v = at(ExtSIOp(v, like(v.type, acc_elem)))
        return v
    if element_type(v.type) != acc_elem:
        v = at(arith.ExtFOp(v, like(v.type, acc_elem)))
    if not isinstance(acc_elem, Float32Type):
        return v
    bits = at(arith.BitcastOp(v, like(v.type, i32)))
    return round_tf32(at, bits) if precision == "tf32" else bits


def round_tf32(at: At, bits: SSAValue) -> SSAValue:
    """Round f32 bit patterns to tf32: add half of the dropped bits to the magnitude (the
    carry rounds ties away from zero) and clear them; NaNs stay as they are."""
    t = bits.type
    rounded = at(arith.AndIOp(at(arith.AddiOp(bits, at.const(TF32_HALF, t))),
                              at.const(TF32_KEEP, t)))
    nan = at(tile.CmpIOp("sgt", at(arith.AndIOp(bits, at.const(F32_ABS, t))),
                         at.const(F32_INF, t)))
    return at(tile.SelectOp(nan, bits, rounded))


def shared_vec(ids: np.ndarray, offsets: list[int], bits: int) -> int:
    """The ``vec`` of a shared-memory access of ``bits``-bit elements ``ids`` (threads x
    lanes) plus each of ``offsets``: how many consecutive lanes of every thread are
    consecutive elements, the first a multiple of their count (a power of two, at most
    128 bits), so that with the buffer's 16-byte alignment they are one access."""
    vec = min(ids.shape[1], 128 // bits)
    while vec > 1:
        runs = ids.reshape(len(ids), -1, vec)
        if ((runs == runs[..., :1] + np.arange(vec)).all() and not (runs[..., 0] % vec).any()
                and not any(o % vec for o in offsets)):
            return vec
        vec //= 2
    return 1


def add_offset(lo: Lowering, op: Operation, at: SSAValue, offset: int) -> SSAValue:
    """``at + offset``, in the prologue (thread-id arithmetic)."""
    if not offset:
        return at
    return lo.prologue_op(arith.AddiOp(at, lo.prologue_op(arith.ConstantOp(
        DenseIntOrFPElementsAttr.from_list(at.type, [offset])), op)), op)


def _coords(lo: Lowering, op: Operation, dm: DimMap, lanes: list[int]) -> SSAValue:
    """The thread's part of ``dm`` plus per-lane ``lanes``: the positions of its rows
    or columns, as a vector, in the prologue."""
    vt = VectorType(i32, [len(lanes)])
    coords = lo.prologue_op(arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(vt, lanes)),
                            op)
    part = lo.thread_part(dm, op)
    if part is None:
        return coords
    return lo.prologue_op(arith.AddiOp(coords, lo.prologue_op(
        vector.BroadcastOp(part, vt), op)), op)


@dataclass(frozen=True)
class _Reads:
    """What a thread reads per k: the shared-memory positions of its rows of A (within a
    row of A^T) and of its columns of B (offset by B's start), vectors in the prologue."""

    a_at: SSAValue
    b_at: SSAValue
    a_vec: int  # lanes per shared-memory access
    b_vec: int

    def spread(self, of_a: bool) -> list[int]:
        """Shuffle mask from the loaded values to the row-major block: an A value is
        used across the thread's columns, a B value down its rows."""
        nr = self.a_at.type.get_shape()[0]  # pyright: ignore[reportAttributeAccessIssue]
        nc = self.b_at.type.get_shape()[0]  # pyright: ignore[reportAttributeAccessIssue]
        return [i if of_a else j for i in range(nr) for j in range(nc)]


def _reads(lo: Lowering, op: Operation, acc_t: TensorType, p: _Plan, bits: int) -> _Reads:
    """The positions of the thread's rows and columns, and how many of them one access
    reads (a row of k starts at a multiple of the row length)."""
    rows, cols = lane_map(acc_t.encoding, acc_t.get_shape())
    nc = per_thread_shape(acc_t.encoding, acc_t.get_shape())[1]
    tid = np.arange(num_threads(acc_t.encoding))[:, None]
    sides = (rows, list(rows.lanes[::nc]), 0, p.row_a), (cols, list(cols.lanes[:nc]),
                                                          p.b_offset, p.row_b)
    at_a, at_b = (_coords(lo, op, dm, [offset + x for x in lanes])
                  for dm, lanes, offset, _ in sides)
    vec_a, vec_b = (shared_vec(dm.thread_part(tid) + np.asarray(lanes), [offset, row], bits)
                    for dm, lanes, offset, row in sides)
    return _Reads(at_a, at_b, vec_a, vec_b)


class Store(NamedTuple):
    """An operand's trip to shared memory: ``value`` at ``index + offset``, ``row``
    elements per k, ``vec`` lanes per access."""

    value: SSAValue
    index: SSAValue
    row: int
    offset: int
    vec: int


def _store(lo: Lowering, op: Operation, v: SSAValue, t: TensorType, weights: list[int],
           offset: int, p: _Plan) -> Store:
    """Staging ``v`` (tile type ``t``) at ``sum(coord * weight)``; a row is k's weight (the
    other weight is 1). A trip starts at a multiple of ``kc`` rows, which must keep the
    accesses aligned too."""
    row = max(weights)
    vec = shared_vec(element_ids(t.encoding, t.get_shape(), weights), [offset, p.kc * row],
                     bits_of(element_type(v.type)))
    return Store(v, _index(lo, op, (t, weights)), row, offset, vec)


def _trip(at: At, p: _Plan, buf: SSAValue, stores: tuple[Store, ...],
          trip: SSAValue | None, acc: SSAValue, reads: _Reads) -> SSAValue:
    """One trip through shared memory: write k rows ``trip * kc ..`` of A and B (all of
    them when ``trip`` is None), barrier, the k loop, barrier; the new accumulator."""
    for value, index, row, offset, vec in stores:
        if trip is None:
            at(simt.SharedStoreOp(buf, index, value, vec=vec))
            continue
        # this trip's elements, by an unsigned compare of the index less its start
        start = at(arith.MuliOp(trip, at.const(p.kc * row)))
        shifted = at(arith.SubiOp(index, at(vector.BroadcastOp(start, index.type))))
        inside = at(tile.CmpIOp("ult", shifted, at.const(p.kc * row, index.type)))
        if offset:
            shifted = at(arith.AddiOp(shifted, at.const(offset, index.type)))
        at(simt.SharedStoreOp(buf, shifted, value, inside, vec))
    at(simt.BarrierOp())
    body = Block(arg_types=[i32, acc.type])
    step = at.inside(body)
    kk, carried = body.args
    spread = [_read(step, buf, step(arith.MuliOp(kk, step.const(row))), where, vec,
                    reads.spread(of_a), element_type(acc.type))
              for row, where, vec, of_a in ((p.row_a, reads.a_at, reads.a_vec, True),
                                            (p.row_b, reads.b_at, reads.b_vec, False))]
    step(scf.YieldOp(_accumulate(step, *spread, carried)))
    result = at(scf.ForOp(at.const(0), at.const(p.kc), at.const(1), [acc], body))
    at(simt.BarrierOp())
    return result


def _accumulate(at: At, a: SSAValue, b: SSAValue, acc: SSAValue) -> SSAValue:
    """``acc + a * b`` lane by lane, fused for floats."""
    if isinstance(element_type(acc.type), IntegerType):
        return at(arith.AddiOp(at(arith.MuliOp(a, b)), acc))
    return at(math.FmaOp(a, b, acc))


def _read(at: At, buf: SSAValue, start: SSAValue, where: SSAValue, vec: int,
          mask: list[int], elem: Attribute) -> SSAValue:
    """An operand's values at ``start + where`` (a row of k), ``vec`` per access, spread
    by ``mask``."""
    start = at(vector.BroadcastOp(start, where.type))
    got = at(simt.SharedLoadOp(buf, at(arith.AddiOp(start, where)), vec))
    if element_type(got.type) != elem:  # f32 travels as its bits
        got = at(arith.BitcastOp(got, like(got.type, elem)))
    if mask == list(range(got.type.get_shape()[0])):  # pyright: ignore[reportAttributeAccessIssue]
        return got
    return at(vector.ShuffleOp(got, got, DenseArrayBase.from_list(i64, mask),
                               result_type=VectorType(elem, [len(mask)])))
