"""Triton's elementwise builtins: math functions (``tl.exp``, ``tl.sqrt``, ``tl.erf``,
``tl.tanh``, ...), ``tl.pow``, ``tl.div_rn``/``tl.fdiv``/``tl.sqrt_rn``, ``tl.where``, ``tl.maximum``/``minimum``/``clamp``, ``tl.fma``, ``tl.cdiv``, ``tl.abs``,
``tl.sigmoid`` and conversion (``tl.cast``, ``x.to(dtype)``; to and from pointers too:
``addr.to(tl.pointer_type(tl.float16))``, ``ptr.to(tl.int64)``).

Operands broadcast and promote by ``compiler.frontend.operators``. A one-operand math
function needs nothing here: ``compiler.language`` lists it in ``MATH_FUNCTIONS`` and
``tl.<name>`` becomes xDSL's ``math.<name>`` op, computed in float (integer operands
become float32, as in Triton; fp8 ones too). Operators, ``abs``, ``fma`` and the
selections keep an fp8 operand's type, computed in float32 (``operators.in_float32``).
"""

from __future__ import annotations

import builtins
from typing import Any

from xdsl.dialects import arith, math
from xdsl.dialects.math import Math
from xdsl.ir import Operation

import compiler.language as tl
from compiler.frontend import operators as ops
from compiler.frontend.codegen import CodeGenerator
from compiler.frontend.triton.creation import dtype_arg
from compiler.frontend.triton.table import builtin, method
from compiler.frontend.values import Value, cast, constant, value_type
from dialects import tile

_MATH_OPS: dict[str, type[Operation]] = {op.name: op for op in Math.operations}


def _number(cg: CodeGenerator, x: Any) -> float:
    if not isinstance(x, bool | int | float):
        cg.fail(f"expected a tile or a number, got {type(x).__name__} {x!r}")
    return float(x)


def _float_arg(cg: CodeGenerator, x: Any) -> Value:
    """A math function's operand: integer and fp8 tiles as float32 (no target computes on
    fp8)."""
    if not isinstance(x, Value):
        return constant(cg.b, _number(cg, x), tl.float32)
    return x if x.dtype.is_float and not x.dtype.is_fp8() else cast(cg.b, x, tl.float32)


def _float_operand(cg: CodeGenerator, x: Any) -> Any:
    """An integer tile as float32; a Python number stays a number (it takes the other
    operand's type)."""
    return _float_arg(cg, x) if isinstance(x, Value) else _number(cg, x)


def _math(cg: CodeGenerator, op: type[Operation], x: Any) -> Value:
    if isinstance(x, Value) and x.is_ptr:
        cg.fail(f"{op.name} needs numbers, got {x.describe()}")
    xv = _float_arg(cg, x)
    return cg.b.value(op(xv.ssa), xv.dtype, xv.shape)


def _register_math(name: str, op: type[Operation]) -> None:
    def handler(cg: CodeGenerator, x: Any) -> Value:
        return _math(cg, op, x)
    handler.__name__ = handler.__qualname__ = name
    builtin(name)(handler)


for _name in tl.MATH_FUNCTIONS:
    _register_math(_name, _MATH_OPS[f"math.{_name}"])


@builtin("pow")
def pow_(cg: CodeGenerator, x: Any, y: Any) -> Value:
    return ops.binary(cg.b, "pow", _float_operand(cg, x), _float_operand(cg, y))


@builtin("div_rn")
@builtin("fdiv")
def div_rn(cg: CodeGenerator, x: Any, y: Any, ieee_rounding: Any = False) -> Value:
    """Float division is always rounded to nearest here (``ieee_rounding`` is moot)."""
    return ops.binary(cg.b, "truediv", _float_operand(cg, x), _float_operand(cg, y))


@builtin("sqrt_rn")
def sqrt_rn(cg: CodeGenerator, x: Any) -> Value:
    return _math(cg, math.SqrtOp, x)


@builtin("where")
def where(cg: CodeGenerator, condition: Any, x: Any, y: Any) -> Value:
    return ops.select(cg.b, condition, x, y)


@builtin("maximum")
def maximum(cg: CodeGenerator, x: Any, y: Any) -> Value:
    return ops.binary(cg.b, "max", x, y)


@builtin("minimum")
def minimum(cg: CodeGenerator, x: Any, y: Any) -> Value:
    return ops.binary(cg.b, "min", x, y)


@builtin("clamp")
def clamp(cg: CodeGenerator, x: Any, lo: Any, hi: Any) -> Value:
    return ops.binary(cg.b, "min", ops.binary(cg.b, "max", x, lo), hi)


@builtin("fma")
def fma(cg: CodeGenerator, x: Any, y: Any, z: Any) -> Value:
    xv, yv = ops.operands(cg.b, x, y)
    xv, zv = ops.operands(cg.b, xv, z)
    yv = ops.materialize(cg.b, yv, xv.dtype, xv.shape)
    if not xv.dtype.is_float:
        return ops.binary(cg.b, "add", ops.binary(cg.b, "mul", xv, yv), zv)
    if xv.dtype.is_fp8():
        return ops.in_float32(cg.b, lambda *v: fma(cg, *v), xv, yv, zv)
    return cg.b.value(math.FmaOp(xv.ssa, yv.ssa, zv.ssa), xv.dtype, xv.shape)


@builtin("cdiv")
def cdiv(cg: CodeGenerator, x: Any, y: Any) -> Any:
    if not isinstance(x, Value) and not isinstance(y, Value):
        return -(-x // y)
    return ops.binary(cg.b, "floordiv", ops.binary(cg.b, "sub",
                      ops.binary(cg.b, "add", x, y), 1), y)


@builtin("cast")
@method("to")
@method("cast")
def cast_(cg: CodeGenerator, x: Any, dtype: Any, bitcast: bool = False,
          fp_downcast_rounding: Any = None) -> Value:
    if isinstance(dtype, tl.pointer_type) or isinstance(x, Value) and x.is_ptr:
        if fp_downcast_rounding is not None:
            cg.fail("a cast to or from a pointer takes no fp_downcast_rounding")
        return _pointer_cast(cg, x, dtype)  # a bitcast too: Triton's is the same cast
    d = dtype_arg(cg, dtype)
    if fp_downcast_rounding not in (None, "rtne", "rtz"):
        cg.fail(f"fp_downcast_rounding must be 'rtne' (to nearest, ties to even: the "
                f"default) or 'rtz' (toward zero), got {fp_downcast_rounding!r}")
    if bitcast:
        if fp_downcast_rounding is not None:
            cg.fail("a bitcast moves bits: it takes no fp_downcast_rounding")
        return _bitcast(cg, x, d)
    if fp_downcast_rounding == "rtz":
        return _toward_zero(cg, x, d)
    if not isinstance(x, Value):
        return constant(cg.b, x, d)
    return cast(cg.b, x, d)


def _pointer_cast(cg: CodeGenerator, x: Any, target: Any) -> Value:
    """A cast with pointers: a 64-bit integer address (a tile of them) to
    ``tl.pointer_type(T)``; a pointer to ``tl.int64`` (its address) or ``tl.int1`` (not
    null), or to its own pointer type (itself)."""
    if isinstance(x, int) and not isinstance(x, bool):
        x = constant(cg.b, x, tl.int64)
    if not isinstance(x, Value):
        cg.fail(f"cannot cast {x!r} to {target}: expected a tile or scalar of tl.int64 "
                "addresses")
    if not isinstance(target, tl.pointer_type):
        return _address_of(cg, x, dtype_arg(cg, target))
    elem = target.element_ty
    if x.is_ptr:
        if x.dtype != elem:
            cg.fail(f"cannot cast a {x.describe()} to {target}: casts between pointer types "
                    "are not supported (cast a pointer of the right type from its address)")
        return x
    if x.dtype != tl.int64:
        cg.fail(f"an address cast to {target} must be a 64-bit integer (tl.int64), got "
                f"{x.describe()}")
    t = value_type(elem, x.shape, is_ptr=True)
    return cg.b.value(tile.IntToPtrOp(x.ssa, t), elem, x.shape, is_ptr=True)


def _address_of(cg: CodeGenerator, ptr: Value, d: tl.dtype) -> Value:
    """Pointer ``ptr`` cast to ``d``: its address (``tl.int64``), or whether it is not
    null (``tl.int1``), as Triton's casts give."""
    if d not in (tl.int64, tl.int1):
        cg.fail(f"a pointer casts to tl.int64 (its address) or tl.int1 (whether it is not "
                f"null), not to {d}")
    op = tile.PtrToIntOp(ptr.ssa, value_type(tl.int64, ptr.shape))
    address = cg.b.value(op, tl.int64, ptr.shape)
    return address if d == tl.int64 else ops.compare(cg.b, "ne", address, 0)


def _toward_zero(cg: CodeGenerator, x: Any, d: tl.dtype) -> Value:
    """``x`` narrowed to the float type ``d``, rounded toward zero (a Python float is an
    f32 first, as in any expression)."""
    if isinstance(x, float):
        x = constant(cg.b, x, tl.float32)
    if not (isinstance(x, Value) and x.dtype.is_float and d.is_float
            and d.bits < x.dtype.bits):
        src = x.dtype if isinstance(x, Value) else type(x).__name__
        cg.fail(f"fp_downcast_rounding='rtz' is for a float cast to a narrower float, "
                f"not {src} to {d}")
    if d.is_fp8():
        cg.fail(f"a cast to {d} rounds to nearest even (saturating), as Triton's does on "
                f"NVIDIA GPUs: fp_downcast_rounding='rtz' is not supported for fp8")
    return cast(cg.b, x, d, toward_zero=True)


def _bitcast(cg: CodeGenerator, x: Any, d: tl.dtype) -> Value:
    """``x``'s bits read as ``d`` (Triton's ``x.to(d, bitcast=True)``): same width only."""
    if not isinstance(x, Value) or x.is_ptr:
        cg.fail(f"bitcast needs a tile or scalar of numbers, got {x!r}")
    if x.dtype.bits != d.bits or tl.int1 in (x.dtype, d):
        cg.fail(f"bitcast from {x.dtype} to {d} needs two types of the same width "
                "(and not int1)")
    if x.dtype == d:
        return x
    return cg.b.value(arith.BitcastOp(x.ssa, value_type(d, x.shape)), d, x.shape)


@builtin("abs")
def abs_(cg: CodeGenerator, x: Any) -> Value:
    if not isinstance(x, Value):
        return builtins.abs(_number(cg, x))
    if x.dtype.is_fp8():
        return ops.in_float32(cg.b, lambda x32: abs_(cg, x32), x)
    op = math.AbsFOp(x.ssa) if x.dtype.is_float else math.AbsIOp(x.ssa)
    return cg.b.value(op, x.dtype, x.shape)


@builtin("sigmoid")
def sigmoid(cg: CodeGenerator, x: Any) -> Value:
    xv = _float_arg(cg, x)
    e = _math(cg, math.ExpOp, ops.unary(cg.b, "neg", xv))
    return ops.binary(cg.b, "truediv", 1.0, ops.binary(cg.b, "add", 1.0, e))
