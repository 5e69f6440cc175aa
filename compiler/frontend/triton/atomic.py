"""Triton's atomics: ``tl.atomic_add/max/min/xchg/cas`` -> ``tile.atomic_rmw`` /
``tile.atomic_cas``.

The pointer, value (and comparand) and mask broadcast together, as in Triton: a scalar
pointer with a tile of values updates one address once per element. Every atomic returns
the old values; the pointed-to parameter counts as written (copied back to NumPy arrays).
"""

from __future__ import annotations

from typing import Any

import compiler.language as tl
from compiler.frontend.codegen import CodeGenerator
from compiler.frontend.operators import materialize
from compiler.frontend.triton.memory import as_mask, check_pointer
from compiler.frontend.triton.table import builtin
from compiler.frontend.values import Value, root_name, splat
from dialects import tile

ATOMIC_DTYPES = (tl.int32, tl.uint32, tl.float32)


@builtin("atomic_add")
def atomic_add(cg: CodeGenerator, pointer: Any, val: Any, mask: Any = None) -> Value:
    return _atomic_rmw(cg, "add", pointer, val, mask)


@builtin("atomic_max")
def atomic_max(cg: CodeGenerator, pointer: Any, val: Any, mask: Any = None) -> Value:
    return _atomic_rmw(cg, "max", pointer, val, mask)


@builtin("atomic_min")
def atomic_min(cg: CodeGenerator, pointer: Any, val: Any, mask: Any = None) -> Value:
    return _atomic_rmw(cg, "min", pointer, val, mask)


@builtin("atomic_xchg")
def atomic_xchg(cg: CodeGenerator, pointer: Any, val: Any, mask: Any = None) -> Value:
    return _atomic_rmw(cg, "xchg", pointer, val, mask)


@builtin("atomic_cas")
def atomic_cas(cg: CodeGenerator, pointer: Any, cmp: Any, val: Any, mask: Any = None) -> Value:
    ptr = _atomic_pointer(cg, pointer, "tl.atomic_cas", cmp, val, mask)
    cmp_v = materialize(cg.b, cmp, ptr.dtype, ptr.shape)
    val_v = materialize(cg.b, val, ptr.dtype, ptr.shape)
    mask_v = as_mask(cg, mask, ptr)
    op = tile.AtomicCASOp(ptr.ssa, cmp_v.ssa, val_v.ssa, mask_v.ssa if mask_v else None)
    return _atomic_result(cg, op, ptr)


def _atomic_rmw(cg: CodeGenerator, kind: str, pointer: Any, val: Any, mask: Any) -> Value:
    ptr = _atomic_pointer(cg, pointer, f"tl.atomic_{kind}", val, mask)
    if kind in ("max", "min") and ptr.dtype.kind == "u":
        kind = "u" + kind  # integers are signless in IR: the op says how to compare
    val_v = materialize(cg.b, val, ptr.dtype, ptr.shape)
    mask_v = as_mask(cg, mask, ptr)
    op = tile.AtomicRMWOp(kind, ptr.ssa, val_v.ssa, mask_v.ssa if mask_v else None)
    return _atomic_result(cg, op, ptr)


def _atomic_pointer(cg: CodeGenerator, pointer: Any, what: str, *operands: Any) -> Value:
    """The pointer, checked and splat to the shape shared with the other operands."""
    ptr = check_pointer(cg, pointer, what)
    if ptr.dtype not in ATOMIC_DTYPES:
        cg.fail(f"{what} supports pointers to int32, uint32 and float32, "
                f"got {ptr.describe()}")
    for v in operands:
        if isinstance(v, Value) and v.is_ptr:
            cg.fail(f"{what} operands cannot be pointers")
    shapes = {v.shape for v in (ptr, *operands) if isinstance(v, Value) and v.shape}
    if len(shapes) > 1:
        cg.fail(f"{what}: operand shapes {sorted(map(list, shapes))} differ")
    return splat(cg.b, ptr, shapes.pop() if shapes else ())


def _atomic_result(cg: CodeGenerator, op: tile.AtomicRMWOp | tile.AtomicCASOp,
                   ptr: Value) -> Value:
    cg.written.add(root_name(ptr))
    return cg.b.value(op, ptr.dtype, ptr.shape)
