"""Triton's matrix product: ``tl.dot(a, b, acc=None, input_precision=None, out_dtype=...)``
and ``a @ b`` (the code generator sends ``@`` here).

Operands are 2-D tiles of one dtype with M, N, K powers of two of at least 16: f16 and
bf16 accumulate in f32 (f16 also in f16 with ``out_dtype=tl.float16``), f32 in f32 as
``input_precision`` says (``"ieee"`` by default: fidelity first, unlike Triton's tf32
default; ``"tf32"``, ``"tf32x3"``), int8 in int32.

fp8 operands (``float8e4nv``, ``float8e5``, or one of each, as Hopper's fp8 ``wgmma``
takes them) accumulate as f16 ones do: they are converted to f16 first, which is exact
(every fp8 value is an f16 value), so the product is the one Triton computes, on every
target, by the f16 dot each target already has; Hopper's native fp8 ``wgmma`` (k = 32,
twice the f16 rate) is not used yet.
"""

from __future__ import annotations

from typing import Any

import compiler.language as tl
from compiler.frontend.codegen import CodeGenerator
from compiler.frontend.triton.creation import dtype_arg
from compiler.frontend.triton.table import builtin
from compiler.frontend.values import Value, cast, constant
from dialects import tile

# operand dtype -> the accumulator dtypes it may have (the first is the default)
_ACCUMULATORS = {tl.float16: (tl.float32, tl.float16), tl.bfloat16: (tl.float32,),
                 tl.float32: (tl.float32,), tl.int8: (tl.int32,)}
_PRECISIONS = {None: "ieee", "ieee": "ieee", "tf32": "tf32", "tf32x3": "tf32x3"}
MIN_DIM = 16  # the smallest tile a tensor-core instruction covers along any dimension


@builtin("dot")
def dot(cg: CodeGenerator, a: Any, b: Any, acc: Any = None, input_precision: Any = None,
        out_dtype: Any = None, allow_tf32: Any = None) -> Value:
    a, b = _operand(cg, a, "first"), _operand(cg, b, "second")
    if a.dtype.is_fp8() and b.dtype.is_fp8():
        a, b = cast(cg.b, a, tl.float16), cast(cg.b, b, tl.float16)
    if a.dtype != b.dtype:
        cg.fail(f"tl.dot operands must have one dtype, got {a.dtype} and {b.dtype} "
                f"(convert one with .to())")
    (m, k), (k2, n) = a.shape, b.shape
    if k != k2:
        cg.fail(f"tl.dot shapes do not match: {list(a.shape)} @ {list(b.shape)}")
    if a.dtype not in _ACCUMULATORS:
        cg.fail(f"tl.dot operands must be float16, bfloat16, float32, int8 or fp8, got "
                f"{a.dtype}")
    precision = _precision(cg, a.dtype, input_precision, allow_tf32)
    out = _out_dtype(cg, a.dtype, acc, out_dtype)
    acc_v = _accumulator(cg, acc, out, (m, n))
    op = tile.DotOp(a.ssa, b.ssa, acc_v.ssa, precision)
    return cg.b.value(op, out, (m, n))


def _operand(cg: CodeGenerator, x: Any, which: str) -> Value:
    if not isinstance(x, Value) or x.is_ptr or len(x.shape) != 2:
        got = x.describe() if isinstance(x, Value) else type(x).__name__
        cg.fail(f"tl.dot {which} operand must be a 2-D tile, got {got}")
    for d in x.shape:
        if d < MIN_DIM:
            cg.fail(f"tl.dot needs every dimension to be at least {MIN_DIM}, got "
                    f"{list(x.shape)}")
    return x


def _precision(cg: CodeGenerator, dtype: tl.dtype, precision: Any, allow_tf32: Any) -> str:
    if precision is None and allow_tf32:
        precision = "tf32"
    if precision not in _PRECISIONS:
        cg.fail(f"tl.dot input_precision must be 'ieee', 'tf32' or 'tf32x3', got {precision!r}")
    if _PRECISIONS[precision] != "ieee" and dtype != tl.float32:
        cg.fail(f"tl.dot input_precision={precision!r} applies to float32 operands, "
                f"not {dtype}")
    return _PRECISIONS[precision]


def _out_dtype(cg: CodeGenerator, dtype: tl.dtype, acc: Any, out_dtype: Any) -> tl.dtype:
    allowed = _ACCUMULATORS[dtype]
    if isinstance(acc, Value):
        out = acc.dtype
    elif out_dtype is not None:
        out = dtype_arg(cg, out_dtype)
    else:
        out = allowed[0]
    if out not in allowed:
        cg.fail(f"tl.dot of {dtype} accumulates in {' or '.join(map(str, allowed))}, "
                f"not {out}")
    return out


def _accumulator(cg: CodeGenerator, acc: Any, out: tl.dtype, shape: tuple[int, int]) -> Value:
    if acc is None:
        return constant(cg.b, 0, out, shape)
    if not isinstance(acc, Value) or acc.shape != shape:
        got = acc.describe() if isinstance(acc, Value) else type(acc).__name__
        cg.fail(f"tl.dot acc must be a tile of shape {list(shape)}, got {got}")
    return cast(cg.b, acc, out)
