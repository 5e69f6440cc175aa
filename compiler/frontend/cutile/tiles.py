"""cuTile's tile builtins with cuTile's signatures, built on Triton's handlers: block ids,
creation, reductions and scans with ``keepdims``, ``astype``, ``mma``/``matmul``/``@``
and the shape ops.

``x.astype(ct.tfloat32)`` keeps an f32 tile and marks it: an ``mma`` or ``@`` of two
marked operands multiplies in TF32 (inputs rounded to 10 mantissa bits, as tensor cores
do), other uses see plain f32.
"""

from __future__ import annotations

from typing import Any

import compiler.language as tl
from compiler.frontend.codegen import CodeGenerator
from compiler.frontend.cutile import leading
from compiler.frontend.cutile.table import builtin, method
from compiler.frontend.triton import TABLE as TRITON
from compiler.frontend.triton import creation, linalg, reduce, shape
from compiler.frontend.values import Value, cast, constant

TF32 = "tf32"  # the short name of ct.tfloat32


def _dtype(cg: CodeGenerator, d: Any) -> tl.dtype:
    if isinstance(d, tl.dtype) and d.short == TF32:
        return tl.float32
    return creation.dtype_arg(cg, d)


@builtin("bid")
def bid(cg: CodeGenerator, axis: Any) -> Value:
    return creation.program_id(cg, axis)


@builtin("num_blocks")
def num_blocks(cg: CodeGenerator, axis: Any) -> Value:
    return creation.num_programs(cg, axis)


@builtin("arange")
def arange(cg: CodeGenerator, size: Any, dtype: Any = None) -> Value:
    r = creation.arange(cg, 0, size)
    return r if dtype is None else cast(cg.b, r, _dtype(cg, dtype))


@builtin("full")
def full(cg: CodeGenerator, shape: Any, fill_value: Any, dtype: Any) -> Value:
    if isinstance(shape, tuple | list):
        shape = leading.tile_dims(cg, shape, "ct.full")
    return creation.full(cg, shape, fill_value, _dtype(cg, dtype))


@builtin("zeros")
def zeros(cg: CodeGenerator, shape: Any, dtype: Any) -> Value:
    return full(cg, shape, 0, dtype)


@builtin("ones")
def ones(cg: CodeGenerator, shape: Any, dtype: Any) -> Value:
    return full(cg, shape, 1, dtype)


@builtin("astype")
@method("astype")
def astype(cg: CodeGenerator, x: Any, dtype: Any) -> Value:
    d = _dtype(cg, dtype)
    v = cast(cg.b, x, d) if isinstance(x, Value) else constant(cg.b, x, d)
    if isinstance(dtype, tl.dtype) and dtype.short == TF32:
        cg.tf32.add(v.ssa)
    return v


# ---------------------------------------------------------------- reductions and scans

def _reduction(name: str):
    def handler(cg: CodeGenerator, x: Any, axis: Any = None, keepdims: Any = False) -> Value:
        return TRITON.functions[name](cg, x, axis, keep_dims=keepdims)
    handler.__name__ = handler.__qualname__ = name
    builtin(name)(handler)
    method(name)(handler)


for _name in ("sum", "max", "min", "argmax", "argmin"):
    _reduction(_name)


@builtin("cumsum")
def cumsum(cg: CodeGenerator, x: Any, axis: Any = 0, reverse: Any = False) -> Value:
    return reduce.cumsum(cg, x, axis, reverse)


@builtin("cumprod")
def cumprod(cg: CodeGenerator, x: Any, axis: Any = 0, reverse: Any = False) -> Value:
    return reduce.cumprod(cg, x, axis, reverse)


# ---------------------------------------------------------------- matrix products

def _precision(cg: CodeGenerator, x: Any, y: Any) -> str | None:
    marked = [isinstance(v, Value) and v.ssa in cg.tf32 for v in (x, y)]
    return "tf32" if all(marked) else None


@builtin("mma")
def mma(cg: CodeGenerator, x: Any, y: Any, acc: Any) -> Value:
    """``acc + x @ y``, in ``acc``'s dtype."""
    return linalg.dot(cg, x, y, acc, input_precision=_precision(cg, x, y))


@builtin("matmul")
@builtin("dot")  # a @ b
def matmul(cg: CodeGenerator, x: Any, y: Any) -> Value:
    """``x @ y`` in the operands' dtype (accumulated in f32 for 16-bit floats)."""
    r = linalg.dot(cg, x, y, input_precision=_precision(cg, x, y))
    return r if not isinstance(x, Value) or r.dtype == x.dtype else cast(cg.b, r, x.dtype)


# ---------------------------------------------------------------- shape

@builtin("transpose")
@method("transpose")
def transpose(cg: CodeGenerator, x: Any, axis0: Any = None, axis1: Any = None) -> Value:
    if axis0 is None and axis1 is None:
        return shape.trans(cg, x)
    rank = len(x.shape) if isinstance(x, Value) else 0
    order = list(range(rank))
    a, b = (cg.const_int(v, "ct.transpose axis") % max(rank, 1) for v in (axis0, axis1))
    order[a], order[b] = order[b], order[a]
    return shape.trans(cg, x, tuple(order))


@builtin("permute")
@method("permute")
def permute(cg: CodeGenerator, x: Any, axes: Any) -> Value:
    return shape.permute(cg, x, tuple(axes))


@builtin("reshape")
@method("reshape")
def reshape(cg: CodeGenerator, x: Any, new_shape: Any) -> Value:
    dims = tuple(new_shape) if isinstance(new_shape, tuple | list) else (new_shape,)
    return leading.reshape(cg, x, dims, "ct.reshape")


@builtin("expand_dims")
@method("expand_dims")
def expand_dims(cg: CodeGenerator, x: Any, axis: Any) -> Value:
    return shape.expand_dims(cg, x, axis)


@builtin("broadcast_to")
def broadcast_to(cg: CodeGenerator, x: Any, new_shape: Any) -> Value:
    return shape.broadcast_to(cg, x, tuple(new_shape))
