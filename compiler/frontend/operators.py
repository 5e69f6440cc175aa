"""Triton's typing rules for Python operators on frontend values -> tile IR.

Promotion of two operands (Python literals are weakly typed), the operator tables per
element kind (signed, unsigned, float), comparisons, pointer arithmetic, ``select`` and
the expansions xDSL has no op for (float ``%``, integer ``**``).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable

from xdsl.dialects import arith, math
from xdsl.ir import Operation

import compiler.language as tl
from compiler.errors import CompileError
from compiler.frontend.values import (
    Builder,
    Value,
    broadcast_shapes,
    cast,
    constant,
    literal_dtype,
    splat,
)
from dialects import tile

# ---------------------------------------------------------------- promotion

Operand = Value | bool | int | float


def promote(a: tl.dtype, b: tl.dtype) -> tl.dtype:
    """Triton's computation type of two typed operands."""
    if a == b:
        return a
    if a.is_float or b.is_float:
        if a.is_float and b.is_float:
            if tl.bfloat16 in (a, b) and max(a.bits, b.bits) == 16:  # with f16 or fp8
                return tl.float32
            if a.is_fp8() and b.is_fp8():  # the two fp8 types
                return tl.float16
            return a if a.bits > b.bits else b
        return a if a.is_float else b
    if a.bits != b.bits:
        return a if a.bits > b.bits else b
    return a if not a.is_signed else b  # same width: unsigned wins


def _literal_joins(lit: object, other: tl.dtype) -> tl.dtype:
    """A Python literal adopts the other operand's type where it fits (Triton's weak
    typing); a float literal with an integer operand makes the result float32."""
    if isinstance(lit, float) and not other.is_float:
        return tl.float32
    if isinstance(lit, (bool, float)):
        return other
    if other is tl.int1:
        return tl.int32
    return other if other.is_float or _fits(lit, other) else promote(literal_dtype(lit), other)


def _fits(v: int, d: tl.dtype) -> bool:
    lo, hi = (-(1 << (d.bits - 1)), 1 << (d.bits - 1)) if d.is_signed else (0, 1 << d.bits)
    return lo <= v < hi


def operands(b: Builder, x: Operand, y: Operand) -> tuple[Value, Value]:
    """Both operands as Values of their computation type and common shape."""
    _check_literals(x, y)
    if not isinstance(x, Value) and not isinstance(y, Value):
        d = promote(literal_dtype(x), literal_dtype(y))
        return constant(b, x, d), constant(b, y, d)
    if isinstance(x, Value) and isinstance(y, Value):
        d = promote(x.dtype, y.dtype)
    elif isinstance(x, Value):
        d = _literal_joins(y, x.dtype)
    else:
        d = _literal_joins(x, y.dtype)
    shape = _common_shape(x, y)
    return materialize(b, x, d, shape), materialize(b, y, d, shape)


def _common_shape(*vals: Operand) -> tuple[int, ...]:
    return broadcast_shapes(*(v.shape for v in vals if isinstance(v, Value)))


def materialize(b: Builder, v: Operand, dtype: tl.dtype, shape: tuple[int, ...],
                as_cast: bool = False) -> Value:
    """``v`` (a Value or a Python literal) as a Value of ``dtype`` and ``shape``; a literal
    ``as_cast`` converts it (``constant``)."""
    if not isinstance(v, Value):
        return constant(b, v, dtype, shape, as_cast)
    return splat(b, cast(b, v, dtype), shape)


# ---------------------------------------------------------------- operator tables

def _f(op: type[Operation]) -> Callable[[Builder, Value, Value], Operation]:
    return lambda _b, x, y: op(x.ssa, y.ssa)


_SIGNED = {
    "add": _f(arith.AddiOp), "sub": _f(arith.SubiOp), "mul": _f(arith.MuliOp),
    "floordiv": _f(arith.DivSIOp), "mod": _f(arith.RemSIOp), "and": _f(arith.AndIOp),
    "or": _f(arith.OrIOp), "xor": _f(arith.XOrIOp), "lshift": _f(arith.ShLIOp),
    "rshift": _f(arith.ShRSIOp), "max": _f(arith.MaxSIOp), "min": _f(arith.MinSIOp),
}
_UNSIGNED = _SIGNED | {
    "floordiv": _f(arith.DivUIOp), "mod": _f(arith.RemUIOp), "rshift": _f(arith.ShRUIOp),
    "max": _f(arith.MaxUIOp), "min": _f(arith.MinUIOp),
}
_FLOAT = {
    "add": _f(arith.AddfOp), "sub": _f(arith.SubfOp), "mul": _f(arith.MulfOp),
    "truediv": _f(arith.DivfOp),
    "max": _f(arith.MaximumfOp), "min": _f(arith.MinimumfOp), "pow": _f(math.PowFOp),
}
_CMP_INT = {"eq": "eq", "ne": "ne", "lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge"}
_CMP_UINT = _CMP_INT | {"lt": "ult", "le": "ule", "gt": "ugt", "ge": "uge"}
_CMP_FLOAT = {"eq": "oeq", "ne": "une", "lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge"}
_SYMBOL = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%",
           "pow": "**", "and": "&", "or": "|", "xor": "^", "lshift": "<<", "rshift": ">>"}


def _check_literals(*vals: object) -> None:
    for v in vals:
        if not isinstance(v, Value):
            literal_dtype(v)  # a CompileError for anything but a bool, int or float


def binary(b: Builder, name: str, x: Operand, y: Operand) -> Value | bool | int | float:
    """Apply Python binary operator ``name`` ("add", "floordiv", "max", ...). On fp8 the
    result is fp8, as Triton types it, computed in float32 and rounded (``in_float32``)."""
    _check_literals(x, y)
    if isinstance(x, Value) and x.is_ptr or isinstance(y, Value) and y.is_ptr:
        return pointer_arith(b, name, x, y)
    if name == "truediv":
        x, y = _as_float_operands(b, x, y)
    if name == "pow" and not is_float_operand(x) and isinstance(y, int) and y >= 0:
        return _int_power(b, x, y)
    xv, yv = operands(b, x, y)
    d = xv.dtype
    if d.is_fp8():
        return in_float32(b, lambda x32, y32: binary(b, name, x32, y32), xv, yv)
    if name == "mod" and d.is_float:
        return _float_mod(b, xv, yv)
    table = _FLOAT if d.is_float else (_SIGNED if d.is_signed or d is tl.int1 else _UNSIGNED)
    build = table.get(name)
    if build is None:
        kind = "floating-point" if d.is_float else "integer"
        raise CompileError(f"operator {_SYMBOL.get(name, name)} is not defined for {kind} "
                           f"operands ({xv.describe()}, {yv.describe()})")
    return b.value(build(b, xv, yv), d, xv.shape)


def _float_mod(b: Builder, x: Value, y: Value) -> Value:
    """C's ``fmod`` (xDSL has no ``arith.remf``): ``|x| - |y| * trunc(|x| / |y|)`` with
    the sign of ``x``, corrected by one ``|y|`` when the quotient was off by one (WGSL's
    division may be 2.5 ulp off); f16/bf16 compute in f32."""
    d = x.dtype
    wide = tl.float32 if d.bits < 32 else d
    ax = b.value(math.AbsFOp(cast(b, x, wide).ssa), wide, x.shape)
    ay = b.value(math.AbsFOp(cast(b, y, wide).ssa), wide, x.shape)
    q = b.value(math.TruncOp(binary(b, "truediv", ax, ay).ssa), wide, x.shape)
    r = binary(b, "sub", ax, binary(b, "mul", ay, q))
    r = select(b, compare(b, "lt", r, 0.0), binary(b, "add", r, ay), r)
    r = select(b, compare(b, "ge", r, ay), binary(b, "sub", r, ay), r)
    r = select(b, compare(b, "lt", cast(b, x, wide), 0.0), unary(b, "neg", r), r)
    return cast(b, r, d)


def is_float_operand(v: Operand) -> bool:
    return v.dtype.is_float if isinstance(v, Value) else isinstance(v, float)


def _as_float_operands(b: Builder, x: Operand, y: Operand) -> tuple[Operand, Operand]:
    """``/`` is true division: integer operands become float32 (Triton)."""
    if is_float_operand(x) or is_float_operand(y):
        return x, y
    return (cast(b, x, tl.float32) if isinstance(x, Value) else float(x),
            cast(b, y, tl.float32) if isinstance(y, Value) else float(y))


def _int_power(b: Builder, x: Operand, n: int) -> Value:
    """``x ** n`` for a constant integer ``n >= 0`` by repeated squaring."""
    xv, _ = operands(b, x, 1)
    result: Value = materialize(b, 1, xv.dtype, xv.shape)
    base = xv
    while n:
        if n & 1:
            result = binary(b, "mul", result, base)
        n >>= 1
        if n:
            base = binary(b, "mul", base, base)
    return result


def in_float32(b: Builder, compute: Callable[..., Value], *args: Value) -> Value:
    """``compute`` of fp8 tiles done on their float32 values, its result rounded back to
    the first's fp8 type: no target computes on fp8 (Triton types the arithmetic but
    cannot lower it), and every fp8 value is exact in float32."""
    wide = compute(*(cast(b, v, tl.float32) for v in args))
    return cast(b, wide, args[0].dtype)


def compare(b: Builder, name: str, x: Operand, y: Operand) -> Value:
    xv, yv = operands(b, x, y)
    if xv.dtype.is_fp8():  # exact: fp8 values compare as their float32 values
        xv, yv = cast(b, xv, tl.float32), cast(b, yv, tl.float32)
    d = xv.dtype
    if d.is_float:
        op = tile.CmpFOp(_CMP_FLOAT[name], xv.ssa, yv.ssa)
    else:
        table = _CMP_INT if d.is_signed or d is tl.int1 else _CMP_UINT
        op = tile.CmpIOp(table[name], xv.ssa, yv.ssa)
    return b.value(op, tl.int1, xv.shape)


def pointer_arith(b: Builder, name: str, x: Operand, y: Operand) -> Value:
    if name == "add" and isinstance(y, Value) and y.is_ptr:
        x, y = y, x
    if name not in ("add", "sub") or not isinstance(x, Value) or not x.is_ptr:
        raise CompileError(f"operator {_SYMBOL.get(name, name)} is not defined for pointers")
    if isinstance(y, Value) and (y.is_ptr or not y.dtype.is_int()):
        raise CompileError(f"pointer offsets must be integers, got {y.describe()}")
    if not isinstance(y, Value) and not isinstance(y, int):
        raise CompileError(f"pointer offsets must be integers, got {type(y).__name__}")
    off = y if isinstance(y, Value) else constant(b, y, literal_dtype(y))
    if name == "sub":
        off = unary(b, "neg", off)
    shape = _common_shape(x, off)
    ptr = splat(b, x, shape)
    if off.shape != shape:
        off = splat(b, off, shape)
    return b.value(tile.AddPtrOp(ptr.ssa, off.ssa), x.dtype, shape, True)


def unary(b: Builder, name: str, x: Value) -> Value:
    if x.is_ptr:
        raise CompileError(f"unary operator is not defined for {x.describe()}")
    if name == "neg":
        if x.dtype.is_fp8():
            return in_float32(b, lambda x32: unary(b, "neg", x32), x)
        if x.dtype.is_float:
            return b.value(arith.NegfOp(x.ssa), x.dtype, x.shape)
        return binary(b, "sub", 0, x)
    if name == "invert":
        if x.dtype.is_float:
            raise CompileError(f"operator ~ is not defined for {x.describe()}")
        return binary(b, "xor", x, -1 if x.dtype is not tl.int1 else True)
    if name == "not":
        return binary(b, "xor", to_bool(b, x), True)
    raise AssertionError(name)


def to_bool(b: Builder, x: Operand) -> Value:
    if isinstance(x, Value):
        return cast(b, x, tl.int1)
    return constant(b, builtins.bool(x), tl.int1)


def select(b: Builder, cond: Operand, x: Operand, y: Operand) -> Value:
    c = to_bool(b, cond)
    xv, yv = operands(b, x, y)
    shape = _common_shape(c, xv, yv)
    c, xv, yv = splat(b, c, shape), splat(b, xv, shape), splat(b, yv, shape)
    return b.value(tile.SelectOp(c.ssa, xv.ssa, yv.ssa), xv.dtype, shape, xv.is_ptr)
