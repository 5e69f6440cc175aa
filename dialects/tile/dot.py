"""``tile.dot``: the matrix product of two 2-D tiles, added to an accumulator tile."""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    IntegerType,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    BaseAttr,
    IRDLOperation,
    VarConstraint,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.traits import HasCanonicalizationPatternsTrait, Pure
from xdsl.utils.exceptions import VerifyException

from dialects.tile.memory import is_zero

PRECISIONS = ("ieee", "tf32", "tf32x3")
"""How f32 operands are multiplied: exactly rounded products (``ieee``), or on tensor cores
with inputs rounded to tf32 (10 mantissa bits), or as three tf32 products (``tf32x3``)."""


def accumulator_types(operand: Attribute) -> tuple[Attribute, ...]:
    """The accumulator element types a dot of ``operand`` elements may have."""
    if isinstance(operand, Float16Type):
        return Float32Type(), Float16Type()
    if isinstance(operand, BFloat16Type | Float32Type):
        return (Float32Type(),)
    if operand == IntegerType(8):
        return (IntegerType(32),)
    return ()


class _SumInAccumulator(RewritePattern):
    """``dot(a, b, 0) + c`` -> ``dot(a, b, c)``, as Triton does: the accumulator does the
    sum, so no second accumulator tile is live beside ``c`` and no add per element follows
    (``acc * alpha + tl.dot(p, v)`` in attention). Rooted at the dot, whose only use is
    the add."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, DotOp) or not is_zero(op.acc) or not op.result.has_one_use():
            return
        use = next(iter(op.result.uses))
        add = use.operation
        if not isinstance(add, arith.AddfOp | arith.AddiOp):
            return
        summed = add.operands[1 - use.index]
        if summed.type != op.result.type:
            return
        dot = DotOp(op.a, op.b, summed, op.input_precision.data)
        dot.location = op.location
        rewriter.replace(add, dot)
        rewriter.erase(op)


class _DotCanonicalization(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return (_SumInAccumulator(),)


@irdl_op_definition
class DotOp(IRDLOperation):
    """``a @ b + acc``: (M, K) times (K, N) plus (M, N); products and sums in the
    accumulator's type, f32 operands as ``input_precision`` says."""

    name = "tile.dot"
    T: ClassVar = VarConstraint("T", BaseAttr(TensorType))
    a = operand_def(TensorType)
    b = operand_def(TensorType)
    acc = operand_def(T)
    result = result_def(T)
    input_precision = prop_def(StringAttr)
    traits = traits_def(Pure(), _DotCanonicalization())
    assembly_format = (
        "$a `,` $b `,` $acc `precision` $input_precision attr-dict"
        " `:` type($a) `,` type($b) `->` type($result)"
    )

    def __init__(self, a: SSAValue, b: SSAValue, acc: SSAValue, input_precision: str = "ieee"):
        super().__init__(operands=[a, b, acc], result_types=[acc.type],
                         properties={"input_precision": StringAttr(input_precision)})

    def verify_(self) -> None:
        a, b, acc = self.a.type, self.b.type, self.acc.type
        assert isinstance(a, TensorType) and isinstance(b, TensorType)
        assert isinstance(acc, TensorType)
        (m, k), (k2, n) = _matrix(self, a), _matrix(self, b)
        if k != k2 or acc.get_shape() != (m, n):
            raise VerifyException(f"tile.dot shapes do not match: ({m}, {k}) x ({k2}, {n}) "
                                  f"-> {list(acc.get_shape())}")
        if a.element_type != b.element_type:
            raise VerifyException("tile.dot operands must have one element type")
        if acc.element_type not in accumulator_types(a.element_type):
            raise VerifyException(f"tile.dot of {a.element_type} cannot accumulate in "
                                  f"{acc.element_type}")
        precision = self.input_precision.data
        if precision not in PRECISIONS:
            raise VerifyException(f"tile.dot precision must be one of {PRECISIONS}")
        if precision != "ieee" and not isinstance(a.element_type, Float32Type):
            raise VerifyException(f"tile.dot precision {precision!r} needs f32 operands")


def _matrix(op: IRDLOperation, t: TensorType) -> tuple[int, int]:
    shape = t.get_shape()
    if len(shape) != 2:
        raise VerifyException(f"{op.name} operands must be 2-D tiles")
    return shape[0], shape[1]
