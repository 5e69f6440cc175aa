"""cuTile's tile builtins with cuTile's signatures, built on Triton's handlers: block ids,
creation, ``astype`` and the shape ops.

``x.astype(ct.tfloat32)`` keeps an f32 tile and marks it (``cg.tf32``): an ``mma`` or
``@`` of two marked operands multiplies in TF32 (``products``), other uses see plain f32.
A dtype argument may be PyTorch's or NumPy's (``cutile.dtypes``).

``astype``'s ``rounding_mode``: ``RN`` (the default); ``RZ`` on a narrowing float
conversion to float16, bfloat16 or float32; any mode on a widening one (it is exact).
"""

from __future__ import annotations

from typing import Any

import compiler.language as tl
from compiler.frontend import operators as ops
from compiler.frontend.codegen import CodeGenerator
from compiler.frontend.cutile import leading
from compiler.frontend.cutile.dtypes import dtype_arg
from compiler.frontend.cutile.math import rounding
from compiler.frontend.cutile.table import builtin, method
from compiler.frontend.triton import creation, shape
from compiler.frontend.values import Value, cast, constant
from compiler.tile._enums import RoundingMode

TF32 = "tf32"  # the short name of ct.tfloat32


def _dtype(cg: CodeGenerator, d: Any, what: str) -> tl.dtype:
    if isinstance(d, tl.dtype) and d.short == TF32:
        return tl.float32
    return dtype_arg(cg, d, what)


@builtin("bid")
def bid(cg: CodeGenerator, axis: Any) -> Value:
    return creation.program_id(cg, axis)


@builtin("num_blocks")
def num_blocks(cg: CodeGenerator, axis: Any) -> Value:
    return creation.num_programs(cg, axis)


@builtin("arange")
def arange(cg: CodeGenerator, size: Any, dtype: Any = None, start: Any = 0,
           step: Any = 1) -> Value:
    """``start + step * i``; int32 unless ``dtype`` (tilec's default where cuTile requires
    one)."""
    r = creation.arange(cg, 0, size)
    d = tl.int32 if dtype is None else _dtype(cg, dtype, "ct.arange")
    if (start, step) != (0, 1):
        r = ops.binary(cg.b, "add", ops.binary(cg.b, "mul", cast(cg.b, r, d), step), start)
    return cast(cg.b, r, d)


def _filled(cg: CodeGenerator, shape: Any, value: Any, dtype: Any, what: str) -> Value:
    if isinstance(shape, tuple | list):
        shape = leading.tile_dims(cg, shape, what)
    return creation.full(cg, shape, value, _dtype(cg, dtype, what))


@builtin("full")
def full(cg: CodeGenerator, shape: Any, fill_value: Any, dtype: Any) -> Value:
    return _filled(cg, shape, fill_value, dtype, "ct.full")


@builtin("zeros")
def zeros(cg: CodeGenerator, shape: Any, dtype: Any) -> Value:
    return _filled(cg, shape, 0, dtype, "ct.zeros")


@builtin("ones")
def ones(cg: CodeGenerator, shape: Any, dtype: Any) -> Value:
    return _filled(cg, shape, 1, dtype, "ct.ones")


@builtin("astype")
@method("astype")
def astype(cg: CodeGenerator, x: Any, dtype: Any, rounding_mode: Any = None) -> Value:
    d = _dtype(cg, dtype, "ct.astype")
    if rounding_mode is not None:
        return _rounded_cast(cg, x, d, rounding_mode)
    v = cast(cg.b, x, d) if isinstance(x, Value) else constant(cg.b, x, d)
    if isinstance(dtype, tl.dtype) and dtype.short == TF32:
        cg.tf32.add(v.ssa)
    return v


def _rounded_cast(cg: CodeGenerator, x: Any, d: tl.dtype, mode: Any) -> Value:
    src = x.dtype if isinstance(x, Value) else tl.float32 if isinstance(x, float) else None
    if src is None or not src.is_float or not d.is_float:
        cg.fail(f"ct.astype: rounding_mode is for a float to float conversion, not "
                f"{src or type(x).__name__} to {d}")
    modes = tuple(m for m in RoundingMode if m not in (RoundingMode.FULL, RoundingMode.APPROX,
                                                      RoundingMode.RZI))
    mode = rounding(cg, mode, modes, src, "ct.astype")
    xv = x if isinstance(x, Value) else constant(cg.b, x, src)
    if d.bits >= src.bits and not (src is tl.float16 and d is tl.bfloat16):
        return cast(cg.b, xv, d)  # exact: every mode rounds alike
    if mode is RoundingMode.RN:
        return cast(cg.b, xv, d)
    if mode is RoundingMode.RZ and not d.is_fp8():
        return cast(cg.b, xv, d, toward_zero=True)
    cg.fail(f"ct.astype: rounding_mode {mode.name} from {src} to {d} is not supported yet "
            f"(tilec narrows floats to nearest, or toward zero to float32 and 16-bit floats)")


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
