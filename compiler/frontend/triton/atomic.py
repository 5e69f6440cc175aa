"""Triton's atomics: ``tl.atomic_add/max/min/and/or/xor/xchg/cas`` -> ``tile.atomic_rmw`` /
``tile.atomic_cas``.

The pointer, value (and comparand) and mask broadcast together, as in Triton: a scalar
pointer with a tile of values updates one address once per element. Every atomic returns
the old values; the pointed-to parameter counts as written (copied back to NumPy arrays).
``sem`` and ``scope`` are Triton's memory ordering, checked here and kept on the op only
when given (an absent one means Triton's default, ``acq_rel`` at ``gpu`` scope).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import compiler.language as tl
from compiler.errors import CompileError
from compiler.frontend.codegen import CodeGenerator
from compiler.frontend.operators import materialize
from compiler.frontend.triton.memory import as_mask, check_pointer
from compiler.frontend.triton.table import builtin
from compiler.frontend.values import Value, broadcast_shapes, splat
from dialects import tile

ATOMIC_DTYPES = (tl.int32, tl.uint32, tl.float32)
ADD_DTYPES = (*ATOMIC_DTYPES, tl.float16, tl.bfloat16)  # Triton adds 16-bit floats, only


RMW_KINDS = ("add", "max", "min", "and", "or", "xor", "xchg")
BITWISE_KINDS = ("and", "or", "xor")


def _rmw_builtin(kind: str) -> Callable[..., Value]:
    def rmw(cg: CodeGenerator, pointer: Any, val: Any, mask: Any = None, sem: Any = None,
            scope: Any = None) -> Value:
        return _atomic_rmw(cg, kind, pointer, val, mask, sem, scope)
    rmw.__name__ = rmw.__qualname__ = f"atomic_{kind}"
    return builtin(f"atomic_{kind}")(rmw)


# module attributes too: compiler.frontend.cutile's atomics call them
(atomic_add, atomic_max, atomic_min, atomic_and, atomic_or, atomic_xor,
 atomic_xchg) = map(_rmw_builtin, RMW_KINDS)


@builtin("atomic_cas")
def atomic_cas(cg: CodeGenerator, pointer: Any, cmp: Any, val: Any, mask: Any = None,
               sem: Any = None, scope: Any = None) -> Value:
    order = _order(cg, "tl.atomic_cas", sem, scope)
    ptr = _atomic_pointer(cg, pointer, "tl.atomic_cas", cmp, val, mask)
    cmp_v = materialize(cg.b, cmp, ptr.dtype, ptr.shape, as_cast=True)
    val_v = materialize(cg.b, val, ptr.dtype, ptr.shape, as_cast=True)
    mask_v = as_mask(cg, mask, ptr)
    op = tile.AtomicCASOp(ptr.ssa, cmp_v.ssa, val_v.ssa, mask_v.ssa if mask_v else None,
                          **order)
    return _atomic_result(cg, op, ptr)


def _atomic_rmw(cg: CodeGenerator, kind: str, pointer: Any, val: Any, mask: Any, sem: Any,
                scope: Any) -> Value:
    what = f"tl.atomic_{kind}"
    order = _order(cg, what, sem, scope)
    ptr = _atomic_pointer(cg, pointer, what, val, mask,
                          dtypes=ADD_DTYPES if kind == "add" else ATOMIC_DTYPES)
    if kind in BITWISE_KINDS and ptr.dtype.kind == "f":
        cg.fail(f"{what} needs a pointer to integers, got {ptr.describe()}")
    if kind in ("max", "min") and ptr.dtype.kind == "u":
        kind = "u" + kind  # integers are signless in IR: the op says how to compare
    val_v = materialize(cg.b, val, ptr.dtype, ptr.shape, as_cast=True)
    mask_v = as_mask(cg, mask, ptr)
    op = tile.AtomicRMWOp(kind, ptr.ssa, val_v.ssa, mask_v.ssa if mask_v else None, **order)
    return _atomic_result(cg, op, ptr)


def _order(cg: CodeGenerator, what: str, sem: Any, scope: Any) -> dict[str, str]:
    """The ``sem``/``scope`` keywords of the op (only those given); a ``CompileError``
    unless each is one of Triton's values."""
    order = {}
    for name, value, allowed in (("sem", sem, tile.ATOMIC_SEMS),
                                 ("scope", scope, tile.ATOMIC_SCOPES)):
        if value is None:
            continue
        if not isinstance(value, str) or value not in allowed:
            cg.fail(f"{what}: {name} must be one of {', '.join(map(repr, allowed))}, "
                    f"got {value!r}")
        order[name] = value
    return order


def _atomic_pointer(cg: CodeGenerator, pointer: Any, what: str, *operands: Any,
                    dtypes: tuple[tl.dtype, ...] = ATOMIC_DTYPES) -> Value:
    """The pointer, checked and broadcast with the other operands to their common shape."""
    ptr = check_pointer(cg, pointer, what)
    if ptr.dtype not in dtypes:
        names = ", ".join(str(d) for d in dtypes[:-1])
        cg.fail(f"{what} supports pointers to {names} and {dtypes[-1]}, got {ptr.describe()}")
    for v in operands:
        if isinstance(v, Value) and v.is_ptr:
            cg.fail(f"{what} operands cannot be pointers")
    shapes = [v.shape for v in (ptr, *operands) if isinstance(v, Value)]
    try:  # Triton broadcasts them together, as for tl.store
        shape = broadcast_shapes(*shapes)
    except CompileError:
        cg.fail(f"{what}: operand shapes {', '.join(str(list(s)) for s in shapes)} do not "
                "broadcast")
    return splat(cg.b, ptr, shape)


def _atomic_result(cg: CodeGenerator, op: tile.AtomicRMWOp | tile.AtomicCASOp,
                   ptr: Value) -> Value:
    return cg.b.value(op, ptr.dtype, ptr.shape)
