"""Program ids, ``range``, ``splat``, pointer arithmetic, casts between integer addresses and
pointers, and masked ``load``/``store``."""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    I32,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    TensorType,
    i32,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AnyAttr,
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    VarConstraint,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import (
    NoMemoryEffect,
    Pure,
)
from xdsl.utils.exceptions import VerifyException

from dialects.tile.types import (
    PtrType,
    element_type,
    like,
)


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


def is_zero(v: SSAValue | None) -> bool:
    """Whether ``v`` is absent or a zero constant (a tile: splat of one)."""
    if v is None:
        return True
    op = v.owner
    if isinstance(op, SplatOp):
        return is_zero(op.value)
    if not isinstance(op, arith.ConstantOp):
        return False
    value = op.value
    if isinstance(value, DenseIntOrFPElementsAttr):
        return value.is_splat() and next(iter(value.iter_values())) == 0
    return isinstance(value, IntegerAttr | FloatAttr) and value.value.data == 0


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
        if static_shape(self.offset.type) not in ((), static_shape(self.ptr.type)):
            raise VerifyException("tile.addptr offset shape must match the pointers")
        if self.result.type != self.ptr.type:
            raise VerifyException("tile.addptr result type must match the pointers")


class _AddressCast(IRDLOperation):
    """A cast between 64-bit integer addresses and pointers, element by element."""

    FROM_INT: ClassVar[bool]  # integers to pointers (else pointers to integers)
    x = operand_def()
    result = result_def()
    assembly_format = "$x attr-dict `:` type($x) `->` type($result)"
    traits = traits_def(Pure())

    def __init__(self, x: SSAValue, result_type: Attribute):
        super().__init__(operands=[x], result_types=[result_type])

    def verify_(self) -> None:
        src, dst = self.x.type, self.result.type
        if static_shape(src) != static_shape(dst):
            raise VerifyException(f"{self.name} result must have the operand's shape")
        ints, ptrs = (src, dst) if self.FROM_INT else (dst, src)
        if element_type(ints) != IntegerType(64):
            raise VerifyException(f"{self.name}: addresses must be i64")
        if not isinstance(element_type(ptrs), PtrType):
            raise VerifyException(f"{self.name}: expected a pointer or tile of pointers")


@irdl_op_definition
class IntToPtrOp(_AddressCast):
    """Pointers to the addresses an i64 scalar or tile holds (Triton's ``int_to_ptr``)."""

    name = "tile.int_to_ptr"
    FROM_INT: ClassVar[bool] = True


@irdl_op_definition
class PtrToIntOp(_AddressCast):
    """The i64 addresses of a pointer or tile of pointers."""

    name = "tile.ptr_to_int"
    FROM_INT: ClassVar[bool] = False


def static_shape(t: Attribute) -> tuple[int, ...]:
    return t.get_shape() if isinstance(t, TensorType) else ()


def check_mask(op: IRDLOperation, ptr: SSAValue, mask: SSAValue | None) -> None:
    if mask is None:
        return
    if element_type(mask.type) != IntegerType(1) or static_shape(mask.type) != static_shape(ptr.type):
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
        check_mask(self, self.ptr, self.mask)


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
        check_mask(self, self.ptr, self.mask)
