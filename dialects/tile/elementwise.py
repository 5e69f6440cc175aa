"""Comparisons and ``select`` on tiles (xDSL's ``arith`` ones accept scalar i1 only),
``umulhi``, the high half of an unsigned product, ``brev`` (bit reversal), ``libm``, the
libdevice float functions xDSL's ``math`` dialect lacks, ``arith_fence``,
``from_fp8``/``to_fp8``, the fp8 conversions on the bits GPU targets hold fp8 values in,
and ``inline_asm``, a user's PTX for each element."""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    AnyFloat,
    Float16Type,
    Float32Type,
    IntegerAttr,
    IntegerType,
    StringAttr,
    UnitAttr,
    i64,
)
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
    var_operand_def,
    var_result_def,
)
from xdsl.traits import (
    EffectInstance,
    MemoryEffect,
    MemoryEffectKind,
    Pure,
)
from xdsl.utils.exceptions import VerifyException

from dialects.tile.types import (
    element_type,
    i1_like,
    like,
)

CMPI_PREDICATES = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
CMPF_PREDICATES = ("oeq", "one", "olt", "ole", "ogt", "oge", "ord",
                   "ueq", "une", "ult", "ule", "ugt", "uge", "uno")


class _CmpOp(IRDLOperation):
    T: ClassVar = VarConstraint("T", AnyAttr())
    predicate = prop_def(StringAttr)
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def()
    assembly_format = "$predicate `,` $lhs `,` $rhs attr-dict `:` type($lhs) `->` type($result)"
    traits = traits_def(Pure())
    PREDICATES: ClassVar[tuple[str, ...]] = ()

    def __init__(self, predicate: str, lhs: SSAValue, rhs: SSAValue):
        super().__init__(operands=[lhs, rhs], result_types=[i1_like(lhs.type)],
                         properties={"predicate": StringAttr(predicate)})

    def verify_(self) -> None:
        if self.predicate.data not in self.PREDICATES:
            raise VerifyException(f"{self.name}: unknown predicate {self.predicate.data!r}")
        if self.result.type != i1_like(self.lhs.type):
            raise VerifyException(f"{self.name} result must be i1 shaped like the operands")


@irdl_op_definition
class CmpIOp(_CmpOp):
    """Integer comparison of scalars, tiles or vectors (xDSL's arith.cmpi is scalar-only)."""

    name = "tile.cmpi"
    PREDICATES: ClassVar[tuple[str, ...]] = CMPI_PREDICATES


@irdl_op_definition
class CmpFOp(_CmpOp):
    """Float comparison of scalars, tiles or vectors (xDSL's arith.cmpf is scalar-only)."""

    name = "tile.cmpf"
    PREDICATES: ClassVar[tuple[str, ...]] = CMPF_PREDICATES


@irdl_op_definition
class SelectOp(IRDLOperation):
    """Elementwise ``cond ? a : b`` (xDSL's arith.select takes only a scalar condition)."""

    name = "tile.select"
    T: ClassVar = VarConstraint("T", AnyAttr())
    cond = operand_def()
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(T)
    assembly_format = "$cond `,` $lhs `,` $rhs attr-dict `:` type($cond) `,` type($result)"
    traits = traits_def(Pure())

    def __init__(self, cond: SSAValue, lhs: SSAValue, rhs: SSAValue):
        super().__init__(operands=[cond, lhs, rhs], result_types=[lhs.type])

    def verify_(self) -> None:
        if self.cond.type != i1_like(self.lhs.type):
            raise VerifyException("tile.select condition must be i1 shaped like the values")


@irdl_op_definition
class UMulHiOp(IRDLOperation):
    """The high half of the double-width unsigned product of i32 or i64 operands (xDSL's
    arith.mului_extended gives both halves as two results; every elementwise table here
    maps an op to one value, and the low half is arith.muli)."""

    name = "tile.umulhi"
    T: ClassVar = VarConstraint("T", AnyAttr())
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(T)
    assembly_format = "$lhs `,` $rhs attr-dict `:` type($result)"
    traits = traits_def(Pure())
    WIDTHS: ClassVar[tuple[int, ...]] = (32, 64)

    def __init__(self, lhs: SSAValue, rhs: SSAValue):
        super().__init__(operands=[lhs, rhs], result_types=[lhs.type])

    def verify_(self) -> None:
        e = element_type(self.lhs.type)
        if not isinstance(e, IntegerType) or e.width.data not in self.WIDTHS:
            raise VerifyException("tile.umulhi operands must be i32 or i64 (scalar or shaped)")


class _SameTypeUnaryOp(IRDLOperation):
    """An op of one operand whose result has its type."""

    T: ClassVar = VarConstraint("T", AnyAttr())
    x = operand_def(T)
    result = result_def(T)
    assembly_format = "$x attr-dict `:` type($result)"
    traits = traits_def(Pure())

    def __init__(self, x: SSAValue):
        super().__init__(operands=[x], result_types=[x.type])


@irdl_op_definition
class BrevOp(_SameTypeUnaryOp):
    """The bits of an i32 or i64 in reverse order (libdevice's ``brev``)."""

    name = "tile.brev"

    def verify_(self) -> None:
        e = element_type(self.x.type)
        if not isinstance(e, IntegerType) or e.width.data not in (32, 64):
            raise VerifyException("tile.brev operand must be i32 or i64 (scalar or shaped)")


LIBM_FUNCTIONS: dict[str, str] = {
    **dict.fromkeys(("exp10", "rcbrt", "erfc", "erfcx", "erfinv", "erfcinv", "normcdf",
                     "normcdfinv", "lgamma", "tgamma", "sinpi", "cospi", "logb"), "f"),
    **dict.fromkeys(("hypot", "rhypot", "fmod", "remainder", "nextafter"), "ff"),
    "norm3d": "fff", "rnorm3d": "fff", "norm4d": "ffff", "rnorm4d": "ffff", "ldexp": "fi",
}
"""``tile.libm`` functions -> their operands: ``f`` the result's float type, ``i`` i32 of its
shape (``ldexp``'s exponent)."""


@irdl_op_definition
class LibmOp(IRDLOperation):
    """A float function of libdevice that xDSL's math dialect lacks, named as Triton's
    ``tt.extern_elementwise`` names its libdevice symbol; ``expand-math`` expands it."""

    name = "tile.libm"
    fn = prop_def(StringAttr)
    args = var_operand_def()
    result = result_def()
    assembly_format = "$fn `(` $args `)` attr-dict `:` functional-type($args, $result)"
    traits = traits_def(Pure())

    def __init__(self, fn: str, *args: SSAValue):
        super().__init__(operands=[list(args)], result_types=[args[0].type],
                         properties={"fn": StringAttr(fn)})

    def verify_(self) -> None:
        kinds = LIBM_FUNCTIONS.get(self.fn.data)
        if kinds is None:
            raise VerifyException(f"tile.libm: unknown function {self.fn.data!r}")
        if len(self.args) != len(kinds):
            raise VerifyException(f"tile.libm {self.fn.data} takes {len(kinds)} operands")
        t = self.result.type
        if not isinstance(element_type(t), AnyFloat):
            raise VerifyException("tile.libm result must be a float (scalar or shaped)")
        for kind, arg in zip(kinds, self.args, strict=True):
            if arg.type != (t if kind == "f" else like(t, IntegerType(32))):
                raise VerifyException(f"tile.libm {self.fn.data} operands must be "
                                      f"({', '.join(kinds)}): f the result's type, i i32")


@irdl_op_definition
class ArithFenceOp(_SameTypeUnaryOp):
    """Its operand unchanged, which no float rewriting may see through (LLVM's
    ``llvm.arithmetic.fence``): WGSL compilers apply algebraic identities such as
    ``(a + b) - a = b``, which would cancel the error terms of compensated arithmetic."""

    name = "tile.arith_fence"


FP8_FORMATS = ("e4m3", "e5m2")
"""The fp8 formats, as PTX names them: e4m3 is e4m3fn (``tl.float8e4nv``: no infinities,
NaN 0x7F/0xFF), e5m2 is IEEE-like (``tl.float8e5``)."""


class _Fp8Op(IRDLOperation):
    """A conversion between floats and fp8 values held as their bits, in i8 (``lower-fp8``
    makes them: no target computes on fp8 types)."""

    format = prop_def(StringAttr)
    x = operand_def()
    result = result_def()
    assembly_format = "$format `,` $x attr-dict `:` type($x) `->` type($result)"
    traits = traits_def(Pure())
    SOURCE: ClassVar[Attribute] = IntegerType(8)
    RESULTS: ClassVar[tuple[Attribute, ...]] = (Float32Type(), Float16Type())

    def __init__(self, fmt: str, x: SSAValue, elem: Attribute | None = None):
        super().__init__(operands=[x], result_types=[like(x.type, elem or self.RESULTS[0])],
                         properties={"format": StringAttr(fmt)})

    def verify_(self) -> None:
        if self.format.data not in FP8_FORMATS:
            raise VerifyException(f"{self.name}: format must be e4m3 or e5m2, not "
                                  f"{self.format.data!r}")
        elem = element_type(self.result.type)
        if element_type(self.x.type) != self.SOURCE or elem not in self.RESULTS or \
                self.result.type != like(self.x.type, elem):
            raise VerifyException(f"{self.name} takes {self.SOURCE} and gives "
                                  f"{' or '.join(map(str, self.RESULTS))} of the same shape")


@irdl_op_definition
class FromFp8Op(_Fp8Op):
    """The f32 (or f16) value of fp8 bits (i8): exact."""

    name = "tile.from_fp8"


@irdl_op_definition
class ToFp8Op(_Fp8Op):
    """An f32 rounded to fp8 bits (i8) as PTX's ``cvt.rn.satfinite`` rounds: to nearest
    even, a magnitude beyond the largest finite saturating to it, NaN to 0x7F."""

    name = "tile.to_fp8"
    SOURCE: ClassVar[Attribute] = Float32Type()
    RESULTS: ClassVar[tuple[Attribute, ...]] = (IntegerType(8),)


ASM_OPERAND = re.compile(r"\$(\d+)")
"""A register named in inline PTX (``tile.inline_asm``'s text): ``$0``, ``$1``, ..."""


def asm_registers(bits: int, pack: int) -> tuple[int, int]:
    """(registers, bits of each) that hold ``pack`` elements of ``bits`` bits for inline
    PTX: one each of 32 bits or more (or unpacked), else packed into 32-bit words; (0, 0)
    where they do not fill whole words."""
    if pack == 1 or bits >= 32:
        return pack, bits
    return (pack * bits // 32, 32) if pack * bits % 32 == 0 else (0, 0)


class _AsmEffects(MemoryEffect):
    """None where the text is pure; else it may read and write anything."""

    @classmethod
    def get_effects(cls, op: Operation) -> AbstractSet[EffectInstance]:
        assert isinstance(op, InlineAsmOp)
        if op.pure is not None:
            return frozenset()
        return frozenset(EffectInstance(kind) for kind in (MemoryEffectKind.READ,
                                                           MemoryEffectKind.WRITE))


@irdl_op_definition
class InlineAsmOp(IRDLOperation):
    """Triton's ``tl.inline_asm_elementwise``: PTX text run once for every ``pack``
    elements of the results (each of the operands' shape, or scalars), its registers
    ``$0``, ``$1``, ... the results' and then the operands' (an element of 32 bits or more
    a register of its own, smaller ones packed into 32-bit words). ``constraints`` are
    Triton's (``"=r,r,f"``), kept for the printed IR. It has no NumPy meaning: only ptx
    runs it. ``pure``: without effects (may be merged or removed)."""

    name = "tile.inline_asm"
    UNSUPPORTED: ClassVar[str] = " (tl.inline_asm_elementwise is inline PTX: only ptx runs it)"
    asm = prop_def(StringAttr)
    constraints = prop_def(StringAttr)
    pack = prop_def(IntegerAttr[I64])
    pure = opt_prop_def(UnitAttr)
    args = var_operand_def()
    outs = var_result_def()
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = ("$asm $constraints `(` $args `)` attr-dict `:` "
                       "functional-type($args, results)")
    traits = traits_def(_AsmEffects())

    def __init__(self, asm: str, constraints: str, args: list[SSAValue],
                 results: list[Attribute], pure: bool, pack: int = 1):
        props: dict[str, Attribute] = {"asm": StringAttr(asm),
                                       "constraints": StringAttr(constraints),
                                       "pack": IntegerAttr(pack, i64)}
        if pure:
            props["pure"] = UnitAttr()
        super().__init__(operands=[args], result_types=[results], properties=props)

    def verify_(self) -> None:
        shapes = {getattr(r.type, "get_shape", lambda: ())() for r in self.outs}
        if len(shapes) != 1 or self.pack.value.data < 1:
            raise VerifyException("tile.inline_asm results share one shape; pack >= 1")
        for a in self.args:
            if getattr(a.type, "get_shape", lambda: ())() not in ((), *shapes):
                raise VerifyException("tile.inline_asm operands are scalars or of the "
                                      "results' shape")
