"""Part of tile-to-simt: ``tile.expand_dims``/``broadcast``/``reshape``/``trans``/
``convert_layout`` (tile IR with layouts) -> SIMT IR.

Each op is a data movement: element ``e`` of the result is element ``src(e)`` of the
operand. Numbering elements by ``sum(coord[d] * weight[d])`` on both sides (row-major in
the result's shape, the operand's coordinates mapped there), a thread needs its result
lanes' numbers among the numbers it holds. When every thread finds them at the same lanes
(always for ``expand_dims`` and ``broadcast``, whose operand layout is the result's or its
slice) the op is a ``vector.shuffle`` with a constant mask: register renaming, no code.
Otherwise every thread writes its lanes to shared memory at their numbers and, after a
barrier, reads the numbers it needs; a second barrier lets the buffer be reused. Rows of a
transpose are padded by one element against bank conflicts, f32 and i1 tiles travel as
i32 (one buffer serves a tile and its mask), and tiles over the target's trip size
(``tile-to-simt{shared-trip-bytes}``: 16 KiB on WGSL, 48 KiB on PTX) move in several trips
(``move``), a loop whose code does not grow with them: unrolled, each lane checking every
trip, they took ptxas 27 s for a one-warp 128x64 f32 transpose in 3 trips (1.3 s in one),
and lavapipe three minutes for BlockScaledMatMul's two scale broadcasts in 8 trips each.
Pointer tiles move their element indices the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod

import numpy as np
from xdsl.dialects import arith, scf, vector
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    IntegerType,
    TensorType,
    VectorType,
    f32,
    i32,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

from compiler.passes.layouts import element_ids, lane_map
from compiler.passes.shared_banks import plan_exchange
from compiler.passes.simt_lowering import Lowering, lowers
from dialects import simt, tile
from dialects.arith_shaped import ExtUIOp
from dialects.tile import MmaLayoutAttr, PtrType, element_type, like

ShapeOp = (tile.ExpandDimsOp | tile.BroadcastOp | tile.ReshapeOp | tile.TransOp
           | tile.ConvertLayoutOp)


def strides(shape: Sequence[int]) -> list[int]:
    """Row-major element strides of a shape."""
    return [prod(shape[d + 1:]) for d in range(len(shape))]


def padded_strides(shape: Sequence[int]) -> list[int]:
    """Row-major strides with one element of padding after each row of 32 or more, so
    threads walking down a column of a transpose hit different shared-memory banks."""
    out = strides(shape)
    if len(shape) > 1 and shape[-1] >= 32:
        out = [s // shape[-1] * (shape[-1] + 1) for s in out[:-1]] + [1]
    return out


def weights(op: ShapeOp, src: TensorType) -> tuple[list[int], list[int]]:
    """(operand, result) weights numbering an element the same on both sides (padded where
    the numbers address shared memory and the op only permutes dimensions)."""
    shape = op.result.type.get_shape()
    permutes = isinstance(op, tile.TransOp | tile.ConvertLayoutOp)
    out = padded_strides(shape) if permutes else strides(shape)
    if isinstance(op, tile.ExpandDimsOp):
        axis = op.axis.value.data
        return out[:axis] + out[axis + 1:], out
    if isinstance(op, tile.BroadcastOp):
        stretched = [n != w for n, w in zip(src.get_shape(), op.result.type.get_shape(),
                                            strict=True)]
        return out, [0 if s else w for s, w in zip(stretched, out, strict=True)]
    if isinstance(op, tile.TransOp):
        back = [0] * len(out)
        for i, d in enumerate(op.permutation):
            back[d] = out[i]
        return back, out
    if isinstance(op, tile.ConvertLayoutOp):
        return out, out
    return strides(src.get_shape()), out


@lowers(tile.ExpandDimsOp, tile.BroadcastOp, tile.ReshapeOp, tile.TransOp,
        tile.ConvertLayoutOp)
def lower_shape(lo: Lowering, op: ShapeOp) -> None:
    """Replace ``op`` by its data movement (registered with tile-to-simt); a transpose
    read only by warpgroup dots moves nothing (``Lowering.transposed``)."""
    src_t, dst_t = lo.operand_types[op][0], op.result.type
    if isinstance(op, tile.TransOp) and wgmma_operand(op):
        lo.transposed[op.result] = (op.src, src_t)
        lo.dead.append(op)
        return
    src_w, dst_w = weights(op, src_t)
    if isinstance(element_type(src_t), PtrType):
        base, idx = lo.trace(op.src, op)
        if idx is not None:
            idx = _move(lo, op, idx, (like(src_t, i32), src_w), (like(dst_t, i32), dst_w))
        lo.ptrs[op.result] = (base, idx)
        lo.dead.append(op)
        return
    lo.replace(op, _move(lo, op, op.src, (src_t, src_w), (dst_t, dst_w)))


def wgmma_operand(op: tile.TransOp) -> bool:
    """Whether every use of the 2-D transpose ``op`` is A or B of a warpgroup
    (``#tile.mma`` version 3) dot: those read the source where it is staged, or store it
    as it is, B K-major and A transposed into registers by ``ldmatrix``."""
    uses = list(op.result.uses)
    return len(op.result.type.get_shape()) == 2 and bool(uses) and all(
        isinstance(u.operation, tile.DotOp) and u.index < 2
        and isinstance(layout := u.operation.result.type.encoding, MmaLayoutAttr)
        and layout.version.data == 3 for u in uses)


Side = tuple[TensorType, Sequence[int]]  # a tile type and the weights of its coordinates


def _ids(side: Side) -> np.ndarray:
    t, w = side
    return element_ids(t.encoding, t.get_shape(), w)


def _move(lo: Lowering, op: Operation, value: SSAValue, src: Side, dst: Side) -> SSAValue:
    dst_ids = _ids(dst)
    mask = shuffle_mask(_ids(src), dst_ids)
    if mask is None:
        return _through_shared(lo, op, value, src, dst, int(dst_ids.max()) + 1)
    if mask == list(range(value.type.get_shape()[0])):
        return value
    return lo.lanes(value, mask, op)


def shuffle_mask(src: np.ndarray, dst: np.ndarray) -> list[int] | None:
    """Lanes ``mask`` with ``src[t, mask[j]] == dst[t, j]`` for every thread ``t``, or
    None. Equal numbers within a thread are equal coordinates, so thread 0 proposes."""
    first: dict[int, int] = {}
    for k, i in enumerate(src[0].tolist()):
        first.setdefault(i, k)
    mask = [first.get(i, -1) for i in dst[0].tolist()]
    if -1 in mask or not (src[:, mask] == dst).all():
        return None
    return mask


SHARED_CHUNK = 4096
"""Most elements the shared-memory staging of FMA dots and gathers holds (16 KiB of 32-bit
values: what WebGPU guarantees a workgroup)."""


def _through_shared(lo: Lowering, op: Operation, value: SSAValue, src: Side, dst: Side,
                    size: int) -> SSAValue:
    """Store by the operand's numbers, barrier, load by the result's, barrier. Tiles of
    32-bit floats and of bools (which shared memory cannot hold) travel as i32, so a tile
    and its mask share one buffer. A layout conversion numbers its buffer and sizes its
    accesses by ``plan_exchange``; trips hold whole accesses of both sides."""
    elem = element_type(value.type)
    value = to_word(lo, op, value)
    word = element_type(value.type)
    vecs = (1, 1)
    if isinstance(op, tile.ConvertLayoutOp):
        plan = plan_exchange(src[0], dst[0], word.bitwidth // 8)  # pyright: ignore
        src, dst = (src[0], plan.weights), (dst[0], plan.weights)
        vecs = (plan.src_vec, plan.dst_vec)
        size = int(_ids(dst).max()) + 1
    per_trip = lo.trip_words * 4 // held_bytes(lo, word)
    trips = -(-size // per_trip)
    chunk = -(-size // trips)
    chunk = -(-chunk // max(vecs)) * max(vecs)
    buf = lo.shared_buffer(word, chunk, op)
    (out,) = move(lo, op, buf, [(value, _index(lo, op, src))], [_index(lo, op, dst)], chunk,
                  trips, vecs)
    return from_word(lo, op, out, elem)


def held_bytes(lo: Lowering, elem: Attribute) -> int:
    """The bytes shared memory takes for an element of type ``elem``: its size where the
    target packs narrow ones, else at least a 32-bit word."""
    size = elem.bitwidth // 8  # pyright: ignore[reportAttributeAccessIssue]
    return size if lo.narrow_shared else max(4, size)


def move(lo: Lowering, op: Operation, buf: SSAValue, stores: Sequence[tuple[SSAValue, SSAValue]],
         loads: Sequence[SSAValue], chunk: int, trips: int,
         vecs: tuple[int, int] = (1, 1)) -> list[SSAValue]:
    """Each value of ``stores`` written to ``buf`` at its lanes' numbers, a barrier, each
    of ``loads`` (lanes' numbers) read back, a barrier, ``vecs`` lanes an access (stores',
    loads'); where the numbers span ``trips`` buffers of ``chunk``, a loop over the trips
    in which a lane writes, and keeps what it reads, in the trip holding its number (both
    found in the prologue)."""
    store_vec, load_vec = vecs
    if trips == 1:
        for value, at in stores:
            lo.insert(simt.SharedStoreOp(buf, at, value, vec=store_vec), op)
        lo.insert(simt.BarrierOp(), op)
        outs = [lo.emit(simt.SharedLoadOp(buf, at, vec=load_vec), op) for at in loads]
        lo.insert(simt.BarrierOp(), op)
        return outs
    word = buf.type.element_type  # pyright: ignore[reportAttributeAccessIssue]
    sides = [_trip_and_place(lo, op, at, chunk) for _, at in stores]
    wanted = [_trip_and_place(lo, op, at, chunk) for at in loads]
    body = Block(arg_types=[i32, *(like(place.type, word) for _, place in wanted)])
    trip, kept = body.args[0], body.args[1:]

    def add(new: Operation) -> SSAValue:
        new.location = op.location
        body.add_op(new)
        return new.results[0] if new.results else None  # pyright: ignore[reportReturnType]

    def this_trip(which: SSAValue) -> SSAValue:
        return add(tile.CmpIOp("eq", which, add(vector.BroadcastOp(trip, which.type))))

    for (value, _), (which, place) in zip(stores, sides, strict=True):
        add(simt.SharedStoreOp(buf, place, value, this_trip(which), vec=store_vec))
    add(simt.BarrierOp())
    outs = [add(tile.SelectOp(this_trip(which),
                              add(simt.SharedLoadOp(buf, place, vec=load_vec)), old))
            for (which, place), old in zip(wanted, kept, strict=True)]
    add(simt.BarrierOp())
    add(scf.YieldOp(*outs))
    zeros = [lo.emit(arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(a.type, [0])), op)
             for a in kept]
    loop = scf.ForOp(lo.const(0, op), lo.const(trips, op), lo.const(1, op), zeros, body)
    lo.insert(loop, op)
    return list(loop.results)


def _trip_and_place(lo: Lowering, op: Operation, at: SSAValue,
                    chunk: int) -> tuple[SSAValue, SSAValue]:
    """Per lane, the trip holding number ``at`` and its index in that trip's buffer
    (thread-id arithmetic, so in the prologue)."""
    size = lo.prologue_op(arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(
        at.type, [chunk])), op)
    return (lo.prologue_op(arith.DivUIOp(at, size), op),
            lo.prologue_op(arith.RemUIOp(at, size), op))


def to_word(lo: Lowering, op: Operation, value: SSAValue) -> SSAValue:
    """``value`` as shared memory holds it: f32 and i1 as i32, others as they are."""
    elem = element_type(value.type)
    wide = like(value.type, i32)
    if elem == IntegerType(1):
        return lo.emit(ExtUIOp(value, wide), op)
    if elem == f32:
        return lo.emit(arith.BitcastOp(value, wide), op)
    return value


def from_word(lo: Lowering, op: Operation, value: SSAValue, elem: Attribute) -> SSAValue:
    """The inverse of ``to_word`` for elements of type ``elem``."""
    if elem == IntegerType(1):
        return lo.emit(tile.CmpIOp("ne", value, lo.const(0, op, value.type)), op)
    if elem == f32:
        return lo.emit(arith.BitcastOp(value, like(value.type, f32)), op)
    return value


def _index(lo: Lowering, op: Operation, side: Side) -> SSAValue:
    """Each lane's element number as a ``vector<K x i32>``: thread-id arithmetic (in the
    kernel's prologue, it depends on nothing else) plus per-lane constants."""
    t, w = side
    maps = lane_map(t.encoding, t.get_shape())
    vt = VectorType(i32, [len(maps[0].lanes)])
    lanes = sum((np.asarray(dm.lanes) * k for dm, k in zip(maps, w, strict=True)),
                np.zeros(len(maps[0].lanes), np.int64))
    index = lo.prologue_op(arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(
        vt, lanes.tolist())), op)
    thread: SSAValue | None = None
    for dm, k in zip(maps, w, strict=True):
        part = lo.thread_part(dm, op) if k else None
        if part is None:
            continue
        if k != 1:
            part = lo.prologue_op(arith.MuliOp(part, lo.prologue_op(
                arith.ConstantOp.from_int_and_width(k, 32), op)), op)
        thread = part if thread is None else lo.prologue_op(arith.AddiOp(thread, part), op)
    if thread is None:
        return index
    return lo.prologue_op(arith.AddiOp(index, lo.prologue_op(
        vector.BroadcastOp(thread, vt), op)), op)
