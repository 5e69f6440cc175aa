"""cuTile's element-indexed access: ``ct.gather``, ``ct.scatter`` and the atomics on
arrays (``ct.atomic_add``/``atomic_xchg``/``atomic_cas``, ...).

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
from dialects import tile


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
        if v.is_ptr or not v.dtype.is_int:
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


def _atomic(name: str):
    def handler(cg: CodeGenerator, array: Any, indices: Any, update: Any,
                check_bounds: Any = True, memory_order: Any = None,
                memory_scope: Any = None) -> Value:
        arr = array_arg(cg, array, f"ct.{name}")
        ptr, inside = _pointers(cg, arr, indices, f"ct.{name}", update)
        return getattr(atomic, name)(cg, ptr, update, inside)
    handler.__name__ = handler.__qualname__ = name
    builtin(name)(handler)


for _name in ("atomic_add", "atomic_max", "atomic_min", "atomic_xchg"):
    _atomic(_name)


@builtin("atomic_cas")
def atomic_cas(cg: CodeGenerator, array: Any, indices: Any, expected: Any, desired: Any,
               check_bounds: Any = True, memory_order: Any = None,
               memory_scope: Any = None) -> Value:
    arr = array_arg(cg, array, "ct.atomic_cas")
    ptr, inside = _pointers(cg, arr, indices, "ct.atomic_cas", expected, desired)
    return atomic.atomic_cas(cg, ptr, expected, desired, inside)
