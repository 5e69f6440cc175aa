"""Triton's block pointers and tensor descriptors: block pointers lowered here to pointer
tiles and masks, descriptor accesses to array views.

``tl.make_block_ptr`` and ``tl.make_tensor_descriptor`` make frontend objects (``BlockPtr``,
``TensorDescriptor``: ``Aggregate``s, so loops carry them); no IR stands for them. A load
or store through a block pointer (``tl.load(bp, boundary_check=...)``, dispatched from
``compiler.frontend.triton.memory``) becomes a plain ``tile.load``/``tile.store`` of the
pointer tile ``base + sum_d off_d * stride_d``, where ``off_d = offset_d +
arange(block_shape[d])`` is laid along dimension ``d``, masked by ``0 <= off_d < shape_d``
for the boundary-checked dimensions. ``order`` (fastest dimension first, as Triton's) says
which dimension is contiguous: a load whose contiguous dimension is not the last reads
the block with that dimension last and transposes it back. A load checked in every
dimension and padded with zeros reads what a descriptor load would, and is one (below),
so Hopper copies it by TMA too.

``desc.load(offsets)``/``desc.store(offsets, v)`` become a ``tile.make_view`` of the
descriptor and a ``tile.view_load``/``tile.view_store`` at the element offsets (property
``elements``; ``lower-array-views`` gives the same pointers and masks as a block pointer
checked in every dimension), so a backend can still see whole-block copies (TMA).
A view's shape, strides and indices are ``i32``: a descriptor whose shape, strides or
offsets are not (an ``i64`` value, an int beyond ``i32``) takes the block-pointer path,
which computes in their own width.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

import compiler.language as tl
from compiler import descriptors
from compiler.frontend import operators as ops
from compiler.frontend.codegen import CodeGenerator
from compiler.frontend.triton.shape import trans
from compiler.frontend.triton.table import TABLE, builtin, method
from compiler.frontend.values import (
    Aggregate,
    Value,
    constant,
    expand,
    ir_type,
    splat,
)
from dialects import tile

Part = Value | int
"""A runtime part: an integer scalar, or a Python int not yet materialized."""

_PADDINGS = (None, "", "zero", "nan")


@dataclass(frozen=True)
class BlockPtr(Aggregate):
    """A block of ``block_shape`` elements at ``offsets`` in a tensor of ``shape`` and
    ``strides`` (elements) starting at ``base`` (a scalar pointer)."""

    base: Value
    shape: tuple[Part, ...]
    strides: tuple[Part, ...]
    offsets: tuple[Part, ...]
    block_shape: tuple[int, ...]
    order: tuple[int, ...]

    def parts(self) -> tuple[Part, ...]:
        return (self.base, *self.shape, *self.strides, *self.offsets)

    def part_name(self, i: int) -> str:
        kind, d = divmod(i - 1, len(self.block_shape))
        return "base" if i == 0 else f"{('shape', 'stride', 'off')[kind]}{d}"

    def with_parts(self, parts: Sequence[Part]) -> BlockPtr:
        r = len(self.block_shape)
        return replace(self, base=parts[0], shape=tuple(parts[1:1 + r]),
                       strides=tuple(parts[1 + r:1 + 2 * r]), offsets=tuple(parts[1 + 2 * r:]))

    def static(self) -> object:
        return ("block pointer", self.block_shape, self.order)

    def describe(self) -> str:
        return f"block pointer <{'x'.join(map(str, self.block_shape))}, {self.base.dtype}>"

    @property
    def dtype(self) -> tl.dtype:
        """The element type, as a pointer's ``.dtype`` is here: Triton's
        ``p.dtype.element_ty`` (a block type, which ``.to`` takes as its element type)
        names it too."""
        return self.base.dtype


@dataclass(frozen=True)
class TensorDescriptor(Aggregate):
    """A tensor of ``shape`` and ``strides`` at ``base``, read and written in blocks of
    ``block_shape`` at the offsets each ``.load``/``.store`` names; what a load reads
    outside the tensor is ``padding`` ("zero" or "nan")."""

    base: Value
    shape: tuple[Part, ...]
    strides: tuple[Part, ...]
    block_shape: tuple[int, ...]
    padding: str = "zero"

    @property
    def dtype(self) -> tl.dtype:
        """The element type (``desc.dtype`` in a kernel, as Triton's)."""
        return self.base.dtype

    def parts(self) -> tuple[Part, ...]:
        return (self.base, *self.shape, *self.strides)

    def part_name(self, i: int) -> str:
        kind, d = divmod(i - 1, len(self.block_shape))
        return "base" if i == 0 else f"{('shape', 'stride')[kind]}{d}"

    def with_parts(self, parts: Sequence[Part]) -> TensorDescriptor:
        r = len(self.block_shape)
        return replace(self, base=parts[0], shape=tuple(parts[1:1 + r]),
                       strides=tuple(parts[1 + r:]))

    def static(self) -> object:
        return ("tensor descriptor", self.block_shape, self.padding)

    def describe(self) -> str:
        return f"tensor descriptor <{'x'.join(map(str, self.block_shape))}, {self.base.dtype}>"

    def block(self, offsets: tuple[Part, ...]) -> BlockPtr:
        """The block at ``offsets``."""
        rank = len(self.block_shape)
        return BlockPtr(self.base, self.shape, self.strides, offsets, self.block_shape,
                        tuple(reversed(range(rank))))


# ---------------------------------------------------------------- argument checks

def _base(cg: CodeGenerator, base: Any, what: str) -> Value:
    if not isinstance(base, Value) or not base.is_ptr or base.shape:
        got = base.describe() if isinstance(base, (Value, Aggregate)) else type(base).__name__
        cg.fail(f"{what}: base must be a scalar pointer, got {got}")
    return base


def _block_shape(cg: CodeGenerator, block_shape: Any, what: str) -> tuple[int, ...]:
    dims = tuple(block_shape) if isinstance(block_shape, (tuple, list)) else (block_shape,)
    for n in dims:
        if isinstance(n, bool) or not isinstance(n, int) or n <= 0 or n & (n - 1):
            cg.fail(f"{what}: block_shape must hold constexpr powers of two, got "
                    f"{[d.describe() if isinstance(d, Value) else d for d in dims]}")
    cg.check_rank(len(dims), what)
    return dims


def _parts(cg: CodeGenerator, xs: Any, name: str, rank: int, what: str) -> tuple[Part, ...]:
    """``xs``, one integer scalar per dimension of the block."""
    if not isinstance(xs, (tuple, list)):
        cg.fail(f"{what}: {name} must be a tuple with one entry per dimension")
    if len(xs) != rank:
        cg.fail(f"{what}: {name} has {len(xs)} entries but the block has {rank} "
                f"dimension{'s' * (rank != 1)}")
    for x in xs:
        scalar = isinstance(x, Value) and not x.shape and not x.is_ptr and x.dtype.is_int()
        if not scalar and (isinstance(x, bool) or not isinstance(x, int)):
            got = x.describe() if isinstance(x, (Value, Aggregate)) else repr(x)
            cg.fail(f"{what}: {name} must hold integer scalars, got {got}")
    return tuple(xs)


def _block_ptr_arg(cg: CodeGenerator, bp: Any, what: str) -> BlockPtr:
    if not isinstance(bp, BlockPtr):
        got = bp.describe() if isinstance(bp, (Value, Aggregate)) else type(bp).__name__
        cg.fail(f"{what} expects a block pointer, got {got}")
    return bp


def _checked_dims(cg: CodeGenerator, boundary_check: Any, rank: int, what: str) -> set[int]:
    dims = boundary_check if isinstance(boundary_check, (tuple, list)) else \
        () if boundary_check is None else (boundary_check,)
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, int) or not 0 <= d < rank:
            cg.fail(f"{what}: boundary_check names dimension {d!r}, but the block has "
                    f"{rank} dimension{'s' * (rank != 1)} (0 to {rank - 1})")
    return set(dims)


def _check_padding(cg: CodeGenerator, padding_option: Any, dtype: tl.dtype, what: str,
                   shown: str) -> None:
    """``padding_option`` of a load from, or a descriptor of, ``shown`` (of ``dtype``)."""
    if padding_option not in _PADDINGS:
        cg.fail(f"{what}: padding_option must be 'zero' or 'nan', got {padding_option!r}")
    if padding_option == "nan" and not dtype.is_float:
        cg.fail(f"{what}: padding_option='nan' needs a floating-point block, got {shown}")


# ---------------------------------------------------------------- builtins

@builtin("make_block_ptr")
def make_block_ptr(cg: CodeGenerator, base: Any, shape: Any, strides: Any, offsets: Any,
                   block_shape: Any, order: Any) -> BlockPtr:
    what = "tl.make_block_ptr"
    base = _base(cg, base, what)
    dims = _block_shape(cg, block_shape, what)
    rank = len(dims)
    if not isinstance(order, (tuple, list)) or sorted(order) != list(range(rank)):
        cg.fail(f"{what}: order must be a permutation of {list(range(rank))}, got {order!r}")
    return BlockPtr(base, _parts(cg, shape, "shape", rank, what),
                    _parts(cg, strides, "strides", rank, what),
                    _parts(cg, offsets, "offsets", rank, what), dims, tuple(order))


@builtin("advance")
def advance(cg: CodeGenerator, base: Any, offsets: Any) -> BlockPtr:
    """The block pointer moved by ``offsets`` elements (a dimension moved by the
    Python int 0 keeps its offset, so a loop carries only the offsets it moves)."""
    bp = _block_ptr_arg(cg, base, "tl.advance")
    deltas = _parts(cg, offsets, "offsets", len(bp.block_shape), "tl.advance")
    moved = tuple(o if isinstance(d, int) and d == 0 else _add(cg, o, d)
                  for o, d in zip(bp.offsets, deltas, strict=True))
    return replace(bp, offsets=moved)


@builtin("make_tensor_descriptor")
def make_tensor_descriptor(cg: CodeGenerator, base: Any, shape: Any, strides: Any,
                           block_shape: Any, padding_option: Any = "zero") -> TensorDescriptor:
    what = "tl.make_tensor_descriptor"
    base = _base(cg, base, what)
    dims = _block_shape(cg, block_shape, what)
    _check_padding(cg, padding_option, base.dtype, what, f"a pointer to {base.dtype}")
    return TensorDescriptor(base, _parts(cg, shape, "shape", len(dims), what),
                            _parts(cg, strides, "strides", len(dims), what), dims,
                            padding_option or "zero")


@TABLE.kind(descriptors.tensor_descriptor_base)
@TABLE.kind(descriptors.tensor_descriptor)
def is_descriptor(x: Any) -> bool:
    return isinstance(x, TensorDescriptor)


@method("load", on=TensorDescriptor)
def descriptor_load(cg: CodeGenerator, desc: TensorDescriptor, offsets: Any) -> Value:
    """The block at ``offsets``; what lies outside the tensor reads as the padding."""
    rank = len(desc.block_shape)
    at = _parts(cg, offsets, "offsets", rank, "desc.load")
    if not _fits_view(desc, at):
        return load(cg, desc.block(at), tuple(range(rank)), desc.padding)
    view, index = _view(cg, desc, at)
    dtype, shape = desc.base.dtype, desc.block_shape
    op = tile.ViewLoadOp(view, index, TensorType(ir_type(dtype), shape), desc.padding,
                         elements=True)
    return cg.b.value(op, dtype, shape)


@method("store", on=TensorDescriptor)
def descriptor_store(cg: CodeGenerator, desc: TensorDescriptor, offsets: Any,
                     value: Any) -> None:
    """Write the block at ``offsets``; what lies outside the tensor is not written."""
    rank = len(desc.block_shape)
    at = _parts(cg, offsets, "offsets", rank, "desc.store")
    if not _fits_view(desc, at):
        store(cg, desc.block(at), value, tuple(range(rank)))
        return
    val = _stored_value(cg, value, desc.base.dtype, desc.block_shape, "desc.store")
    view, index = _view(cg, desc, at)
    cg.b.emit(tile.ViewStoreOp(view, index, val.ssa, elements=True))


def _is_i32(x: Part) -> bool:
    """``x`` is an i32 scalar, or an int that fits one."""
    if isinstance(x, int):
        return -2**31 <= x < 2**31
    return x.dtype == tl.int32


def _fits_view(desc: TensorDescriptor | BlockPtr, offsets: tuple[Part, ...]) -> bool:
    """Every shape, stride and offset of the access is ``_is_i32``."""
    return all(_is_i32(x) for x in (*desc.shape, *desc.strides, *offsets))


def _view(cg: CodeGenerator, desc: TensorDescriptor | BlockPtr,
          offsets: tuple[Part, ...]) -> tuple[SSAValue, list[SSAValue]]:
    """A ``tile.make_view`` of ``desc`` and ``offsets`` as i32 values."""
    def i32(x: Part) -> SSAValue:
        return (constant(cg.b, x, tl.int32) if isinstance(x, int) else x).ssa
    view = tile.MakeViewOp(desc.base.ssa, [i32(x) for x in desc.shape],
                           [i32(x) for x in desc.strides])
    return cg.b.emit(view).results[0], [i32(x) for x in offsets]


# ---------------------------------------------------------------- loads and stores

def load(cg: CodeGenerator, bp: BlockPtr, boundary_check: Any, padding_option: Any) -> Value:
    """``tl.load`` of a block pointer: elements outside the checked dimensions read as
    zero, or NaN with ``padding_option="nan"``."""
    _check_padding(cg, padding_option, bp.base.dtype, "tl.load", bp.describe())
    checked = _checked_dims(cg, boundary_check, len(bp.block_shape), "tl.load")
    if (padding_option != "nan" and checked == set(range(len(bp.block_shape)))
            and _fits_view(bp, bp.offsets)):  # a descriptor load's semantics: one
        view, index = _view(cg, bp, bp.offsets)
        op = tile.ViewLoadOp(view, index, TensorType(ir_type(bp.base.dtype), bp.block_shape),
                             "zero", elements=True)
        return cg.b.value(op, bp.base.dtype, bp.block_shape)
    slow_to_fast = tuple(reversed(bp.order))
    if slow_to_fast != tuple(range(len(slow_to_fast))):
        return _fastest_last(cg, bp, checked, padding_option, slow_to_fast)
    ptr, mask = _address(cg, bp, checked)
    other = None
    if mask is not None:
        fill = math.nan if padding_option == "nan" else 0
        other = constant(cg.b, fill, ptr.dtype, ptr.shape)
    op = tile.LoadOp(ptr.ssa, mask.ssa if mask else None, other.ssa if other else None)
    return cg.b.value(op, ptr.dtype, ptr.shape)


def _fastest_last(cg: CodeGenerator, bp: BlockPtr, checked: set[int], padding_option: Any,
                  perm: tuple[int, ...]) -> Value:
    """A block whose ``order`` puts its contiguous dimension first (a column-major K read
    as the transposed B of a dot, say): loaded with its dimensions permuted, that one
    last, so the accesses are contiguous and vectorize, then transposed back (which a
    warpgroup dot reading it as B does for free)."""
    moved = replace(bp, shape=tuple(bp.shape[d] for d in perm),
                    strides=tuple(bp.strides[d] for d in perm),
                    offsets=tuple(bp.offsets[d] for d in perm),
                    block_shape=tuple(bp.block_shape[d] for d in perm),
                    order=tuple(range(len(perm) - 1, -1, -1)))
    dims = [i for i, d in enumerate(perm) if d in checked]
    loaded = load(cg, moved, dims or None, padding_option)
    return trans(cg, loaded, tuple(perm.index(d) for d in range(len(perm))))


def store(cg: CodeGenerator, bp: BlockPtr, value: Any, boundary_check: Any) -> None:
    """``tl.store`` through a block pointer: a tile of the block's shape (or a scalar),
    not written outside the checked dimensions."""
    ptr, mask = _address(cg, bp, _checked_dims(cg, boundary_check, len(bp.block_shape),
                                                "tl.store"))
    val = _stored_value(cg, value, ptr.dtype, ptr.shape, "tl.store")
    cg.b.emit(tile.StoreOp(ptr.ssa, val.ssa, mask.ssa if mask else None))


def _stored_value(cg: CodeGenerator, value: Any, dtype: tl.dtype,
                  block_shape: tuple[int, ...], what: str) -> Value:
    """``value`` (a scalar, or a tile of the block's shape) as a block of ``dtype``."""
    if isinstance(value, Value) and value.is_ptr:
        cg.fail("storing pointers is not supported")
    if isinstance(value, Value) and value.shape and value.shape != block_shape:
        cg.fail(f"{what}: the value is {value.describe()} but the block is "
                f"{list(block_shape)}")
    return ops.materialize(cg.b, value, dtype, block_shape)


def _address(cg: CodeGenerator, bp: BlockPtr, checked: set[int]) -> tuple[Value, Value | None]:
    """The block's pointer tile and the mask of its checked dimensions (None: none)."""
    b, rank = cg.b, len(bp.block_shape)
    ptr, mask = bp.base, None
    for d, n in enumerate(bp.block_shape):
        off = _along(cg, _range(cg, bp.offsets[d], n), d, rank)
        ptr = ops.binary(b, "add", ptr, off if _is(bp.strides[d], 1) else
                         ops.binary(b, "mul", off, bp.strides[d]))
        if d in checked:
            inside = ops.compare(b, "lt", off, bp.shape[d])
            if not (isinstance(bp.offsets[d], int) and bp.offsets[d] >= 0):
                inside = ops.binary(b, "and", ops.compare(b, "ge", off, 0), inside)
            mask = inside if mask is None else ops.binary(b, "and", mask, inside)
    ptr = splat(b, ptr, bp.block_shape)
    return ptr, None if mask is None else splat(b, mask, bp.block_shape)


def _range(cg: CodeGenerator, offset: Part, n: int) -> Value:
    """``offset + arange(0, n)``; a Python int offset folds into the range."""
    if isinstance(offset, int) and -2**31 <= offset and offset + n < 2**31:
        return cg.b.value(tile.RangeOp(offset, offset + n), tl.int32, (n,))
    return _add(cg, offset, cg.b.value(tile.RangeOp(0, n), tl.int32, (n,)))


def _along(cg: CodeGenerator, off: Value, d: int, rank: int) -> Value:
    """The 1-D tile ``off`` laid along dimension ``d`` of a ``rank``-D block."""
    for axis in range(rank):
        if axis != d:
            off = expand(cg.b, off, axis)
    return off


def _add(cg: CodeGenerator, x: Part, y: Part) -> Part:
    return x + y if isinstance(x, int) and isinstance(y, int) else ops.binary(cg.b, "add", x, y)


def _is(x: Part, n: int) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x == n
