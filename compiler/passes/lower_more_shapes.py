"""Part of tile-to-simt: ``tile.join``/``split``/``flip``/``extract``/``gather`` (tile IR
with layouts) -> SIMT IR.

``join``, ``split`` and ``flip`` are data movements like those of ``lower_shapes``: every
element gets a number, ``sum(coord[d] * weight[d]) + offset``, equal on the side that
holds it and the side that wants it. ``join(a, b)`` numbers ``a``'s elements ``2e`` and
``b``'s ``2e + 1`` (``e`` row-major in the operands' shape), which is row-major in the
result's; ``split`` numbers the other way round; ``flip`` numbers the flipped dimension
backwards (weight ``-stride``, offset ``(n - 1) * stride``); ``extract`` numbers its
window by the operand's strides, offset by the window's first element. Where each thread
holds the numbers it needs, the op is one ``vector.shuffle`` of its operands' registers
(the column halves of a dot's result, which keep its layout, are); otherwise the operands
go to shared memory by their numbers and the results come back by theirs, as in
``lower_shapes`` (several trips for large tiles).

``gather`` stores its source the same way and then loads, per result lane, the number its
index names (clamped to the axis): a load at run-time addresses, one trip only, so the
source is limited to ``SHARED_CHUNK`` elements.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects import arith, vector
from xdsl.dialects.builtin import (
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    TensorType,
    VectorType,
    i32,
    i64,
)
from xdsl.ir import Operation, SSAValue

from compiler.context import source_loc
from compiler.errors import UnsupportedError
from compiler.passes.layouts import element_ids
from compiler.passes.lower_shapes import (
    SHARED_CHUNK,
    _index,
    from_word,
    move,
    shuffle_mask,
    strides,
    to_word,
)
from compiler.passes.simt_lowering import Lowering, lowers
from dialects import simt, tile
from dialects.arith_shaped import ExtSIOp, TruncIOp
from dialects.tile import PtrType, element_type

Side = tuple[TensorType, Sequence[int], int]  # a tile type, its weights and offset


def _ids(side: Side) -> np.ndarray:
    t, w, offset = side
    return element_ids(t.encoding, t.get_shape(), w) + offset


def _at(lo: Lowering, op: Operation, side: Side) -> SSAValue:
    """Each lane's number as a ``vector<K x i32>`` (thread-id arithmetic: the prologue)."""
    t, w, offset = side
    at = _index(lo, op, (t, w))
    if not offset:
        return at
    shift = lo.prologue_op(arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(
        at.type, [offset])), op)
    return lo.prologue_op(arith.AddiOp(at, shift), op)


def exchange(lo: Lowering, op: Operation, stores: Sequence[tuple[SSAValue, Side]],
             loads: Sequence[Side]) -> list[SSAValue]:
    """The values ``loads`` describe, made of the (one or two) values ``stores`` hold."""
    src = np.concatenate([_ids(side) for _, side in stores], axis=1)
    masks = [shuffle_mask(src, _ids(side)) for side in loads]
    values = [v for v, _ in stores]
    if None not in masks:
        first, second = values[0], values[-1]
        elem = element_type(first.type)
        return [lo.emit(vector.ShuffleOp(first, second, DenseArrayBase.from_list(i64, m),
                                         result_type=VectorType(elem, [len(m)])), op)
                for m in masks if m is not None]
    return _through_shared(lo, op, stores, loads)


def _through_shared(lo: Lowering, op: Operation, stores: Sequence[tuple[SSAValue, Side]],
                    loads: Sequence[Side]) -> list[SSAValue]:
    """Every store by its numbers, a barrier, every load by its numbers, a barrier; in as
    many trips as the numbers need."""
    elem = element_type(stores[0][0].type)
    words = [to_word(lo, op, v) for v, _ in stores]
    size = max(int(_ids(side).max()) for side in [*loads, *(s for _, s in stores)]) + 1
    trips = -(-size // SHARED_CHUNK)
    chunk = -(-size // trips)
    buf = lo.shared_buffer(element_type(words[0].type), chunk, op)
    outs = move(lo, op, buf, [(word, _at(lo, op, side)) for word, (_, side) in
                              zip(words, stores, strict=True)],
                [_at(lo, op, side) for side in loads], chunk, trips)
    return [from_word(lo, op, out, elem) for out in outs]


def _row_major(t: TensorType, scale: int = 1) -> list[int]:
    return [s * scale for s in strides(t.get_shape())]


def _refuse_pointers(op: Operation, t: TensorType) -> None:
    if isinstance(element_type(t), PtrType):
        raise UnsupportedError(f"{op.name} of pointer tiles", source_loc(op))


@lowers(tile.JoinOp)
def lower_join(lo: Lowering, op: tile.JoinOp) -> None:
    a_t, b_t = lo.operand_types[op]
    _refuse_pointers(op, a_t)
    w = _row_major(a_t, 2)
    (out,) = exchange(lo, op, [(op.lhs, (a_t, w, 0)), (op.rhs, (b_t, w, 1))],
                      [(op.result.type, _row_major(op.result.type), 0)])
    lo.replace(op, out)


@lowers(tile.SplitOp)
def lower_split(lo: Lowering, op: tile.SplitOp) -> None:
    (src_t,) = lo.operand_types[op]
    _refuse_pointers(op, src_t)
    lhs_t, rhs_t = op.lhs.type, op.rhs.type
    lhs, rhs = exchange(lo, op, [(op.src, (src_t, _row_major(src_t), 0))],
                        [(lhs_t, _row_major(lhs_t, 2), 0), (rhs_t, _row_major(rhs_t, 2), 1)])
    op.lhs.replace_all_uses_with(lhs)
    op.rhs.replace_all_uses_with(rhs)
    lo.dead.append(op)


@lowers(tile.FlipOp)
def lower_flip(lo: Lowering, op: tile.FlipOp) -> None:
    (src_t,) = lo.operand_types[op]
    _refuse_pointers(op, src_t)
    d, shape = op.dim.value.data, src_t.get_shape()
    w = _row_major(src_t)
    back = [-s if k == d else s for k, s in enumerate(w)]
    (out,) = exchange(lo, op, [(op.src, (src_t, w, 0))],
                      [(op.result.type, back, (shape[d] - 1) * w[d])])
    lo.replace(op, out)


@lowers(tile.ExtractOp)
def lower_extract(lo: Lowering, op: tile.ExtractOp) -> None:
    (src_t,) = lo.operand_types[op]
    _refuse_pointers(op, src_t)
    w = _row_major(src_t)
    start = sum(o * s for o, s in zip(op.start, w, strict=True))
    (out,) = exchange(lo, op, [(op.src, (src_t, w, 0))], [(op.result.type, w, start)])
    lo.replace(op, out)


@lowers(tile.GatherOp)
def lower_gather(lo: Lowering, op: tile.GatherOp) -> None:
    src_t = lo.operand_types[op][0]
    _refuse_pointers(op, src_t)
    n, axis = src_t.get_shape(), op.axis.value.data
    if np.prod(n) > SHARED_CHUNK:
        raise UnsupportedError(f"tile.gather (tl.gather, tl.sort) from more than "
                               f"{SHARED_CHUNK} elements", source_loc(op))
    w, word = _row_major(src_t), to_word(lo, op, op.src)
    buf = lo.shared_buffer(element_type(word.type), int(np.prod(n)), op)
    lo.insert(simt.SharedStoreOp(buf, _at(lo, op, (src_t, w, 0)), word, None), op)
    lo.insert(simt.BarrierOp(), op)
    others = _at(lo, op, (op.result.type, [0 if k == axis else s for k, s in enumerate(w)], 0))
    index = _clamped(lo, op, op.index, n[axis])
    picked = arith.MuliOp(index, lo.const(w[axis], op, others.type))
    at = lo.emit(arith.AddiOp(others, lo.emit(picked, op)), op)
    got = lo.emit(simt.SharedLoadOp(buf, at), op)
    lo.insert(simt.BarrierOp(), op)
    lo.replace(op, from_word(lo, op, got, element_type(src_t)))


def _clamped(lo: Lowering, op: Operation, index: SSAValue, n: int) -> SSAValue:
    """``index`` as i32 lanes clamped to ``0 .. n - 1`` (clamped before narrowing i64)."""
    t = index.type
    width = element_type(t).width.data  # pyright: ignore[reportAttributeAccessIssue]
    wide = VectorType(i32, t.get_shape())
    if width < 32:
        index = lo.emit(ExtSIOp(index, wide), op)
    index = lo.emit(arith.MaxSIOp(index, lo.const(0, op, index.type)), op)
    index = lo.emit(arith.MinSIOp(index, lo.const(n - 1, op, index.type)), op)
    if width > 32:
        index = lo.emit(TruncIOp(index, wide), op)
    return index

