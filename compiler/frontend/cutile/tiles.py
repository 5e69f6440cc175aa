"""cuTile's tile builtins with cuTile's signatures, built on Triton's handlers: block ids,
creation, ``astype``, ``mma``/``mma_scaled``/``matmul``/``@`` and the shape ops.

``x.astype(ct.tfloat32)`` keeps an f32 tile and marks it: an ``mma`` or ``@`` of two
marked operands multiplies in TF32 (inputs rounded to 10 mantissa bits, as tensor cores
do), other uses see plain f32. A dtype argument may be PyTorch's or NumPy's
(``cutile.dtypes``).

``astype``'s ``rounding_mode``: ``RN`` (the default); ``RZ`` on a narrowing float
conversion to float16, bfloat16 or float32; any mode on a widening one (it is exact).

``ct.mma_scaled`` has no block-scaled instruction before Blackwell; tilec scales in
registers on every target: ``(x * x_scale) @ (y * y_scale) + acc`` in float32, each scale
repeated over its ``B = K // K_s`` elements of K (cuTile's layout: ``x_scale`` is
``[M, K_s]``, ``y_scale`` ``[K_s, N]``). A scale is a float tile, or a uint8 tile of e8m0
bits (value ``2 ** (bits - 127)``, 255 NaN): tilec has no e8m0 dtype, so an e8m0 array
is passed as its bytes. With fp8 operands and e8m0 or fp8 scales every scaled element
is exact in TF32, so the product runs on tensor cores in TF32 with no rounding; other
operands multiply in float32.
"""

from __future__ import annotations

from typing import Any

import compiler.language as tl
from compiler.frontend import operators as ops
from compiler.frontend.codegen import CodeGenerator
from compiler.frontend.cutile.dtypes import dtype_arg
from compiler.frontend.cutile.math import rounding
from compiler.frontend.cutile.table import builtin, method
from compiler.frontend.triton import TABLE as TRITON
from compiler.frontend.triton import creation, linalg, shape
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


@builtin("full")
def full(cg: CodeGenerator, shape: Any, fill_value: Any, dtype: Any) -> Value:
    return creation.full(cg, shape, fill_value, _dtype(cg, dtype, "ct.full"))


@builtin("zeros")
def zeros(cg: CodeGenerator, shape: Any, dtype: Any) -> Value:
    return creation.full(cg, shape, 0, _dtype(cg, dtype, "ct.zeros"))


@builtin("ones")
def ones(cg: CodeGenerator, shape: Any, dtype: Any) -> Value:
    return creation.full(cg, shape, 1, _dtype(cg, dtype, "ct.ones"))


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
    if mode is RoundingMode.RZ and not d.is_fp8:
        return cast(cg.b, xv, d, toward_zero=True)
    cg.fail(f"ct.astype: rounding_mode {mode.name} from {src} to {d} is not supported yet "
            f"(tilec narrows floats to nearest, or toward zero to float32 and 16-bit floats)")


# ---------------------------------------------------------------- matrix products

def _precision(cg: CodeGenerator, x: Any, y: Any) -> str | None:
    marked = [isinstance(v, Value) and v.ssa in cg.tf32 for v in (x, y)]
    return "tf32" if all(marked) else None


@builtin("mma")
def mma(cg: CodeGenerator, x: Any, y: Any, acc: Any, use_fast_acc: Any = False) -> Value:
    """``acc + x @ y``, in ``acc``'s dtype (``use_fast_acc``, a Hopper fp8 speed hint, is
    taken: tilec's fp8 products accumulate in float32 either way)."""
    return linalg.dot(cg, x, y, acc, input_precision=_precision(cg, x, y))


@builtin("mma_scaled")
def mma_scaled(cg: CodeGenerator, x: Any, x_scale: Any, y: Any, y_scale: Any,
               acc: Any) -> Value:
    """``(x * x_scale) @ (y * y_scale) + acc``, scaled in registers (module docstring)."""
    tiles = [_matrix(cg, v, what) for v, what in
             ((x, "x"), (x_scale, "x_scale"), (y, "y"), (y_scale, "y_scale"), (acc, "acc"))]
    x, x_scale, y, y_scale, acc = tiles
    (m, k), (n, ks) = x.shape, (y.shape[1], x_scale.shape[1])
    if y.shape[0] != k or x_scale.shape != (m, ks) or y_scale.shape != (ks, n) or \
            k % ks or acc.shape != (m, n):
        cg.fail(f"ct.mma_scaled: shapes x {list(x.shape)}, x_scale {list(x_scale.shape)}, "
                f"y {list(y.shape)}, y_scale {list(y_scale.shape)}, acc {list(acc.shape)} "
                f"do not fit [M, K], [M, K_s], [K, N], [K_s, N], [M, N] with K_s dividing K")
    if acc.dtype != tl.float32:
        cg.fail(f"ct.mma_scaled accumulates in float32, got acc of {acc.dtype}")
    block = k // ks
    xs = _scales(cg, x_scale, (m, ks, 1), (m, ks, block), (m, k))
    ys = _scales(cg, y_scale, (ks, 1, n), (ks, block, n), (k, n))
    exact = x.dtype.is_fp8 and y.dtype.is_fp8 and all(
        s.dtype is tl.uint8 or s.dtype.is_fp8 for s in (x_scale, y_scale))
    xf = ops.binary(cg.b, "mul", cast(cg.b, x, tl.float32), xs)
    yf = ops.binary(cg.b, "mul", cast(cg.b, y, tl.float32), ys)
    return linalg.dot(cg, xf, yf, acc, input_precision="tf32" if exact else None)


def _matrix(cg: CodeGenerator, v: Any, what: str) -> Value:
    if not isinstance(v, Value) or v.is_ptr or len(v.shape) != 2:
        got = v.describe() if isinstance(v, Value) else type(v).__name__
        cg.fail(f"ct.mma_scaled: {what} must be a 2-D tile (tilec has no batched form), "
                f"got {got}")
    return v


def _scales(cg: CodeGenerator, s: Value, expanded: tuple[int, ...],
            repeated: tuple[int, ...], full: tuple[int, ...]) -> Value:
    """Scale tile ``s`` as float32 values, each repeated over its block of K."""
    if s.dtype is tl.uint8:  # e8m0 bits: 2 ** (bits - 127); 0 is 2 ** -127, 255 NaN
        bits = cast(cg.b, s, tl.int32)
        f = TRITON.functions["cast"](cg, ops.binary(cg.b, "lshift", bits, 23), tl.float32,
                                     bitcast=True)
        f = ops.select(cg.b, ops.compare(cg.b, "eq", bits, 0), 2.0 ** -127, f)
        s = ops.select(cg.b, ops.compare(cg.b, "eq", bits, 255), float("nan"), f)
    elif not s.dtype.is_float:
        cg.fail(f"ct.mma_scaled: scales are float tiles or uint8 tiles of e8m0 bits, got "
                f"{s.describe()}")
    s = shape.reshape(cg, cast(cg.b, s, tl.float32), expanded)
    return shape.reshape(cg, shape.broadcast_to(cg, s, repeated), full)


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
    return shape.reshape(cg, x, tuple(new_shape) if isinstance(new_shape, tuple | list)
                         else (new_shape,))


@builtin("expand_dims")
@method("expand_dims")
def expand_dims(cg: CodeGenerator, x: Any, axis: Any) -> Value:
    return shape.expand_dims(cg, x, axis)


@builtin("broadcast_to")
def broadcast_to(cg: CodeGenerator, x: Any, new_shape: Any) -> Value:
    return shape.broadcast_to(cg, x, tuple(new_shape))
