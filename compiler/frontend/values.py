"""Typed values of the frontend and the builder that emits their ops.

``Value`` is an SSA value with its dtype, shape and pointer-ness; ``Builder`` appends ops
stamped with the current source location. Here too: constants, splats, broadcasting
(NumPy's rules), casts and the walk from a pointer back to its parameter. Promotion and
operators are in ``compiler.frontend.operators``.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    BFloat16Type,
    FileLineColLoc,
    Float8E4M3FNType,
    Float8E5M2Type,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

import compiler.language as tl
from compiler.errors import CompileError
from compiler.fp8 import fp8_value
from dialects import arith_shaped as casts
from dialects import tile

_FLOAT_TYPES = {"f16": Float16Type(), "bf16": BFloat16Type(), "f32": Float32Type(),
                "f64": Float64Type(), "fp8e4nv": Float8E4M3FNType(), "fp8e5": Float8E5M2Type()}


def ir_type(d: tl.dtype) -> Attribute:
    """The signless xDSL scalar type of a dtype."""
    return _FLOAT_TYPES[d.short] if d.is_float else IntegerType(d.bits)


@dataclass(frozen=True)
class Value:
    """A typed SSA value: a scalar (shape ``()``) or a tile; a pointer when ``is_ptr``
    (then ``dtype`` is the pointee)."""

    ssa: SSAValue
    dtype: tl.dtype
    shape: tuple[int, ...] = ()
    is_ptr: bool = False

    def describe(self) -> str:
        base = f"pointer to {self.dtype}" if self.is_ptr else str(self.dtype)
        return f"tile<{'x'.join(map(str, self.shape))}, {base}>" if self.shape else base


class Aggregate(ABC):
    """A frontend value made of several runtime parts (Values, or Python ints not yet
    materialized) and a compile-time part: a block pointer. Loops and ``if``s carry the
    parts that change (``compiler.frontend.control``) and rebuild it with
    ``with_parts``; the compile-time part must stay the same."""

    @abstractmethod
    def parts(self) -> tuple[Value | int, ...]:
        """The runtime parts, in a fixed order."""

    @abstractmethod
    def part_name(self, i: int) -> str:
        """An identifier for part ``i`` (messages and SSA names): ``off1``."""

    @abstractmethod
    def with_parts(self, parts: Sequence[Value | int]) -> Aggregate:
        """This value with its runtime parts replaced."""

    @abstractmethod
    def static(self) -> object:
        """The compile-time part (compared for equality)."""

    @abstractmethod
    def describe(self) -> str:
        """The value's type, for messages."""


def value_type(dtype: tl.dtype, shape: tuple[int, ...], is_ptr: bool = False) -> Attribute:
    elem = tile.PtrType(ir_type(dtype)) if is_ptr else ir_type(dtype)
    return TensorType(elem, shape) if shape else elem


class Builder:
    """Appends ops to the current block, stamping each with the current source loc."""

    def __init__(self, block: Block, file: str):
        self.block = block
        self.file = file
        self.line = 0
        self.col = 0

    def location(self) -> FileLineColLoc:
        return FileLineColLoc(StringAttr(self.file), IntAttr(self.line), IntAttr(self.col))

    def emit(self, op: Operation) -> Operation:
        op.location = self.location()
        self.block.add_op(op)
        return op

    def value(self, op: Operation, dtype: tl.dtype, shape: tuple[int, ...] = (),
              is_ptr: bool = False) -> Value:
        if math.prod(shape) > MAX_NUMEL:
            raise CompileError(f"a tile of shape {list(shape)} has more than {MAX_NUMEL} "
                               "elements (Triton's limit too)")
        return Value(self.emit(op).results[0], dtype, shape, is_ptr)


# ---------------------------------------------------------------- constants, splat, cast

def constant(b: Builder, py: bool | float, dtype: tl.dtype,
             shape: tuple[int, ...] = (), as_cast: bool = False) -> Value:
    """``py`` as a constant of ``dtype``; a float past the type's range is an error, or,
    ``as_cast``, an infinity of its sign, as a cast makes it (Triton casts the literal a
    load fills masked-off lanes with, or a store or atomic writes, to the element type)."""
    if not isinstance(py, bool | int | float):
        raise CompileError(f"cannot use {type(py).__name__} value {py!r} as a {dtype} constant")
    t = ir_type(dtype)
    if dtype.is_fp8():  # rounded as a conversion rounds (saturating), not as xDSL's attribute
        py = fp8_value(float(py), dtype)
    if dtype.is_float:
        try:
            attr = FloatAttr(float(py), t)
        except OverflowError:
            if not as_cast:
                raise CompileError(f"{py!r} is out of range for {dtype}") from None
            attr = FloatAttr(math.copysign(math.inf, py), t)
    else:
        attr = IntegerAttr(_wrap(int(py), dtype), t)
    v = b.value(arith.ConstantOp(attr, t), dtype)
    return splat(b, v, shape)


def _wrap(v: int, dtype: tl.dtype) -> int:
    """Python ints as the signless bit pattern xDSL accepts for this width."""
    if dtype.bits == 1:
        return -1 if v & 1 else 0
    m = 1 << dtype.bits
    v %= m
    return v - m if v >= m // 2 else v


def splat(b: Builder, v: Value, shape: tuple[int, ...]) -> Value:
    """``v`` as a tile of ``shape``: a scalar splat, a tile broadcast (NumPy's rules)."""
    if v.shape == shape:
        return v
    if v.shape:
        return broadcast(b, v, shape)
    t = value_type(v.dtype, shape, v.is_ptr)
    return b.value(tile.SplatOp(v.ssa, t), v.dtype, shape, v.is_ptr)


def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """NumPy's broadcast shape: dims aligned at the end, missing and size-1 dims stretch."""
    rank = max(map(len, shapes), default=0)
    out: list[int] = []
    for dims in zip(*((1,) * (rank - len(s)) + tuple(s) for s in shapes), strict=True):
        sizes = set(dims) - {1}
        if len(sizes) > 1:
            raise CompileError("shape mismatch: tiles of shapes "
                               f"{', '.join(str(list(s)) for s in shapes)} do not broadcast")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def broadcast(b: Builder, v: Value, shape: tuple[int, ...]) -> Value:
    """A tile stretched to ``shape``: leading dims by ``tile.expand_dims``, size-1 dims
    by ``tile.broadcast``."""
    if broadcast_shapes(v.shape, shape) != shape:
        raise CompileError(f"shape mismatch: {v.describe()} cannot be broadcast to shape "
                           f"{list(shape)}")
    while len(v.shape) < len(shape):
        v = b.value(tile.ExpandDimsOp(v.ssa, 0), v.dtype, (1, *v.shape), v.is_ptr)
    if v.shape != shape:
        t = value_type(v.dtype, shape, v.is_ptr)
        v = b.value(tile.BroadcastOp(v.ssa, t), v.dtype, shape, v.is_ptr)
    return v


def literal_dtype(py: object) -> tl.dtype:
    if isinstance(py, bool):
        return tl.int1
    if isinstance(py, int):
        return tl.literal_int_dtype(py)
    if isinstance(py, float):
        return tl.float32
    raise CompileError(f"cannot use {type(py).__name__} value {py!r} in a kernel expression")


def cast(b: Builder, v: Value, to: tl.dtype, toward_zero: bool = False) -> Value:
    """``v`` as ``to``; a float narrowed rounds to nearest even, or toward zero. fp8
    converts to and from float32 only (each backend has those two conversions), so
    other casts go through float32: the same values, f16/bf16 <-> f32 being exact (f64
    rounds twice, to f32 then to fp8, where Triton has no conversion at all)."""
    if v.is_ptr:
        raise CompileError(f"cannot cast a {v.describe()} to {to}")
    src = v.dtype
    if src == to or (src.is_int() and to.is_int() and src.bits == to.bits and src.bits > 1):
        return Value(v.ssa, to, v.shape)
    if (src.is_fp8() or to.is_fp8()) and tl.float32 not in (src, to):
        return cast(b, cast(b, v, tl.float32, toward_zero), to, toward_zero)
    rt = value_type(to, v.shape)
    if to is tl.int1:
        zero = constant(b, 0, src, v.shape)
        op = tile.CmpFOp("une", v.ssa, zero.ssa) if src.is_float else \
            tile.CmpIOp("ne", v.ssa, zero.ssa)
        return b.value(op, to, v.shape)
    if src.is_float and to.is_float:
        op = arith.ExtFOp(v.ssa, rt) if to.bits > src.bits else casts.TruncFOp(
            v.ssa, rt, "toward_zero" if toward_zero else None)
    elif src.is_int() and to.is_float:
        op = casts.SIToFPOp(v.ssa, rt) if src.is_signed else casts.UIToFPOp(v.ssa, rt)
    elif src.is_float:
        op = casts.FPToSIOp(v.ssa, rt) if to.is_signed else casts.FPToUIOp(v.ssa, rt)
    elif to.bits > src.bits:
        op = casts.ExtSIOp(v.ssa, rt) if src.is_signed else casts.ExtUIOp(v.ssa, rt)
    else:
        op = casts.TruncIOp(v.ssa, rt)
    return b.value(op, to, v.shape)


MAX_RANK = 5  # tilec's tiles have 1 to 5 dimensions, as many as cuTile's arrays
MAX_NUMEL = 1 << 20  # Triton's TRITON_MAX_TENSOR_NUMEL: larger tiles cannot fit a block
POINTER_SHAPE_OPS = (tile.ExpandDimsOp, tile.BroadcastOp, tile.ReshapeOp, tile.TransOp)
"""Ops a pointer tile may pass through on its way from a kernel argument."""


def expand(b: Builder, x: Value, axis: int) -> Value:
    """``x`` with a dimension of size 1 inserted at ``axis``."""
    shape = x.shape[:axis] + (1,) + x.shape[axis:]
    return b.value(tile.ExpandDimsOp(x.ssa, axis), x.dtype, shape, x.is_ptr)


def root_name(ptr: Value) -> str:
    """The parameter a pointer value was first derived from: the SSA name of a pointer a
    loop or branch carries (``written.py`` finds every parameter it may point into);
    empty for a pointer made from an address."""
    v = ptr.ssa
    while isinstance(v.owner, (tile.AddPtrOp, tile.SplatOp, tile.AssumeFactsOp,
                               *POINTER_SHAPE_OPS)):
        v = v.owner.operands[0]
    return v.name_hint or ""
