"""Part of tile-to-simt: ``tile.atomic_rmw``/``tile.atomic_cas`` (tile IR with layouts) ->
``simt.atomic_rmw``/``simt.atomic_cas`` (SIMT IR), one atomic per element, keeping the
op's ``sem`` and ``scope``.

Each element must be updated exactly once, but several threads hold the same element
where a layout is wider than its tile (``DimMap.wraps``), along a dimension a
``#tile.slice`` removed, and for scalars (every thread holds them). So only the element's
owner, the lowest thread (and lane) holding it, performs the atomic: the other holders'
lanes are masked off. Where the old values are used, the owners write them to shared
memory and, after a barrier, every holder reads its elements back, so replicas return
the owner's old value too (masked-off elements return 0 everywhere). The ``sem`` of an
atomic done by its owner alone orders the owner's accesses; the other threads' accesses
are ordered around it by barriers, as in Triton: that read-back barrier after an
acquire, a ``tl.debug_barrier()`` before a release.
"""

from __future__ import annotations

from math import prod

import numpy as np
from xdsl.dialects import arith, func, vector
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType, VectorType, i32
from xdsl.ir import Attribute, SSAValue

from compiler.errors import UnsupportedError
from compiler.passes.layouts import lane_map
from compiler.passes.simt_lowering import Lowering, lowers
from dialects import simt, tile
from dialects.tile import element_type

AtomicOp = tile.AtomicRMWOp | tile.AtomicCASOp


@lowers(tile.AtomicRMWOp, tile.AtomicCASOp)
def lower_atomic(lo: Lowering, op: AtomicOp) -> None:
    """Replace ``op`` by its SIMT atomic (registered with tile-to-simt)."""
    base, index = lo.access(op)
    owner = lo.owner_mask(op, op.result.type, index.type)
    if owner is False:
        raise UnsupportedError(f"atomics on tiles of layout {op.result.type} are not "
                               "supported: its replicas are not a pattern of thread-id bits")
    mask = op.mask
    if owner is not None:
        mask = owner if mask is None else lo.emit(arith.AndIOp(mask, owner), op)
    order = {k: a.data for k in ("sem", "scope") if (a := op.properties.get(k)) is not None}
    if isinstance(op, tile.AtomicRMWOp):
        new = simt.AtomicRMWOp(op.kind.data, base, index, op.val, mask, **order)
    else:
        new = simt.AtomicCASOp(base, index, op.cmp, op.val, mask, **order)
    old = lo.emit(new, op)
    if owner is not None and op.result.first_use is not None:
        old = _share(lo, op, old, owner)
    lo.replace(op, old)


def _strides(shape: tuple[int, ...]) -> list[int]:
    return [prod(shape[d + 1:]) for d in range(len(shape))]


def _share(lo: Lowering, op: AtomicOp, old: SSAValue, owner: SSAValue) -> SSAValue:
    """Every holder's copy of the owners' old values, through shared memory."""
    t = op.result.type
    size = prod(t.get_shape()) if isinstance(t, TensorType) else 1
    buf = lo.prologue_op(simt.SharedAllocOp(element_type(t), size), op)
    at = _element_index(lo, op, old.type)
    if not isinstance(op.parent_op(), func.FuncOp):
        lo.insert(simt.BarrierOp(), op)  # an earlier iteration may still be reading buf
    lo.insert(simt.SharedStoreOp(buf, at, old, owner), op)
    lo.insert(simt.BarrierOp(), op)
    return lo.emit(simt.SharedLoadOp(buf, at), op)


def _element_index(lo: Lowering, op: AtomicOp, per_thread: Attribute) -> SSAValue:
    """The row-major index in the tile of each lane's element (0 for a scalar)."""
    t = op.result.type
    if not isinstance(t, TensorType):
        return lo.const(0, op)
    shape = t.get_shape()
    lanes = np.zeros(per_thread.get_shape()[0], np.int64)
    base: SSAValue | None = None
    for dm, stride in zip(lane_map(t.encoding, shape), _strides(shape), strict=True):
        lanes += np.asarray(dm.lanes) * stride
        part = lo.thread_part(dm, op)
        if part is None:
            continue
        if stride != 1:
            part = lo.emit(arith.MuliOp(part, lo.const(stride, op)), op)
        base = part if base is None else lo.emit(arith.AddiOp(base, part), op)
    vt = VectorType(i32, per_thread.get_shape())
    offsets = lo.emit(arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(
        vt, lanes.tolist())), op)
    if base is None:
        return offsets
    return lo.emit(arith.AddiOp(lo.emit(vector.BroadcastOp(base, vt), op), offsets), op)
