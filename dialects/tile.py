"""The tile dialect: whole tiles as SSA values, the way a kernel author thinks.

Tiles are builtin ranked tensors (``tensor<128xf32>``); elementwise math on them is
``arith``/``math``. This dialect adds what those lack: program ids, ``range``, ``splat``,
pointers and pointer arithmetic, and masked memory access. After ``assign-layouts`` the
tensor types carry a ``#tile.blocked`` encoding that says how a tile is spread over the
threads of a program.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    I32,
    ArrayAttr,
    IntAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    VectorType,
    i32,
)
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute, SSAValue, TypeAttribute
from xdsl.irdl import (
    AnyAttr,
    VarConstraint,
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.traits import NoMemoryEffect, Pure
from xdsl.utils.exceptions import VerifyException


@irdl_attr_definition
class PtrType(ParametrizedAttribute, TypeAttribute):
    """A pointer into global memory to elements of ``pointee``."""

    name = "tile.ptr"
    pointee: Attribute

    def __init__(self, pointee: Attribute):
        super().__init__(pointee)


@irdl_attr_definition
class BlockedLayoutAttr(ParametrizedAttribute):
    """How a tile is spread over a program's threads (Triton's blocked layout).

    Along each dimension a thread holds ``size_per_thread`` contiguous elements, a warp
    ``threads_per_warp`` threads and the program ``warps_per_cta`` warps; a tile larger
    than that footprint wraps around, so a thread holds several such chunks.
    """

    name = "tile.blocked"
    size_per_thread: ArrayAttr[IntAttr]
    threads_per_warp: ArrayAttr[IntAttr]
    warps_per_cta: ArrayAttr[IntAttr]

    def __init__(self, spt: Sequence[int], tpw: Sequence[int], wpc: Sequence[int]):
        def arr(v: Sequence[int]) -> ArrayAttr[IntAttr]:
            return ArrayAttr(IntAttr(x) for x in v)

        super().__init__(arr(spt), arr(tpw), arr(wpc))

    @property
    def spt(self) -> tuple[int, ...]:
        return tuple(a.data for a in self.size_per_thread.data)

    @property
    def tpw(self) -> tuple[int, ...]:
        return tuple(a.data for a in self.threads_per_warp.data)

    @property
    def wpc(self) -> tuple[int, ...]:
        return tuple(a.data for a in self.warps_per_cta.data)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        def ints() -> ArrayAttr[IntAttr]:
            items = parser.parse_comma_separated_list(
                parser.Delimiter.SQUARE, parser.parse_integer)
            return ArrayAttr(IntAttr(i) for i in items)

        params: list[Attribute] = []
        with parser.in_angle_brackets():
            for i, key in enumerate(("spt", "tpw", "wpc")):
                if i:
                    parser.parse_punctuation(",")
                parser.parse_keyword(key)
                parser.parse_punctuation("=")
                params.append(ints())
        return params

    def print_parameters(self, printer: Printer) -> None:
        fields = zip(("spt", "tpw", "wpc"), (self.spt, self.tpw, self.wpc), strict=True)
        body = ", ".join(f"{k} = [{', '.join(map(str, v))}]" for k, v in fields)
        printer.print_string(f"<{body}>")

    def verify(self) -> None:
        if not len(self.spt) == len(self.tpw) == len(self.wpc):
            raise VerifyException("blocked layout parameters must have the same rank")
        for n in self.spt + self.tpw + self.wpc:
            if n <= 0 or n & (n - 1):
                raise VerifyException("blocked layout sizes must be powers of two")


@irdl_attr_definition
class SliceLayoutAttr(ParametrizedAttribute):
    """The layout of ``parent`` with dimension ``dim`` removed: a thread holds the
    elements whose other coordinates it holds in ``parent`` (so threads that differ only
    along ``dim`` hold the same elements). Results of reductions along ``dim`` and
    operands of ``expand_dims`` at ``dim`` have it (Triton's SliceEncoding)."""

    name = "tile.slice"
    dim: IntAttr
    parent: Attribute

    def __init__(self, dim: int, parent: Attribute):
        super().__init__(IntAttr(dim), parent)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        with parser.in_angle_brackets():
            parser.parse_keyword("dim")
            parser.parse_punctuation("=")
            dim = parser.parse_integer()
            parser.parse_punctuation(",")
            parser.parse_keyword("parent")
            parser.parse_punctuation("=")
            parent = parser.parse_attribute()
        return [IntAttr(dim), parent]

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<dim = {self.dim.data}, parent = ")
        printer.print_attribute(self.parent)
        printer.print_string(">")

    def verify(self) -> None:
        if not isinstance(self.parent, BlockedLayoutAttr | SliceLayoutAttr):
            raise VerifyException("tile.slice parent must be a tile layout")


def element_type(t: Attribute) -> Attribute:
    """The scalar type of a tile or scalar type."""
    return t.element_type if isinstance(t, TensorType | VectorType) else t


def like(t: Attribute, elem: Attribute) -> Attribute:
    """``t`` with its element type replaced by ``elem`` (shape and layout kept)."""
    if isinstance(t, TensorType):
        return TensorType(elem, t.get_shape(), t.encoding)
    if isinstance(t, VectorType):
        return VectorType(elem, t.get_shape())
    return elem


class _AxisOp(IRDLOperation):
    axis = prop_def(IntegerAttr[I32])
    result = result_def(IntegerType)
    assembly_format = "$axis attr-dict `:` type($result)"
    traits = traits_def(NoMemoryEffect())

    def __init__(self, axis: int):
        super().__init__(properties={"axis": IntegerAttr(axis, i32)}, result_types=[i32])

    def verify_(self) -> None:
        if self.axis.value.data not in (0, 1, 2):
            raise VerifyException(f"{self.name} axis must be 0, 1 or 2")


@irdl_op_definition
class ProgramIdOp(_AxisOp):
    """The index of this program along a grid axis."""

    name = "tile.program_id"


@irdl_op_definition
class NumProgramsOp(_AxisOp):
    """The number of programs along a grid axis."""

    name = "tile.num_programs"


@irdl_op_definition
class RangeOp(IRDLOperation):
    """The 1-D tile ``[start, start + 1, ..., end - 1]`` of i32."""

    name = "tile.range"
    start = prop_def(IntegerAttr[I32])
    end = prop_def(IntegerAttr[I32])
    result = result_def(TensorType)
    assembly_format = "$start `,` $end attr-dict `:` type($result)"
    traits = traits_def(Pure())

    def __init__(self, start: int, end: int):
        super().__init__(
            properties={"start": IntegerAttr(start, i32), "end": IntegerAttr(end, i32)},
            result_types=[TensorType(i32, [end - start])],
        )

    def verify_(self) -> None:
        n = self.end.value.data - self.start.value.data
        if self.result.type.get_shape() != (n,) or self.result.type.element_type != i32:
            raise VerifyException(f"tile.range result must be tensor<{n}xi32>")


@irdl_op_definition
class SplatOp(IRDLOperation):
    """A tile with every element equal to a scalar."""

    name = "tile.splat"
    value = operand_def()
    result = result_def(TensorType)
    assembly_format = "$value attr-dict `:` type($value) `->` type($result)"
    traits = traits_def(Pure())

    def __init__(self, value: SSAValue, result_type: TensorType):
        super().__init__(operands=[value], result_types=[result_type])

    def verify_(self) -> None:
        if self.result.type.element_type != self.value.type:
            raise VerifyException("tile.splat result element type must match the scalar")


@irdl_op_definition
class AddPtrOp(IRDLOperation):
    """Pointer(s) advanced by a number of elements (not bytes)."""

    name = "tile.addptr"
    T: ClassVar = VarConstraint("T", AnyAttr())
    ptr = operand_def(T)
    offset = operand_def()
    result = result_def(T)
    assembly_format = "$ptr `,` $offset attr-dict `:` type($ptr) `,` type($offset)"
    traits = traits_def(Pure())

    def __init__(self, ptr: SSAValue, offset: SSAValue):
        super().__init__(operands=[ptr, offset], result_types=[ptr.type])

    def verify_(self) -> None:
        if not isinstance(element_type(self.ptr.type), PtrType):
            raise VerifyException("tile.addptr expects a pointer or tile of pointers")
        if not isinstance(element_type(self.offset.type), IntegerType):
            raise VerifyException("tile.addptr offset must be an integer")
        if _shape(self.offset.type) not in ((), _shape(self.ptr.type)):
            raise VerifyException("tile.addptr offset shape must match the pointers")
        if self.result.type != self.ptr.type:
            raise VerifyException("tile.addptr result type must match the pointers")


def _shape(t: Attribute) -> tuple[int, ...]:
    return t.get_shape() if isinstance(t, TensorType) else ()


def _check_mask(op: IRDLOperation, ptr: SSAValue, mask: SSAValue | None) -> None:
    if mask is None:
        return
    if element_type(mask.type) != IntegerType(1) or _shape(mask.type) != _shape(ptr.type):
        raise VerifyException(f"{op.name} mask must be i1 of the pointers' shape")


@irdl_op_definition
class LoadOp(IRDLOperation):
    """Read memory where ``mask`` is true; elsewhere the result is ``other``."""

    name = "tile.load"
    T: ClassVar = VarConstraint("T", AnyAttr())
    ptr = operand_def()
    mask = opt_operand_def()
    other = opt_operand_def(T)
    result = result_def(T)
    vec = opt_prop_def(IntegerAttr[I32])
    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
    assembly_format = (
        "$ptr (`mask` $mask^ `:` type($mask))? (`other` $other^)? attr-dict"
        " `:` type($ptr) `->` type($result)"
    )

    def __init__(self, ptr: SSAValue, mask: SSAValue | None = None,
                 other: SSAValue | None = None):
        ptr_t = element_type(ptr.type)
        assert isinstance(ptr_t, PtrType)
        super().__init__(operands=[ptr, mask, other],
                         result_types=[like(ptr.type, ptr_t.pointee)])

    def verify_(self) -> None:
        ptr_t = element_type(self.ptr.type)
        if not isinstance(ptr_t, PtrType):
            raise VerifyException("tile.load expects a pointer or tile of pointers")
        if self.result.type != like(self.ptr.type, ptr_t.pointee):
            raise VerifyException("tile.load result must be the pointee type")
        _check_mask(self, self.ptr, self.mask)


@irdl_op_definition
class StoreOp(IRDLOperation):
    """Write ``value`` where ``mask`` is true."""

    name = "tile.store"
    ptr = operand_def()
    value = operand_def()
    mask = opt_operand_def()
    vec = opt_prop_def(IntegerAttr[I32])
    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
    assembly_format = (
        "$ptr `,` $value (`mask` $mask^ `:` type($mask))? attr-dict"
        " `:` type($ptr) `,` type($value)"
    )

    def __init__(self, ptr: SSAValue, value: SSAValue, mask: SSAValue | None = None):
        super().__init__(operands=[ptr, value, mask])

    def verify_(self) -> None:
        ptr_t = element_type(self.ptr.type)
        if not isinstance(ptr_t, PtrType):
            raise VerifyException("tile.store expects a pointer or tile of pointers")
        if self.value.type != like(self.ptr.type, ptr_t.pointee):
            raise VerifyException("tile.store value must have the pointee type")
        _check_mask(self, self.ptr, self.mask)


CMPI_PREDICATES = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
CMPF_PREDICATES = ("oeq", "one", "olt", "ole", "ogt", "oge", "ord",
                   "ueq", "une", "ult", "ule", "ugt", "uge", "uno")


def i1_like(t: Attribute) -> Attribute:
    """i1 in the shape of ``t``: scalar, tile (tensor) or per-thread vector."""
    if isinstance(t, TensorType | VectorType):
        return like(t, IntegerType(1))
    return IntegerType(1)


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


Tile = Dialect(
    "tile",
    [ProgramIdOp, NumProgramsOp, RangeOp, SplatOp, AddPtrOp, LoadOp, StoreOp,
     CmpIOp, CmpFOp, SelectOp],
    [PtrType, BlockedLayoutAttr, SliceLayoutAttr],
)
