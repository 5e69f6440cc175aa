"""Array views (cuTile's arrays): a pointer with a runtime shape and strides, read and
written a whole tile at a time by tile-granular indices.

``tile.make_view`` makes an ``!tile.array<f32, 2>`` (1 to 5 dimensions) from a base
pointer and one ``i32`` shape and stride (in elements) per dimension;
``tile.view_load``/``tile.view_store`` move the tile at ``index * tile_shape`` (one index
per dimension), padding the parts outside the array on load (``padding``) and dropping
them on store. A tile may have fewer dimensions than its array: it spans the array's
last ones, and is one element long along each leading one (tiles and arrays have up to
five dimensions); a scalar is the tile of one element. With the unit
property ``elements`` (Triton's tensor descriptors) the indices are element offsets
instead, any ``i32``, negative ones included: the tile starts at ``index``. The pass
``lower-array-views`` turns them into pointer arithmetic and masked ``tile.load``/
``tile.store``, so no backend sees these ops. With ``debug=True`` it puts a
``tile.check_tile_index`` next to each tile-indexed access: an index whose tile lies
wholly outside the array reads the padding and writes nothing, as any index does, but
the NumPy backend then reports it; the GPU backends drop the check. An ``elements``
access gets none.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    I32,
    I64,
    AnyFloat,
    DenseArrayBase,
    IntAttr,
    StringAttr,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.ir import Attribute, Operation, ParametrizedAttribute, SSAValue, TypeAttribute
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.traits import (
    DefaultResource,
    EffectInstance,
    MemoryEffect,
    MemoryEffectKind,
    Pure,
)
from xdsl.utils.exceptions import VerifyException

from dialects.tile.types import PtrType

MAX_ARRAY_RANK = 5
"""Dimensions an array view may have (cuTile's arrays go to 5; tiles stop at 3)."""

PADDING_MODES = ("zero", "neg_inf", "pos_inf", "nan", "undetermined")
"""What a ``tile.view_load`` reads outside the array (``undetermined``: any value; tilec
reads zero). The infinities and NaN need a float element type."""


@irdl_attr_definition
class ArrayType(ParametrizedAttribute, TypeAttribute):
    """A view of a strided array of ``element`` with ``rank`` dimensions."""

    name = "tile.array"
    element: Attribute
    rank_attr: IntAttr

    def __init__(self, element: Attribute, rank: int):
        super().__init__(element, IntAttr(rank))

    @property
    def rank(self) -> int:
        return self.rank_attr.data

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        with parser.in_angle_brackets():
            element = parser.parse_type()
            parser.parse_punctuation(",")
            rank = parser.parse_integer(allow_boolean=False, allow_negative=False)
        return [element, IntAttr(rank)]

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<")
        printer.print_attribute(self.element)
        printer.print_string(f", {self.rank}>")

    def verify(self) -> None:
        if not 1 <= self.rank <= MAX_ARRAY_RANK:
            raise VerifyException(f"tile.array has 1 to {MAX_ARRAY_RANK} dimensions, got "
                                  f"{self.rank}")


@irdl_op_definition
class MakeViewOp(IRDLOperation):
    """A view of the array at ``base`` with ``shape`` and ``strides`` (in elements)."""

    name = "tile.make_view"
    base = operand_def(PtrType)
    shape = var_operand_def(I32)
    strides = var_operand_def(I32)
    result = result_def(ArrayType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = ("$base `shape` `[` $shape `]` `strides` `[` $strides `]` attr-dict"
                       " `:` type($base) `->` type($result)")
    traits = traits_def(Pure())

    def __init__(self, base: SSAValue, shape: Sequence[SSAValue],
                 strides: Sequence[SSAValue]):
        assert isinstance(base.type, PtrType)
        super().__init__(operands=[base, shape, strides],
                         result_types=[ArrayType(base.type.pointee, len(shape))])

    def verify_(self) -> None:
        view = self.result.type
        assert isinstance(view, ArrayType) and isinstance(self.base.type, PtrType)
        if view.element != self.base.type.pointee:
            raise VerifyException("tile.make_view element type must be the pointee type")
        if len(self.shape) != view.rank or len(self.strides) != view.rank:
            raise VerifyException(f"tile.make_view of rank {view.rank} needs {view.rank} "
                                  "shape and stride values")


def view_tile_shape(tile_type: Attribute) -> tuple[int, ...]:
    """The shape of a view access's tile: a scalar's is ``()``."""
    return tuple(tile_type.get_shape()) if isinstance(tile_type, TensorType) else ()


def _check_index(op: IRDLOperation, view: SSAValue, index: Sequence[SSAValue],
                 tile_type: Attribute) -> ArrayType:
    """The view's rank matches the index and is at least the tile's; the tile (or
    scalar) holds the view's elements."""
    array = view.type
    assert isinstance(array, ArrayType)
    if len(index) != array.rank:
        raise VerifyException(f"{op.name}: an array of rank {array.rank} needs "
                              f"{array.rank} indices, got {len(index)}")
    elem = tile_type.get_element_type() if isinstance(tile_type, TensorType) else tile_type
    if elem != array.element:
        raise VerifyException(f"{op.name}: the tile must be a tensor or scalar of "
                              f"{array.element}")
    shape = view_tile_shape(tile_type)
    if len(shape) > array.rank:
        raise VerifyException(f"{op.name}: tile of rank {len(shape)} for an array of "
                              f"rank {array.rank}")
    if any(n <= 0 or n & (n - 1) for n in shape):
        raise VerifyException(f"{op.name}: tile dimensions must be powers of two")
    return array


@irdl_op_definition
class ViewLoadOp(IRDLOperation):
    """The tile at ``index * shape(result)`` (at ``index`` with ``elements``); elements
    outside the array read ``padding``."""

    name = "tile.view_load"
    view = operand_def(ArrayType)
    index = var_operand_def(I32)
    padding = prop_def(StringAttr)
    elements = opt_prop_def(UnitAttr)
    result = result_def()
    assembly_format = ("$view `[` $index `]` `padding` $padding (`elements` $elements^)?"
                       " attr-dict `:` type($view) `->` type($result)")

    def __init__(self, view: SSAValue, index: Sequence[SSAValue], result_type: Attribute,
                 padding: str = "zero", elements: bool = False):
        props: dict[str, Attribute] = {"padding": StringAttr(padding)}
        if elements:
            props["elements"] = UnitAttr()
        super().__init__(operands=[view, index], result_types=[result_type],
                         properties=props)

    def verify_(self) -> None:
        array = _check_index(self, self.view, self.index, self.result.type)
        mode = self.padding.data
        if mode not in PADDING_MODES:
            raise VerifyException(f"tile.view_load: unknown padding {mode!r}; "
                                  f"choose from {', '.join(PADDING_MODES)}")
        if mode in ("neg_inf", "pos_inf", "nan") and not isinstance(array.element, AnyFloat):
            raise VerifyException(f"tile.view_load: padding {mode!r} needs a float "
                                  f"element type, got {array.element}")


@irdl_op_definition
class ViewStoreOp(IRDLOperation):
    """Write ``value`` as the tile at ``index * shape(value)`` (at ``index`` with
    ``elements``); parts outside the array are dropped."""

    name = "tile.view_store"
    view = operand_def(ArrayType)
    index = var_operand_def(I32)
    value = operand_def()
    elements = opt_prop_def(UnitAttr)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = ("$view `[` $index `]` `,` $value (`elements` $elements^)? attr-dict"
                       " `:` type($view) `,` type($value)")

    def __init__(self, view: SSAValue, index: Sequence[SSAValue], value: SSAValue,
                 elements: bool = False):
        super().__init__(operands=[view, index, value],
                         properties={"elements": UnitAttr()} if elements else {})

    def verify_(self) -> None:
        _check_index(self, self.view, self.index, self.value.type)


class _FailsLaunch(MemoryEffect):
    """A check that may fail the launch but touches no memory. xDSL has no effect kind
    for that: unknown effects would count as writes, and then CSE would not merge loads
    across a check nor pipeline-loads prefetch past one, so GPU code would change; a read
    would let dead-code elimination delete it (it has no results). An allocation of no
    value is neither: kept, and transparent to loads."""

    @classmethod
    def get_effects(cls, op: Operation) -> set[EffectInstance]:
        return {EffectInstance(MemoryEffectKind.ALLOC, None, DefaultResource())}


@irdl_op_definition
class CheckTileIndexOp(IRDLOperation):
    """Fail the ``access`` (load or store) whose tile of shape ``tile`` starts at element
    ``start`` (index * tile) wholly outside the array ``array`` of ``shape``."""

    # Starts, not indices: the access computes them anyway, so the check keeps no value
    # alive that the access does not, and dropping it leaves the GPU code as without it.
    name = "tile.check_tile_index"
    start = var_operand_def(I32)
    shape = var_operand_def(I32)
    tile = prop_def(DenseArrayBase.constr(I64))
    access = prop_def(StringAttr)
    array = prop_def(StringAttr)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = ("$access $array `start` `[` $start `]` `tile` $tile `shape` `[` $shape"
                       " `]` attr-dict")
    traits = traits_def(_FailsLaunch())

    def __init__(self, access: str, array: str, start: Sequence[SSAValue],
                 tile: Sequence[int], shape: Sequence[SSAValue]):
        super().__init__(operands=[start, shape], properties={
            "tile": DenseArrayBase.from_list(i64, list(tile)),
            "access": StringAttr(access), "array": StringAttr(array)})

    def verify_(self) -> None:
        tile = self.tile.get_values()
        if not len(self.start) == len(self.shape) == len(tile):
            raise VerifyException(f"tile.check_tile_index: {len(self.start)} starts, "
                                  f"{len(tile)} tile dimensions and {len(self.shape)} "
                                  "array dimensions differ")
        if any(n <= 0 for n in tile):
            raise VerifyException("tile.check_tile_index: tile dimensions must be positive")
        if self.access.data not in ("load", "store"):
            raise VerifyException("tile.check_tile_index: access must be \"load\" or "
                                  "\"store\"")


__all__ = ["MAX_ARRAY_RANK", "PADDING_MODES", "ArrayType", "CheckTileIndexOp", "MakeViewOp",
           "ViewLoadOp", "ViewStoreOp", "view_tile_shape"]
