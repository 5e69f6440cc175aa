"""The tile dialect: whole tiles as SSA values, the way a kernel author thinks.

Tiles are builtin ranked tensors (``tensor<128xf32>``); elementwise math on them is
``arith``/``math``. This dialect adds what those lack: program ids, ``range``, ``splat``,
pointers and pointer arithmetic, and masked memory access. After ``assign-layouts`` the
tensor types carry a ``#tile.blocked`` encoding that says how a tile is spread over the
threads of a program.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod
from typing import ClassVar

from xdsl.dialects.builtin import (
    I32,
    AnyFloat,
    ArrayAttr,
    DenseArrayBase,
    IntAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    UnitAttr,
    VectorType,
    i32,
)
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute, Region, SSAValue, TypeAttribute
from xdsl.irdl import (
    AnyAttr,
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    VarConstraint,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.traits import (
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    NoMemoryEffect,
    Pure,
    RecursiveMemoryEffect,
)
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
        if len({_shape(a.type) for a in self.args} - {()}) > 1:
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


ATOMIC_KINDS = ("add", "max", "min", "umax", "umin", "xchg")
"""``tile.atomic_rmw`` kinds; ``umax``/``umin`` read integers as unsigned (types are
signless); on floats ``max``/``min`` are ``arith.maximumf``/``minimumf``."""


def check_atomic(op: IRDLOperation, kind: str | None, value_type: Attribute) -> None:
    """The atomic kind suits the element type: integers (not i1) or floats."""
    if kind is not None and kind not in ATOMIC_KINDS:
        raise VerifyException(f"{op.name}: unknown kind {kind!r}")
    elem = element_type(value_type)
    if isinstance(elem, IntegerType) and elem.width.data > 1:
        return
    if not isinstance(elem, AnyFloat):
        raise VerifyException(f"{op.name} operates on integers or floats, not {elem}")
    if kind in ("umax", "umin"):
        raise VerifyException(f"{op.name} {kind} needs integers")


@irdl_op_definition
class AtomicRMWOp(IRDLOperation):
    """Per element where ``mask`` holds, atomically ``*ptr = kind(*ptr, val)``; the result
    is the old value (0 where ``mask`` is false: masked-off memory is not read)."""

    name = "tile.atomic_rmw"
    T: ClassVar = VarConstraint("T", AnyAttr())
    kind = prop_def(StringAttr)
    ptr = operand_def()
    val = operand_def(T)
    mask = opt_operand_def()
    result = result_def(T)
    assembly_format = (
        "$kind `,` $ptr `,` $val (`mask` $mask^ `:` type($mask))? attr-dict"
        " `:` type($ptr) `,` type($val)"
    )

    def __init__(self, kind: str, ptr: SSAValue, val: SSAValue, mask: SSAValue | None = None):
        super().__init__(operands=[ptr, val, mask], result_types=[val.type],
                         properties={"kind": StringAttr(kind)})

    def verify_(self) -> None:
        _check_atomic_operands(self, self.ptr, self.val, self.mask)
        check_atomic(self, self.kind.data, self.val.type)


@irdl_op_definition
class AtomicCASOp(IRDLOperation):
    """Per element where ``mask`` holds, atomically ``old = *ptr; if old == cmp (same
    bits): *ptr = val``; the result is ``old`` (0 where ``mask`` is false)."""

    name = "tile.atomic_cas"
    T: ClassVar = VarConstraint("T", AnyAttr())
    ptr = operand_def()
    cmp = operand_def(T)
    val = operand_def(T)
    mask = opt_operand_def()
    result = result_def(T)
    assembly_format = (
        "$ptr `,` $cmp `,` $val (`mask` $mask^ `:` type($mask))? attr-dict"
        " `:` type($ptr) `,` type($val)"
    )

    def __init__(self, ptr: SSAValue, cmp: SSAValue, val: SSAValue,
                 mask: SSAValue | None = None):
        super().__init__(operands=[ptr, cmp, val, mask], result_types=[val.type])

    def verify_(self) -> None:
        _check_atomic_operands(self, self.ptr, self.val, self.mask)
        check_atomic(self, None, self.val.type)


def _check_atomic_operands(op: IRDLOperation, ptr: SSAValue, val: SSAValue,
                           mask: SSAValue | None) -> None:
    ptr_t = element_type(ptr.type)
    if not isinstance(ptr_t, PtrType):
        raise VerifyException(f"{op.name} expects a pointer or tile of pointers")
    if val.type != like(ptr.type, ptr_t.pointee):
        raise VerifyException(f"{op.name} value must have the pointee type")
    _check_mask(op, ptr, mask)


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
    if isinstance(t.encoding, BlockedLayoutAttr | SliceLayoutAttr):
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


def layout_of(t: Attribute) -> Attribute | None:
    """The layout encoding of a tile type, or None (before ``assign-layouts``)."""
    enc = t.encoding if isinstance(t, TensorType) else None
    return enc if isinstance(enc, BlockedLayoutAttr | SliceLayoutAttr) else None


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


Tile = Dialect(
    "tile",
    [PrintOp, AssertOp, ProgramIdOp, NumProgramsOp, RangeOp, SplatOp, AddPtrOp, LoadOp, StoreOp,
     CmpIOp, CmpFOp, SelectOp, AtomicRMWOp, AtomicCASOp, ReduceOp, ScanOp, YieldOp,
     ExpandDimsOp, BroadcastOp, ReshapeOp, TransOp, ConvertLayoutOp],
    [PtrType, BlockedLayoutAttr, SliceLayoutAttr],
)
