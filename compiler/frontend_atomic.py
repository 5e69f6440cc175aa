"""Frontend: ``tl.atomic_add/max/min/xchg/cas`` -> ``tile.atomic_rmw`` / ``tile.atomic_cas``.

A mixin of ``CodeGenerator`` (``compiler/frontend.py``): the methods use its helpers
(``_pointer``, ``_mask``, ``_root_name``, ``_fail``) and its builder. The pointer, value
(and comparand) and mask broadcast together, as in Triton: a scalar pointer with a tile
of values updates one address once per element. Every atomic returns the old values; the
pointed-to parameter counts as written (copied back to NumPy arrays).
"""

from __future__ import annotations

from typing import Any

import compiler.language as tl
from compiler import semantics as S
from compiler.semantics import Value
from dialects import tile

ATOMIC_DTYPES = (tl.int32, tl.uint32, tl.float32)


class AtomicMixin:
    """``builtin_atomic_*`` methods of the code generator."""

    def builtin_atomic_add(self, pointer: Any, val: Any, mask: Any = None) -> Value:
        return self._atomic_rmw("add", pointer, val, mask)

    def builtin_atomic_max(self, pointer: Any, val: Any, mask: Any = None) -> Value:
        return self._atomic_rmw("max", pointer, val, mask)

    def builtin_atomic_min(self, pointer: Any, val: Any, mask: Any = None) -> Value:
        return self._atomic_rmw("min", pointer, val, mask)

    def builtin_atomic_xchg(self, pointer: Any, val: Any, mask: Any = None) -> Value:
        return self._atomic_rmw("xchg", pointer, val, mask)

    def builtin_atomic_cas(self, pointer: Any, cmp: Any, val: Any, mask: Any = None) -> Value:
        ptr = self._atomic_pointer(pointer, "tl.atomic_cas", cmp, val, mask)
        cmp_v = S.materialize(self.b, cmp, ptr.dtype, ptr.shape)
        val_v = S.materialize(self.b, val, ptr.dtype, ptr.shape)
        mask_v = self._mask(mask, ptr)
        op = tile.AtomicCASOp(ptr.ssa, cmp_v.ssa, val_v.ssa, mask_v.ssa if mask_v else None)
        return self._atomic_result(op, ptr)

    def _atomic_rmw(self, kind: str, pointer: Any, val: Any, mask: Any) -> Value:
        ptr = self._atomic_pointer(pointer, f"tl.atomic_{kind}", val, mask)
        if kind in ("max", "min") and ptr.dtype.kind == "u":
            kind = "u" + kind  # integers are signless in IR: the op says how to compare
        val_v = S.materialize(self.b, val, ptr.dtype, ptr.shape)
        mask_v = self._mask(mask, ptr)
        op = tile.AtomicRMWOp(kind, ptr.ssa, val_v.ssa, mask_v.ssa if mask_v else None)
        return self._atomic_result(op, ptr)

    def _atomic_pointer(self, pointer: Any, what: str, *operands: Any) -> Value:
        """The pointer, checked and splat to the shape shared with the other operands."""
        ptr = self._pointer(pointer, what)
        if ptr.dtype not in ATOMIC_DTYPES:
            self._fail(self.node, f"{what} supports pointers to int32, uint32 and float32, "
                                  f"got {ptr.describe()}")
        for v in operands:
            if isinstance(v, Value) and v.is_ptr:
                self._fail(self.node, f"{what} operands cannot be pointers")
        shapes = {v.shape for v in (ptr, *operands) if isinstance(v, Value) and v.shape}
        if len(shapes) > 1:
            self._fail(self.node, f"{what}: operand shapes {sorted(map(list, shapes))} differ")
        return S.splat(self.b, ptr, shapes.pop() if shapes else ())

    def _atomic_result(self, op: tile.AtomicRMWOp | tile.AtomicCASOp, ptr: Value) -> Value:
        self.written.add(self._root_name(ptr))
        return self.b.value(op, ptr.dtype, ptr.shape)
