"""Atomic read-modify-write and compare-and-swap through pointers.

Both ops carry Triton's memory ordering as optional properties: ``sem`` (``relaxed``,
``acquire``, ``release``, ``acq_rel``) and ``scope`` (``cta``, ``gpu``, ``sys``); an absent
one means Triton's default, ``acq_rel`` at ``gpu`` scope (``memory_order``).
"""

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
    opt_prop_def,
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

ATOMIC_KINDS = ("add", "max", "min", "umax", "umin", "and", "or", "xor", "xchg")
"""``tile.atomic_rmw`` kinds; ``umax``/``umin`` read integers as unsigned (types are
signless); on floats ``max``/``min`` are ``arith.maximumf``/``minimumf``."""
INTEGER_KINDS = ("umax", "umin", "and", "or", "xor")
ATOMIC_SEMS = ("relaxed", "acquire", "release", "acq_rel")
ATOMIC_SCOPES = ("gpu", "cta", "sys")
DEFAULT_SEM, DEFAULT_SCOPE = "acq_rel", "gpu"  # Triton's


def order_properties(sem: str | None, scope: str | None) -> dict[str, Attribute]:
    """The ``sem``/``scope`` properties of an atomic (none for an absent one)."""
    return {k: StringAttr(v) for k, v in (("sem", sem), ("scope", scope)) if v is not None}


def memory_order(op: IRDLOperation) -> tuple[str, str]:
    """An atomic's ``(sem, scope)``, Triton's defaults where absent."""
    sem, scope = op.properties.get("sem"), op.properties.get("scope")
    return (sem.data if isinstance(sem, StringAttr) else DEFAULT_SEM,
            scope.data if isinstance(scope, StringAttr) else DEFAULT_SCOPE)


def check_order(op: IRDLOperation) -> None:
    """``sem`` and ``scope`` are among Triton's values."""
    sem, scope = memory_order(op)
    if sem not in ATOMIC_SEMS:
        raise VerifyException(f"{op.name}: unknown sem {sem!r}")
    if scope not in ATOMIC_SCOPES:
        raise VerifyException(f"{op.name}: unknown scope {scope!r}")


def check_atomic(op: IRDLOperation, kind: str | None, value_type: Attribute) -> None:
    """The atomic kind suits the element type: integers (not i1) or floats."""
    if kind is not None and kind not in ATOMIC_KINDS:
        raise VerifyException(f"{op.name}: unknown kind {kind!r}")
    elem = element_type(value_type)
    if isinstance(elem, IntegerType) and elem.width.data > 1:
        return
    if not isinstance(elem, AnyFloat):
        raise VerifyException(f"{op.name} operates on integers or floats, not {elem}")
    if kind in INTEGER_KINDS:
        raise VerifyException(f"{op.name} {kind} needs integers")


@irdl_op_definition
class AtomicRMWOp(IRDLOperation):
    """Per element where ``mask`` holds, atomically ``*ptr = kind(*ptr, val)``; the result
    is the old value (0 where ``mask`` is false: masked-off memory is not read)."""

    name = "tile.atomic_rmw"
    T: ClassVar = VarConstraint("T", AnyAttr())
    kind = prop_def(StringAttr)
    sem = opt_prop_def(StringAttr)
    scope = opt_prop_def(StringAttr)
    ptr = operand_def()
    val = operand_def(T)
    mask = opt_operand_def()
    result = result_def(T)
    assembly_format = (
        "$kind `,` $ptr `,` $val (`mask` $mask^ `:` type($mask))?"
        " (`sem` $sem^)? (`scope` $scope^)? attr-dict `:` type($ptr) `,` type($val)"
    )

    def __init__(self, kind: str, ptr: SSAValue, val: SSAValue, mask: SSAValue | None = None,
                 sem: str | None = None, scope: str | None = None):
        super().__init__(operands=[ptr, val, mask], result_types=[val.type],
                         properties={"kind": StringAttr(kind), **order_properties(sem, scope)})

    def verify_(self) -> None:
        _check_atomic_operands(self, self.ptr, self.val, self.mask)
        check_atomic(self, self.kind.data, self.val.type)
        check_order(self)


@irdl_op_definition
class AtomicCASOp(IRDLOperation):
    """Per element where ``mask`` holds, atomically ``old = *ptr; if old == cmp (same
    bits): *ptr = val``; the result is ``old`` (0 where ``mask`` is false)."""

    name = "tile.atomic_cas"
    T: ClassVar = VarConstraint("T", AnyAttr())
    sem = opt_prop_def(StringAttr)
    scope = opt_prop_def(StringAttr)
    ptr = operand_def()
    cmp = operand_def(T)
    val = operand_def(T)
    mask = opt_operand_def()
    result = result_def(T)
    assembly_format = (
        "$ptr `,` $cmp `,` $val (`mask` $mask^ `:` type($mask))?"
        " (`sem` $sem^)? (`scope` $scope^)? attr-dict `:` type($ptr) `,` type($val)"
    )

    def __init__(self, ptr: SSAValue, cmp: SSAValue, val: SSAValue,
                 mask: SSAValue | None = None, sem: str | None = None,
                 scope: str | None = None):
        super().__init__(operands=[ptr, cmp, val, mask], result_types=[val.type],
                         properties=order_properties(sem, scope))

    def verify_(self) -> None:
        _check_atomic_operands(self, self.ptr, self.val, self.mask)
        check_atomic(self, None, self.val.type)
        check_order(self)


def _check_atomic_operands(op: IRDLOperation, ptr: SSAValue, val: SSAValue,
                           mask: SSAValue | None) -> None:
    ptr_t = element_type(ptr.type)
    if not isinstance(ptr_t, PtrType):
        raise VerifyException(f"{op.name} expects a pointer or tile of pointers")
    if val.type != like(ptr.type, ptr_t.pointee):
        raise VerifyException(f"{op.name} value must have the pointee type")
    check_mask(op, ptr, mask)
