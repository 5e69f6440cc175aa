"""``print``, ``assert`` and ``check_bounds``: debugging ops (the GPU backends drop them
unless debug=True)."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    I32,
    IntegerType,
    StringAttr,
    i32,
)
from xdsl.ir import SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    prop_def,
    var_operand_def,
)
from xdsl.utils.exceptions import VerifyException

from dialects.tile.memory import check_mask, static_shape
from dialects.tile.types import (
    PtrType,
    element_type,
)


@irdl_op_definition
class PrintOp(IRDLOperation):
    """``tl.device_print``: one line per program and element of ``args`` (scalars or
    tiles of one shape), after ``prefix``."""

    name = "tile.print"
    prefix = prop_def(StringAttr)
    args = var_operand_def()
    assembly_format = "$prefix attr-dict ($args^ `:` type($args))?"

    def __init__(self, prefix: str, args: Sequence[SSAValue]):
        super().__init__(operands=[args], properties={"prefix": StringAttr(prefix)})

    def verify_(self) -> None:
        if len({static_shape(a.type) for a in self.args} - {()}) > 1:
            raise VerifyException("tile.print operands must be scalars or tiles of one shape")
        if any(isinstance(element_type(a.type), PtrType) for a in self.args):
            raise VerifyException("tile.print cannot print pointers")


@irdl_op_definition
class AssertOp(IRDLOperation):
    """``tl.device_assert``: the launch fails where ``cond`` is false."""

    name = "tile.assert"
    cond = operand_def()
    message = prop_def(StringAttr)
    assembly_format = "$cond `,` $message attr-dict `:` type($cond)"

    def __init__(self, cond: SSAValue, message: str):
        super().__init__(operands=[cond], properties={"message": StringAttr(message)})

    def verify_(self) -> None:
        if element_type(self.cond.type) != IntegerType(1):
            raise VerifyException("tile.assert condition must be i1 (a scalar or a tile)")


@irdl_op_definition
class CheckBoundsOp(IRDLOperation):
    """``debug=True``: report the ``access`` of array ``array`` where ``mask`` holds and
    ``offset`` (elements from the array's start) lies outside ``[0, extent)``."""

    name = "tile.check_bounds"
    offset = operand_def()
    extent = operand_def(I32)
    mask = opt_operand_def()
    access = prop_def(StringAttr)
    array = prop_def(StringAttr)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = ("$access $array $offset `,` $extent (`mask` $mask^ `:` type($mask))?"
                       " attr-dict `:` type($offset)")

    def __init__(self, access: str, array: str, offset: SSAValue, extent: SSAValue,
                 mask: SSAValue | None = None):
        super().__init__(operands=[offset, extent, mask], properties={
            "access": StringAttr(access), "array": StringAttr(array)})

    def verify_(self) -> None:
        if element_type(self.offset.type) != i32:
            raise VerifyException("tile.check_bounds offsets must be i32 (a scalar or a tile)")
        check_mask(self, self.offset, self.mask)
