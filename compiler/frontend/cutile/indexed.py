"""cuTile's element-indexed access: ``ct.gather``, ``ct.scatter`` and the atomics on
arrays (``ct.atomic_add``/``atomic_and``/``atomic_xchg``/``atomic_cas``, ...), with
cuTile's ``memory_order`` and ``memory_scope`` (``ct.MemoryOrder``, ``ct.MemoryScope``:
``BLOCK`` is the CTA's scope, ``DEVICE`` the GPU's).

The indices (one integer tile or scalar per array dimension, broadcast together; a tile
alone for a 1-D array) address single elements, so these become pointer tiles
``base + sum_d index_d * stride_d`` with the mask ``0 <= index_d < shape_d`` directly,
through Triton's load, store and atomic handlers: out-of-range elements read as the
padding value (zero) and are not written.
"""

from __future__ import annotations

from typing import Any

import compiler.language as tl
from compiler.frontend import operators as ops
from compiler.frontend.codegen import CodeGenerator
from compiler.frontend.cutile.arrays import Array, array_arg, checked_store_value
from compiler.frontend.cutile.table import builtin
from compiler.frontend.triton import atomic, memory
from compiler.frontend.values import Value, broadcast_shapes, cast, splat
from compiler.tile._enums import MemoryOrder, MemoryScope
from dialects import tile
from dialects.tile.atomic import DEFAULT_SCOPE, DEFAULT_SEM


def _pointers(cg: CodeGenerator, arr: Array, indices: Any, what: str,
              *operands: Any) -> tuple[Value, Value]:
    """The pointer tile and in-bounds mask of ``arr[indices]``, in the shape shared by
    the indices and ``operands``."""
    items = tuple(indices) if isinstance(indices, tuple | list) else (indices,)
    if len(items) != arr.ndim:
        cg.fail(f"{what}: an array of rank {arr.ndim} needs {arr.ndim} index tiles, "
                f"got {len(items)}")
    idx = []
    for i in items:
        v = ops.materialize(cg.b, i, tl.int32, ()) if not isinstance(i, Value) else i
        if v.is_ptr or not v.dtype.is_int():
            cg.fail(f"{what}: indices must be integers, got {v.describe()}")
        idx.append(v if v.dtype is tl.int32 else cast(cg.b, v, tl.int32))
    shape = broadcast_shapes(*(v.shape for v in (*idx, *operands) if isinstance(v, Value)))
    offset = mask = None
    for d, i in enumerate(idx):
        i = splat(cg.b, i, shape)
        inside = ops.compare(cg.b, "lt", cast(cg.b, i, tl.uint32),
                             cast(cg.b, arr.shape[d], tl.uint32))
        term = ops.binary(cg.b, "mul", i, arr.strides[d])
        offset = term if offset is None else ops.binary(cg.b, "add", offset, term)
        mask = inside if mask is None else ops.binary(cg.b, "and", mask, inside)
    ptr = splat(cg.b, arr.base, shape)
    op = tile.AddPtrOp(ptr.ssa, splat(cg.b, offset, shape).ssa)
    return cg.b.value(op, arr.dtype, shape, True), splat(cg.b, mask, shape)


@builtin("gather")
def gather(cg: CodeGenerator, array: Any, indices: Any, padding_value: Any = 0,
           check_bounds: Any = True, latency: Any = None, mask: Any = None) -> Value:
    arr = array_arg(cg, array, "ct.gather")
    ptr, inside = _pointers(cg, arr, indices, "ct.gather")
    if mask is not None:
        inside = ops.binary(cg.b, "and", inside, ops.to_bool(cg.b, mask))
    return memory.load(cg, ptr, inside, padding_value)


@builtin("scatter")
def scatter(cg: CodeGenerator, array: Any, indices: Any, value: Any,
            check_bounds: Any = True, latency: Any = None, mask: Any = None) -> None:
    arr = array_arg(cg, array, "ct.scatter")
    checked_store_value(cg, value, arr, "ct.scatter")
    ptr, inside = _pointers(cg, arr, indices, "ct.scatter", value)
    if mask is not None:
        inside = ops.binary(cg.b, "and", inside, ops.to_bool(cg.b, mask))
    memory.store(cg, ptr, value, inside)


_ORDERS = {"relaxed": "relaxed", "acquire": "acquire", "release": "release",
           "acq_rel": "acq_rel"}
_SCOPES = {"block": "cta", "device": "gpu", "sys": "sys"}


def _order(cg: CodeGenerator, memory_order: Any, memory_scope: Any,
           what: str) -> dict[str, str]:
    """cuTile's ``memory_order``/``memory_scope`` as the atomic's ``sem``/``scope``."""
    sem = _ORDERS.get(getattr(memory_order, "value", None))
    scope = _SCOPES.get(getattr(memory_scope, "value", None))
    if sem is None:
        cg.fail(f"{what}: memory_order must be ct.MemoryOrder.RELAXED, ACQUIRE, RELEASE or "
                f"ACQ_REL, got {memory_order!r}")
    if scope is None:
        cg.fail(f"{what}: memory_scope must be ct.MemoryScope.BLOCK, DEVICE or SYS, got "
                f"{memory_scope!r}")
    # Triton's defaults are cuTile's (acq_rel at the GPU's scope): the op keeps only others
    return {k: v for k, v, default in (("sem", sem, DEFAULT_SEM),
                                       ("scope", scope, DEFAULT_SCOPE)) if v != default}


def _atomic(name: str):
    def handler(cg: CodeGenerator, array: Any, indices: Any, update: Any,
                check_bounds: Any = True, memory_order: Any = MemoryOrder.ACQ_REL,
                memory_scope: Any = MemoryScope.DEVICE) -> Value:
        what = f"ct.{name}"
        arr = array_arg(cg, array, what)
        order = _order(cg, memory_order, memory_scope, what)
        ptr, inside = _pointers(cg, arr, indices, what, update)
        return getattr(atomic, name)(cg, ptr, update, inside, **order)
    handler.__name__ = handler.__qualname__ = name
    builtin(name)(handler)


for _name in ("atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or",
              "atomic_xor", "atomic_xchg"):
    _atomic(_name)


@builtin("atomic_cas")
def atomic_cas(cg: CodeGenerator, array: Any, indices: Any, expected: Any, desired: Any,
               check_bounds: Any = True, memory_order: Any = MemoryOrder.ACQ_REL,
               memory_scope: Any = MemoryScope.DEVICE) -> Value:
    """The old values; ``expected`` where an index is outside the array (cuTile's)."""
    arr = array_arg(cg, array, "ct.atomic_cas")
    order = _order(cg, memory_order, memory_scope, "ct.atomic_cas")
    ptr, inside = _pointers(cg, arr, indices, "ct.atomic_cas", expected, desired)
    old = atomic.atomic_cas(cg, ptr, expected, desired, inside, **order)
    return ops.select(cg.b, inside, old, expected)
