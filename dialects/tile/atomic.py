"""Atomic read-modify-write and compare-and-swap through pointers."""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import (
    AnyFloat,
    IntegerType,
    StringAttr,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    VarConstraint,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    prop_def,
    result_def,
)
from xdsl.utils.exceptions import VerifyException

from dialects.tile.memory import check_mask
from dialects.tile.types import (
    PtrType,
    element_type,
    like,
)

ATOMIC_KINDS = ("add", "max", "min", "umax", "umin", "xchg")
"""``tile.atomic_rmw`` kinds; ``umax``/``umin`` read integers as unsigned (types are
signless); on floats ``max``/``min`` are ``arith.maximumf``/``minimumf``."""


def check_atomic(op: IRDLOperation, kind: str | None, value_type: Attribute) -> None:
    """The atomic kind suits the element type: integers (not i1) or floats."""
    if kind is not None and kind not in ATOMIC_KINDS:
        raise VerifyException(f"{op.name}: unknown kind {kind!r}")
    elem = element_type(value_type)
    if isinstance(elem, IntegerType) and elem.width.data > 1:
        return
    if not isinstance(elem, AnyFloat):
        raise VerifyException(f"{op.name} operates on integers or floats, not {elem}")
    if kind in ("umax", "umin"):
        raise VerifyException(f"{op.name} {kind} needs integers")


@irdl_op_definition
class AtomicRMWOp(IRDLOperation):
    """Per element where ``mask`` holds, atomically ``*ptr = kind(*ptr, val)``; the result
    is the old value (0 where ``mask`` is false: masked-off memory is not read)."""

    name = "tile.atomic_rmw"
    T: ClassVar = VarConstraint("T", AnyAttr())
    kind = prop_def(StringAttr)
    ptr = operand_def()
    val = operand_def(T)
    mask = opt_operand_def()
    result = result_def(T)
    assembly_format = (
        "$kind `,` $ptr `,` $val (`mask` $mask^ `:` type($mask))? attr-dict"
        " `:` type($ptr) `,` type($val)"
    )

    def __init__(self, kind: str, ptr: SSAValue, val: SSAValue, mask: SSAValue | None = None):
        super().__init__(operands=[ptr, val, mask], result_types=[val.type],
                         properties={"kind": StringAttr(kind)})

    def verify_(self) -> None:
        _check_atomic_operands(self, self.ptr, self.val, self.mask)
        check_atomic(self, self.kind.data, self.val.type)


@irdl_op_definition
class AtomicCASOp(IRDLOperation):
    """Per element where ``mask`` holds, atomically ``old = *ptr; if old == cmp (same
    bits): *ptr = val``; the result is ``old`` (0 where ``mask`` is false)."""

    name = "tile.atomic_cas"
    T: ClassVar = VarConstraint("T", AnyAttr())
    ptr = operand_def()
    cmp = operand_def(T)
    val = operand_def(T)
    mask = opt_operand_def()
    result = result_def(T)
    assembly_format = (
        "$ptr `,` $cmp `,` $val (`mask` $mask^ `:` type($mask))? attr-dict"
        " `:` type($ptr) `,` type($val)"
    )

    def __init__(self, ptr: SSAValue, cmp: SSAValue, val: SSAValue,
                 mask: SSAValue | None = None):
        super().__init__(operands=[ptr, cmp, val, mask], result_types=[val.type])

    def verify_(self) -> None:
        _check_atomic_operands(self, self.ptr, self.val, self.mask)
        check_atomic(self, None, self.val.type)


def _check_atomic_operands(op: IRDLOperation, ptr: SSAValue, val: SSAValue,
                           mask: SSAValue | None) -> None:
    ptr_t = element_type(ptr.type)
    if not isinstance(ptr_t, PtrType):
        raise VerifyException(f"{op.name} expects a pointer or tile of pointers")
    if val.type != like(ptr.type, ptr_t.pointee):
        raise VerifyException(f"{op.name} value must have the pointee type")
    check_mask(op, ptr, mask)
