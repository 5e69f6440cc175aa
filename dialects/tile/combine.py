"""``reduce`` and ``scan`` along one axis, with a combiner region ending in ``yield``."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    I32,
    IntegerAttr,
    TensorType,
    UnitAttr,
    i32,
)
from xdsl.ir import Attribute, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import (
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    Pure,
    RecursiveMemoryEffect,
)
from xdsl.utils.exceptions import VerifyException

from dialects.tile.types import SliceLayoutAttr, is_layout


class _CombineOp(IRDLOperation):
    """``tile.reduce``/``tile.scan``: tiles of one shape combined along ``axis`` by a
    region taking (earlier..., later...) scalars and yielding their combination."""

    srcs = var_operand_def(TensorType)
    axis = prop_def(IntegerAttr[I32])
    outs = var_result_def()
    combiner = region_def("single_block")
    # isolated: CSE must not swap a combiner's constants for equal ones outside it
    traits = traits_def(RecursiveMemoryEffect(), IsolatedFromAbove())

    def result_type(self, src: TensorType) -> Attribute:
        raise NotImplementedError

    def verify_(self) -> None:
        if not self.srcs:
            raise VerifyException(f"{self.name} needs at least one operand")
        shape = self.srcs[0].type.get_shape()
        if any(s.type.get_shape() != shape for s in self.srcs):
            raise VerifyException(f"{self.name} operands must have one shape")
        if not 0 <= self.axis.value.data < len(shape):
            raise VerifyException(f"{self.name} axis must be a dimension of the operands")
        want = [self.result_type(s.type) for s in self.srcs]
        if len(self.outs) != len(want) or not all(
                _same_tile(r.type, w) for r, w in zip(self.outs, want)):
            raise VerifyException(f"{self.name} results must be {', '.join(map(str, want))}")
        elems = [s.type.element_type for s in self.srcs]
        if list(self.combiner.block.arg_types) != elems * 2:
            raise VerifyException(f"{self.name} combiner must take the operands' element "
                                  "types twice")
        last = self.combiner.block.last_op
        if not isinstance(last, YieldOp) or [v.type for v in last.values] != elems:
            raise VerifyException(f"{self.name} combiner must end in tile.yield of the "
                                  "operands' element types")


def _same_tile(t: Attribute, want: Attribute) -> bool:
    """Equal up to the layout (which assign-layouts decides)."""
    if isinstance(t, TensorType) and isinstance(want, TensorType):
        return t.element_type == want.element_type and t.get_shape() == want.get_shape()
    return t == want


def reduced_type(t: TensorType, axis: int) -> Attribute:
    """``t`` without dimension ``axis`` (a scalar for a 1-D tile); a layout becomes its
    ``#tile.slice`` along ``axis``."""
    shape = [n for d, n in enumerate(t.get_shape()) if d != axis]
    if not shape:
        return t.element_type
    if is_layout(t.encoding):
        return TensorType(t.element_type, shape, SliceLayoutAttr(axis, t.encoding))
    return TensorType(t.element_type, shape)


@irdl_op_definition
class ReduceOp(_CombineOp):
    """Tiles reduced along ``axis`` by an associative, commutative combiner."""

    name = "tile.reduce"
    assembly_format = (
        "$srcs `axis` $axis attr-dict `:` type($srcs) `->` type($outs) $combiner")

    def __init__(self, srcs: Sequence[SSAValue], axis: int, combiner: Region):
        super().__init__(operands=[srcs], regions=[combiner],
                         result_types=[[reduced_type(s.type, axis) for s in srcs]],
                         properties={"axis": IntegerAttr(axis, i32)})

    def result_type(self, src: TensorType) -> Attribute:
        return reduced_type(src, self.axis.value.data)


@irdl_op_definition
class ScanOp(_CombineOp):
    """Inclusive scans along ``axis`` by an associative combiner; ``reverse`` is flip,
    scan, flip (element i combines elements n-1 down to i)."""

    name = "tile.scan"
    reverse = opt_prop_def(UnitAttr)
    assembly_format = ("$srcs `axis` $axis (`reverse` $reverse^)? attr-dict"
                       " `:` type($srcs) `->` type($outs) $combiner")

    def __init__(self, srcs: Sequence[SSAValue], axis: int, combiner: Region,
                 reverse: bool = False):
        props: dict[str, Attribute] = {"axis": IntegerAttr(axis, i32)}
        if reverse:
            props["reverse"] = UnitAttr()
        super().__init__(operands=[srcs], result_types=[[s.type for s in srcs]],
                         regions=[combiner], properties=props)

    @property
    def is_reverse(self) -> bool:
        return self.reverse is not None

    def result_type(self, src: TensorType) -> Attribute:
        return src


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Ends a combiner region with the combined scalars."""

    name = "tile.yield"
    values = var_operand_def()
    assembly_format = "($values^ `:` type($values))? attr-dict"
    traits = traits_def(IsTerminator(), Pure(), HasParent(ReduceOp, ScanOp))

    def __init__(self, values: Sequence[SSAValue]):
        super().__init__(operands=[values])
