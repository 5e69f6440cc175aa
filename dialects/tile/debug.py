"""``print`` and ``assert``: debugging ops (the GPU backends drop them unless debug=True)."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    IntegerType,
    StringAttr,
)
from xdsl.ir import SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    var_operand_def,
)
from xdsl.utils.exceptions import VerifyException

from dialects.tile.memory import static_shape
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
