"""Shape ops: tiles in, tiles out, the same elements rearranged (``gather`` picks them by
an index tile, ``extract`` a window of them)."""

from __future__ import annotations

from collections.abc import Sequence
from math import prod
from typing import ClassVar

from xdsl.dialects.builtin import (
    I32,
    DenseArrayBase,
    IntegerAttr,
    IntegerType,
    TensorType,
    i32,
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

from dialects.tile.types import (
    PtrType,
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


@irdl_op_definition
class JoinOp(IRDLOperation):
    """``lhs`` and ``rhs`` side by side along a new last dimension of size 2."""

    name = "tile.join"
    T: ClassVar = VarConstraint("T", BaseAttr(TensorType))
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$lhs `,` $rhs attr-dict `:` type($lhs) `->` type($result)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue):
        t = lhs.type
        super().__init__(operands=[lhs, rhs], result_types=[
            TensorType(t.element_type, [*t.get_shape(), 2])])

    def verify_(self) -> None:
        t, r = self.lhs.type, self.result.type
        if r.element_type != t.element_type or r.get_shape() != (*t.get_shape(), 2):
            raise VerifyException("tile.join result must be the operand type with a last "
                                  "dimension of 2")


class _HalvesOfColumns(RewritePattern):
    """``split(permute(reshape(x, (M, 2, N / 2)), (0, 2, 1)))`` -> ``x[:, :N / 2]``,
    ``x[:, N / 2:]`` (the epilogue subtiling of Triton's persistent matmul): two windows
    of ``x`` instead of two rearrangements and a split, so where each thread holds its
    halves' columns (a dot's layouts) the lowering picks registers, with no trip through
    shared memory. Rooted at the split; the reshape and permute may have other uses."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, SplitOp) or not isinstance(trans := op.src.owner, TransOp):
            return
        reshape = trans.src.owner
        if not isinstance(reshape, ReshapeOp) or trans.permutation != (0, 2, 1):
            return
        x = reshape.src
        shape = x.type.get_shape()
        if (len(shape) != 2 or reshape.result.type.get_shape() != (shape[0], 2, shape[1] // 2)
                or isinstance(x.type.element_type, PtrType)):
            return
        half = op.lhs.type
        lhs, rhs = ExtractOp(x, [0, 0], half), ExtractOp(x, [0, shape[1] // 2], half)
        rewriter.replace(op, [lhs, rhs], [lhs.result, rhs.result])


class _SplitCanonicalization(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return (_HalvesOfColumns(),)


@irdl_op_definition
class SplitOp(IRDLOperation):
    """The two halves of ``src`` along its last dimension, which must be 2."""

    name = "tile.split"
    T: ClassVar = VarConstraint("T", BaseAttr(TensorType))
    src = operand_def(TensorType)
    lhs = result_def(T)
    rhs = result_def(T)
    traits = traits_def(Pure(), _SplitCanonicalization())
    assembly_format = "$src attr-dict `:` type($src) `->` type($lhs)"

    def __init__(self, src: SSAValue):
        t = src.type
        half = TensorType(t.element_type, t.get_shape()[:-1])
        super().__init__(operands=[src], result_types=[half, half])

    def verify_(self) -> None:
        t, r = self.src.type, self.lhs.type
        if t.get_shape()[-1:] != (2,) or len(t.get_shape()) < 2:
            raise VerifyException("tile.split operand must have a last dimension of 2")
        if r.element_type != t.element_type or r.get_shape() != t.get_shape()[:-1]:
            raise VerifyException("tile.split results must be the operand type without "
                                  "its last dimension")


@irdl_op_definition
class ExtractOp(_ShapeOp):
    """The window of ``src`` at ``offsets``, of the result's shape (inside ``src``)."""

    name = "tile.extract"
    offsets = prop_def(DenseArrayBase.constr(I32))
    assembly_format = "$src `,` $offsets attr-dict `:` type($src) `->` type($result)"

    def __init__(self, src: SSAValue, offsets: Sequence[int], result_type: Attribute):
        super().__init__(operands=[src], result_types=[result_type],
                         properties={"offsets": DenseArrayBase.from_list(i32, list(offsets))})

    @property
    def start(self) -> tuple[int, ...]:
        return tuple(self.offsets.get_values())

    def verify_(self) -> None:
        shape, want = self.src.type.get_shape(), self.result.type.get_shape()
        if len(self.start) != len(shape) or len(want) != len(shape) or any(
                o < 0 or o + w > n for o, w, n in zip(self.start, want, shape, strict=True)):
            raise VerifyException("tile.extract window must lie inside the operand, one "
                                  "offset per dimension")
        self._check(want)


@irdl_op_definition
class FlipOp(_ShapeOp):
    """``src`` reversed along dimension ``dim``."""

    name = "tile.flip"
    dim = prop_def(IntegerAttr[I32])
    assembly_format = "$src `,` $dim attr-dict `:` type($src) `->` type($result)"

    def __init__(self, src: SSAValue, dim: int):
        super().__init__(operands=[src], result_types=[src.type],
                         properties={"dim": IntegerAttr(dim, i32)})

    def verify_(self) -> None:
        shape = self.src.type.get_shape()
        if not 0 <= self.dim.value.data < len(shape):
            raise VerifyException("tile.flip dim must be in 0..rank-1")
        self._check(shape)
        if layout_of(self.src.type) != layout_of(self.result.type):
            raise VerifyException("tile.flip keeps the layout")


@irdl_op_definition
class GatherOp(IRDLOperation):
    """``out[c] = src[c with c[axis] = index[c]]`` (``index`` clamped to the axis), the
    result shaped like ``index``."""

    name = "tile.gather"
    src = operand_def(TensorType)
    index = operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr[I32])
    traits = traits_def(Pure())
    assembly_format = ("$src `[` $index `]` `,` $axis attr-dict `:` type($src) `,` "
                       "type($index) `->` type($result)")

    def __init__(self, src: SSAValue, index: SSAValue, axis: int):
        t = TensorType(src.type.element_type, index.type.get_shape())
        super().__init__(operands=[src, index], result_types=[t],
                         properties={"axis": IntegerAttr(axis, i32)})

    def verify_(self) -> None:
        src, idx = self.src.type.get_shape(), self.index.type.get_shape()
        axis = self.axis.value.data
        if not 0 <= axis < len(src):
            raise VerifyException("tile.gather axis must be in 0..rank-1")
        if len(idx) != len(src) or any(a != b for d, (a, b) in enumerate(zip(src, idx))
                                       if d != axis):
            raise VerifyException("tile.gather index must have the operand's shape except "
                                  "along axis")
        if not isinstance(self.index.type.element_type, IntegerType):
            raise VerifyException("tile.gather index must be integers")
        r = self.result.type
        if r.element_type != self.src.type.element_type or r.get_shape() != idx:
            raise VerifyException("tile.gather result must have the index's shape and the "
                                  "operand's element type")
        if layout_of(self.index.type) != layout_of(r):
            raise VerifyException("tile.gather result must have the index's layout")
