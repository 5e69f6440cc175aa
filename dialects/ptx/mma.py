"""Tensor-core instructions of the ptx dialect: ``ldmatrix``, ``mma.sync`` / ``wgmma``
and the repacking of fragment registers between 32-bit words and 16-bit halves."""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import I32, StringAttr, UnitAttr, VectorType, i32, i64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    ParsePropInAttrDict,
    VarConstraint,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from dialects.ptx.core import REGISTER_CLASSES, check_register, lanes
from dialects.tile import element_type


def _check_words(op: IRDLOperation, t: Attribute) -> None:
    check_register(op, t)
    if element_type(t).bitwidth != 32:
        raise VerifyException(f"{op.name}: fragments are 32-bit registers, got {t}")


@irdl_op_definition
class LdMatrixOp(IRDLOperation):
    """``ldmatrix...shared.b16 {d...}, [addr]``: one instruction for the warp, printed once;
    ``addr`` is this thread's row address."""

    name = "ptx.ldmatrix"
    opcode = prop_def(StringAttr)
    addr = operand_def(I32)
    result = result_def()
    assembly_format = "$opcode $addr attr-dict `:` type($result)"

    def __init__(self, opcode: str, addr: SSAValue, count: int):
        super().__init__(operands=[addr], result_types=[VectorType(i32, [count])],
                         properties={"opcode": StringAttr(opcode)})

    def verify_(self) -> None:
        _check_words(self, self.result.type)
        if not self.opcode.data.startswith("ldmatrix.") or lanes(self.result.type) not in (1, 2, 4):
            raise VerifyException("ptx.ldmatrix: an ldmatrix of 1, 2 or 4 registers")


@irdl_op_definition
class MmaOp(IRDLOperation):
    """``mma.sync... {d...}, {a...}, {b...}, {c...}``: one instruction for the warp on
    fragment registers (32 bits each), printed once; or ``wgmma.mma_async... {d...},
    a-desc, b-desc, ...`` for the warpgroup, ``a`` and ``b`` 64-bit matrix descriptors and
    ``d`` the registers of ``c`` (``in_place``: C's own; ``b_k_major``: B's descriptor is
    K-major, not transposed)."""

    name = "ptx.mma"
    T: ClassVar = VarConstraint("T", AnyAttr())
    opcode = prop_def(StringAttr)
    a = operand_def()
    b = operand_def()
    c = operand_def(T)
    result = result_def(T)
    in_place = opt_prop_def(UnitAttr)
    b_k_major = opt_prop_def(UnitAttr)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$opcode $a `,` $b `,` $c attr-dict `:` type($a) `,` type($b) `,` type($c)"

    def __init__(self, opcode: str, a: SSAValue, b: SSAValue, c: SSAValue,
                 in_place: bool = False, b_k_major: bool = False):
        props: dict[str, Attribute] = {"opcode": StringAttr(opcode)}
        props |= {k: UnitAttr() for k, on in (("in_place", in_place),
                                              ("b_k_major", b_k_major)) if on}
        super().__init__(operands=[a, b, c], result_types=[c.type], properties=props)

    @property
    def is_wgmma(self) -> bool:
        """A warpgroup MMA (Hopper's ``wgmma.mma_async``), not an ``mma.sync``."""
        return self.opcode.data.startswith("wgmma.mma_async.")

    def verify_(self) -> None:
        wgmma = self.is_wgmma
        if not (wgmma or self.opcode.data.startswith("mma.sync.")):
            raise VerifyException(f"ptx.mma: {self.opcode.data!r} is not an mma.sync or wgmma")
        for v in (self.c,) if wgmma else (self.a, self.b, self.c):
            _check_words(self, v.type)
        if wgmma and (self.b.type != i64 or self.a.type != i64 and lanes(self.a.type) != 4):
            raise VerifyException("ptx.mma: wgmma takes a descriptor of B and one of A or "
                                  "its 4 registers")


@irdl_op_definition
class RepackOp(IRDLOperation):
    """``mov.b32`` between 32-bit registers and pairs of 16-bit registers (lanes 2 i and
    2 i + 1 are the low and high halves of register i), in either direction."""

    name = "ptx.repack"
    source = operand_def()
    result = result_def()
    assembly_format = "$source attr-dict `:` type($source) `->` type($result)"
    traits = traits_def(Pure())

    def __init__(self, source: SSAValue, result_type: Attribute):
        super().__init__(operands=[source], result_types=[result_type])

    def verify_(self) -> None:
        check_register(self, self.source.type)
        check_register(self, self.result.type)
        words, halves = sorted((self.source.type, self.result.type),
                               key=lambda t: -element_type(t).bitwidth)
        if (element_type(words) != i32 or REGISTER_CLASSES[element_type(halves)][0] != "b16"
                or lanes(halves) != 2 * lanes(words)):
            raise VerifyException("ptx.repack moves K i32 registers to 2 K 16-bit ones or back")


def is_wgmma(op: Operation | None) -> bool:
    """Whether ``op`` is a warpgroup MMA."""
    return isinstance(op, MmaOp) and op.is_wgmma


def has_wgmma(op: Operation) -> bool:
    """Whether ``op`` (a kernel, a module) holds a warpgroup MMA."""
    return any(is_wgmma(o) for o in op.walk())
