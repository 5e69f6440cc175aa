"""Triton builtins that make values: ``tl.program_id``, ``tl.num_programs``,
``tl.arange``, ``tl.full``, ``tl.zeros``, ``tl.zeros_like``; and the type of a tile
(``x.dtype``, ``x.shape``)."""

from __future__ import annotations

import math
from typing import Any

import compiler.language as tl
from compiler.frontend.codegen import CodeGenerator
from compiler.frontend.triton.table import builtin, tile_property
from compiler.frontend.values import Value, cast, constant, splat
from dialects import tile


def dtype_arg(cg: CodeGenerator, d: Any) -> tl.dtype:
    """A dtype argument: ``tl.float32`` or its name (``"fp32"``)."""
    if isinstance(d, tl.dtype):
        return d
    if isinstance(d, str):
        return tl.dtype_from_str(d)
    cg.fail(f"expected a dtype such as tl.float32, got {d!r}")


def _shape_arg(cg: CodeGenerator, shape: Any) -> tuple[int, ...]:
    """A creation's shape; ``()`` makes a scalar, as Triton's 0-d tensors are."""
    if not isinstance(shape, int | tuple | list):
        cg.fail(f"a tile shape must be a constexpr int or tuple of ints, got {shape!r}")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if not shape:
        return shape
    for n in shape:
        if not isinstance(n, int) or n <= 0 or n & (n - 1):
            cg.fail(f"tile dimensions must be constexpr powers of two, got {list(shape)}")
    cg.check_rank(len(shape), "tile shape")
    return shape


def _axis_op(cg: CodeGenerator, cls, axis: Any) -> Value:
    axis = cg.const_int(axis, "axis")
    if axis not in (0, 1, 2):
        cg.fail(f"axis must be 0, 1 or 2, got {axis}")
    return cg.b.value(cls(axis), tl.int32)


@builtin("program_id")
def program_id(cg: CodeGenerator, axis: Any) -> Value:
    return _axis_op(cg, tile.ProgramIdOp, axis)


@builtin("num_programs")
def num_programs(cg: CodeGenerator, axis: Any) -> Value:
    return _axis_op(cg, tile.NumProgramsOp, axis)


@builtin("arange")
def arange(cg: CodeGenerator, start: Any, end: Any) -> Value:
    start, end = cg.const_int(start, "arange start"), cg.const_int(end, "arange end")
    n = end - start
    if not (-2**31 <= start < 2**31 and -2**31 <= end < 2**31):
        cg.fail(f"arange bounds must fit in int32, got ({start}, {end})")
    if n <= 0 or n & (n - 1):
        cg.fail(f"arange length must be a power of two, got {n}")
    return cg.b.value(tile.RangeOp(start, end), tl.int32, (n,))


@builtin("full")
def full(cg: CodeGenerator, shape: Any, value: Any, dtype: Any) -> Value:
    shape, dtype = _shape_arg(cg, shape), dtype_arg(cg, dtype)
    if isinstance(value, Value):
        return splat(cg.b, cast(cg.b, value, dtype), shape)
    return constant(cg.b, value, dtype, shape)


@builtin("zeros")
def zeros(cg: CodeGenerator, shape: Any, dtype: Any) -> Value:
    return full(cg, shape, 0, dtype)


@builtin("zeros_like")
def zeros_like(cg: CodeGenerator, x: Value) -> Value:
    return constant(cg.b, 0, x.dtype, x.shape)


@tile_property("dtype")
def dtype_of(_cg: CodeGenerator, x: Value) -> tl.dtype:
    return x.dtype


@tile_property("type")
def type_of(_cg: CodeGenerator, x: Value) -> tl.dtype:
    """Triton's ``x.type``, read for its ``.element_ty`` (``Out.type.element_ty``): the
    element dtype, which ``.element_ty`` returns as it is."""
    return x.dtype


@tile_property("shape")
def shape_of(_cg: CodeGenerator, x: Value) -> tuple[int, ...]:
    return x.shape


@tile_property("numel")
def numel_of(_cg: CodeGenerator, x: Value) -> int:
    """Triton's ``x.numel``: the elements of the tile (1 for a scalar), at compile time."""
    return math.prod(x.shape)
