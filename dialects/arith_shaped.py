"""``arith`` with the integer casts accepting tiles and per-thread vectors.

MLIR's ``arith.sitofp``/``fptosi``/``extsi``/... take scalars, vectors and tensors; in
xDSL 0.74 only ``extf``/``truncf`` do. The subclasses here keep the op names, assembly
formats and Python classes (``isinstance(op, arith.SIToFPOp)`` still holds) and relax
the operand constraints to shaped types; ``ShapedArith`` replaces ``arith`` in tilec's
context. Build these classes (not xDSL's) when the operand may be a tile or vector.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects import arith
from xdsl.dialects.builtin import AnyFloatConstr, IntegerType, StringAttr, TensorType, VectorType
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    result_def,
    traits_def,
)
from xdsl.irdl.constraints import AnyOf
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from dialects.tile import element_type

_INT = arith.container_of(IntegerType)
_FLOAT = arith.container_of(AnyOf((AnyFloatConstr,)))


def _shape(t: Attribute) -> tuple[int, ...]:
    return t.get_shape() if isinstance(t, TensorType | VectorType) else ()


class _ShapedCast:
    """Shared verifier: same shape in and out, widths ordered as the op requires."""

    WIDTH: ClassVar[str] = ""  # "<", ">" or "" (no width rule)

    def verify_(self) -> None:
        src, dst = self.input.type, self.result.type  # type: ignore[attr-defined]
        if _shape(src) != _shape(dst):
            raise VerifyException(f"{self.name} must keep the shape")  # type: ignore[attr-defined]
        a, b = element_type(src), element_type(dst)
        if self.WIDTH == "<" and not b.width.data < a.width.data:
            raise VerifyException("Destination bit-width must be smaller than the input bit-width")
        if self.WIDTH == ">" and not b.width.data > a.width.data:
            raise VerifyException("Destination bit-width must be larger than the input bit-width")


def _cast(base: type, in_c, out_c, width: str = "") -> type:
    cls = type(base.__name__, (_ShapedCast, base), {
        "__doc__": base.__doc__ or f"{base.name} on scalars, tiles and vectors.",
        "__module__": __name__, "WIDTH": width,
        "input": operand_def(in_c), "result": result_def(out_c),
        "__annotations__": {"WIDTH": ClassVar[str]},
        # the base's generated parse/print would count as custom ones: regenerate
        "parse": classmethod(Operation.parse.__func__), "print": Operation.print,
    })
    return irdl_op_definition(cls)


SIToFPOp = _cast(arith.SIToFPOp, _INT, _FLOAT)
UIToFPOp = _cast(arith.UIToFPOp, _INT, _FLOAT)
FPToSIOp = _cast(arith.FPToSIOp, _FLOAT, _INT)
FPToUIOp = _cast(arith.FPToUIOp, _FLOAT, _INT)
ExtSIOp = _cast(arith.ExtSIOp, _INT, _INT, ">")
ExtUIOp = _cast(arith.ExtUIOp, _INT, _INT, ">")
TruncIOp = _cast(arith.TruncIOp, _INT, _INT, "<")


@irdl_op_definition
class TruncFOp(arith.TruncFOp):
    """``arith.truncf`` with MLIR's optional rounding mode: none (to nearest, ties to
    even) or ``"toward_zero"`` (Triton's ``x.to(f16, fp_downcast_rounding="rtz")``)."""

    name = "arith.truncf"
    input = operand_def(arith.floatingPointLike)
    result = result_def(arith.floatingPointLike)
    roundingmode = opt_prop_def(StringAttr)
    traits = traits_def(Pure())
    assembly_format = "$input ($roundingmode^)? attr-dict `:` type($input) `to` type($result)"
    parse = classmethod(Operation.parse.__func__)  # regenerated from the format above
    print = Operation.print

    def __init__(self, op: SSAValue | Operation, target_type: Attribute,
                 roundingmode: str | None = None):
        props = {} if roundingmode is None else {"roundingmode": StringAttr(roundingmode)}
        IRDLOperation.__init__(self, operands=[op], result_types=[target_type],
                               properties=props)

    @property
    def toward_zero(self) -> bool:
        return self.roundingmode is not None and self.roundingmode.data == "toward_zero"

    def verify_(self) -> None:
        if self.roundingmode is not None and not self.toward_zero:
            raise VerifyException(f"arith.truncf rounds to nearest even (no rounding mode) "
                                  f"or \"toward_zero\", not {self.roundingmode}")


def rounds_toward_zero(op: Operation) -> bool:
    """Whether ``op`` is a ``truncf`` rounding toward zero (xDSL's own class never does)."""
    return isinstance(op, TruncFOp) and op.toward_zero


_REPLACED = {op.name: op for op in (SIToFPOp, UIToFPOp, FPToSIOp, FPToUIOp, ExtSIOp,
                                    ExtUIOp, TruncIOp, TruncFOp)}

ShapedArith = Dialect(
    "arith",
    [_REPLACED.get(op.name, op) for op in arith.Arith.operations],
    list(arith.Arith.attributes),
)
