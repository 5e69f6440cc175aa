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

from xdsl.dialects import arith

from compiler.errors import UnsupportedError
from compiler.passes.simt_lowering import Lowering, lowers
from dialects import simt, tile

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
        old = lo.share(op, old, owner)
    lo.replace(op, old)


def _strides(shape: tuple[int, ...]) -> list[int]:
    return [prod(shape[d + 1:]) for d in range(len(shape))]
