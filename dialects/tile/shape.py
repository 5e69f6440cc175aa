"""Shape ops: one tile in, one tile out, the same elements rearranged."""

from __future__ import annotations

from collections.abc import Sequence
from math import prod

from xdsl.dialects.builtin import (
    I32,
    DenseArrayBase,
    IntegerAttr,
    TensorType,
    i32,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import (
    Pure,
)
from xdsl.utils.exceptions import VerifyException

from dialects.tile.types import (
    SliceLayoutAttr,
    layout_of,
)


class _ShapeOp(IRDLOperation):
    """One tile in, one tile out, the same elements (values or pointers) rearranged."""

    src = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def _check(self, shape: Sequence[int]) -> None:
        if self.src.type.element_type != self.result.type.element_type:
            raise VerifyException(f"{self.name} keeps the element type")
        if tuple(shape) != self.result.type.get_shape():
            raise VerifyException(f"{self.name} result must have shape {list(shape)}")


@irdl_op_definition
class ExpandDimsOp(_ShapeOp):
    """``src`` with a dimension of size 1 inserted at ``axis`` (``x[:, None]``); with
    layouts, ``src`` has the ``#tile.slice`` along ``axis`` of the result's."""

    name = "tile.expand_dims"
    axis = prop_def(IntegerAttr[I32])
    assembly_format = "$src `,` $axis attr-dict `:` type($src) `->` type($result)"

    def __init__(self, src: SSAValue, axis: int, result_type: Attribute | None = None):
        if result_type is None:
            shape = list(src.type.get_shape())
            shape.insert(axis, 1)
            result_type = TensorType(src.type.element_type, shape)
        super().__init__(operands=[src], result_types=[result_type],
                         properties={"axis": IntegerAttr(axis, i32)})

    def verify_(self) -> None:
        axis, shape = self.axis.value.data, list(self.src.type.get_shape())
        if not 0 <= axis <= len(shape):
            raise VerifyException("tile.expand_dims axis must be in 0..rank")
        self._check(shape[:axis] + [1] + shape[axis:])
        src, res = layout_of(self.src.type), layout_of(self.result.type)
        if (src or res) and (res is None or src != SliceLayoutAttr(axis, res)):
            raise VerifyException("tile.expand_dims operand layout must be the #tile.slice "
                                  "along axis of the result layout")


@irdl_op_definition
class BroadcastOp(_ShapeOp):
    """``src`` stretched along its dimensions of size 1 to the result's shape."""

    name = "tile.broadcast"
    assembly_format = "$src attr-dict `:` type($src) `->` type($result)"

    def __init__(self, src: SSAValue, result_type: Attribute):
        super().__init__(operands=[src], result_types=[result_type])

    def verify_(self) -> None:
        shape, want = self.src.type.get_shape(), self.result.type.get_shape()
        if len(shape) != len(want) or any(n not in (1, w) for n, w in zip(shape, want)):
            raise VerifyException(f"tile.broadcast cannot stretch {list(shape)} to {list(want)}")
        self._check(want)
        if layout_of(self.src.type) != layout_of(self.result.type):
            raise VerifyException("tile.broadcast keeps the layout")


@irdl_op_definition
class ReshapeOp(_ShapeOp):
    """The elements of ``src`` in row-major order, in the result's shape."""

    name = "tile.reshape"
    assembly_format = "$src attr-dict `:` type($src) `->` type($result)"

    def __init__(self, src: SSAValue, result_type: Attribute):
        super().__init__(operands=[src], result_types=[result_type])

    def verify_(self) -> None:
        want = self.result.type.get_shape()
        if prod(self.src.type.get_shape()) != prod(want):
            raise VerifyException("tile.reshape keeps the number of elements")
        self._check(want)


@irdl_op_definition
class TransOp(_ShapeOp):
    """Dimensions permuted: result dimension ``i`` is ``src`` dimension ``order[i]``."""

    name = "tile.trans"
    order = prop_def(DenseArrayBase.constr(I32))
    assembly_format = "$src `,` $order attr-dict `:` type($src) `->` type($result)"

    def __init__(self, src: SSAValue, order: Sequence[int]):
        shape = src.type.get_shape()
        super().__init__(operands=[src],
                         result_types=[TensorType(src.type.element_type,
                                                  [shape[d] for d in order])],
                         properties={"order": DenseArrayBase.from_list(i32, list(order))})

    @property
    def permutation(self) -> tuple[int, ...]:
        return tuple(self.order.get_values())

    def verify_(self) -> None:
        shape, order = self.src.type.get_shape(), self.permutation
        if sorted(order) != list(range(len(shape))):
            raise VerifyException("tile.trans order must be a permutation of the dimensions")
        self._check([shape[d] for d in order])


@irdl_op_definition
class ConvertLayoutOp(_ShapeOp):
    """The same tile in another layout (threads exchange elements)."""

    name = "tile.convert_layout"
    assembly_format = "$src attr-dict `:` type($src) `->` type($result)"

    def __init__(self, src: SSAValue, result_type: Attribute):
        super().__init__(operands=[src], result_types=[result_type])

    def verify_(self) -> None:
        self._check(self.src.type.get_shape())
