"""Triton's ``libdevice`` float functions (``tl.extra.libdevice.asin``, ``tl.math.lgamma``,
...; the names are ``compiler.libdevice.FLOAT``).

A function xDSL's ``math`` dialect has becomes that op (``math.asin``, ``math.round``);
the others become ``tile.libm "name"``; both are expanded for the GPU targets by
``expand-math``. Tests of a value (``isnan``, ``signbit``), ``fdim``, ``saturatef`` and the
``_rn``/``fast_`` spellings of plain arithmetic are built here from existing ops. Operands
promote to one float type as in Triton, integer and fp8 tiles becoming float32.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import reduce
from typing import Any

from xdsl.dialects import arith, math
from xdsl.ir import Operation

import compiler.language as tl
from compiler.frontend import operators as ops
from compiler.frontend.codegen import CodeGenerator
from compiler.frontend.operators import materialize
from compiler.frontend.triton.table import TABLE, builtin
from compiler.frontend.values import Value, broadcast_shapes, cast, value_type
from dialects import tile

_MATH_OPS: dict[str, type[Operation]] = {
    "asin": math.AsinOp, "acos": math.AcosOp, "atan": math.AtanOp, "sinh": math.SinhOp,
    "cosh": math.CoshOp, "asinh": math.AsinhOp, "acosh": math.AcoshOp,
    "atanh": math.AtanhOp, "tan": math.TanOp, "expm1": math.ExpM1Op,
    "log10": math.Log10Op, "log1p": math.Log1pOp, "cbrt": math.CbrtOp,
    "trunc": math.TruncOp, "round": math.RoundOp, "rint": math.RoundEvenOp,
    "nearbyint": math.RoundEvenOp, "atan2": math.Atan2Op, "copysign": math.CopySignOp,
}
_LIBM = ("exp10", "rcbrt", "erfc", "erfcx", "erfinv", "erfcinv", "normcdf", "normcdfinv",
         "lgamma", "tgamma", "sinpi", "cospi", "logb", "hypot", "rhypot", "fmod",
         "remainder", "nextafter", "norm3d", "rnorm3d", "norm4d", "rnorm4d")
# libdevice spellings of plain arithmetic (name -> operator) and of other builtins
_SAME = {"add_rn": "add", "sub_rn": "sub", "mul_rn": "mul", "fast_dividef": "truediv"}
_ALIASES = {"fma_rn": "fma", "fast_expf": "exp", "fast_logf": "log", "fast_log2f": "log2",
            "fast_sinf": "sin", "fast_cosf": "cos", "fast_powf": "pow",
            "fast_tanf": "tan", "fast_exp10f": "exp10", "fast_log10f": "log10",
            "scalbn": "ldexp"}


def floats(cg: CodeGenerator, name: str, *xs: Any) -> list[Value]:
    """The operands as tiles of one float type and shape (integer tiles: float32)."""
    vals = [x for x in xs if isinstance(x, Value)]
    for x in xs:
        if isinstance(x, Value) and x.is_ptr or not isinstance(x, Value | bool | int | float):
            cg.fail(f"libdevice.{name} needs numbers, got "
                    f"{x.describe() if isinstance(x, Value) else repr(x)}")
    d = reduce(ops.promote, (v.dtype for v in vals)) if vals else tl.float32
    d = d if d.is_float and not d.is_fp8() else tl.float32
    shape = broadcast_shapes(*(v.shape for v in vals))
    return [materialize(cg.b, x, d, shape) for x in xs]


def _math_handler(name: str, op: type[Operation]) -> None:
    def handler(cg: CodeGenerator, *xs: Any) -> Value:
        args = floats(cg, name, *xs)
        return cg.b.value(op(*(a.ssa for a in args)), args[0].dtype, args[0].shape)
    builtin(name)(handler)


def _libm_handler(name: str) -> None:
    def handler(cg: CodeGenerator, *xs: Any) -> Value:
        args = floats(cg, name, *xs)
        return libm(cg, name, *args)
    builtin(name)(handler)


def libm(cg: CodeGenerator, name: str, *args: Value) -> Value:
    return cg.b.value(tile.LibmOp(name, *(a.ssa for a in args)), args[0].dtype,
                      args[0].shape)


for _name, _op in _MATH_OPS.items():
    _math_handler(_name, _op)
for _name in _LIBM:
    _libm_handler(_name)


def _binary_handler(name: str, op: str) -> None:
    def handler(cg: CodeGenerator, x: Any, y: Any) -> Value:
        a, b = floats(cg, name, x, y)
        return ops.binary(cg.b, op, a, b)
    builtin(name)(handler)


def _alias(name: str, target: str) -> None:
    def handler(cg: CodeGenerator, *xs: Any) -> Value:
        return TABLE.functions[target](cg, *xs)
    builtin(name)(handler)


for _name, _op in _SAME.items():
    _binary_handler(_name, _op)
for _name, _target in _ALIASES.items():
    _alias(_name, _target)


@builtin("ldexp")
def ldexp(cg: CodeGenerator, x: Any, n: Any) -> Value:
    (xv,) = floats(cg, "ldexp", x)
    if isinstance(n, Value) and (n.is_ptr or not n.dtype.is_int()) or \
            not isinstance(n, Value | int) or isinstance(n, bool):
        cg.fail(f"libdevice.ldexp needs an integer exponent, got {n!r}")
    shape = broadcast_shapes(xv.shape, n.shape if isinstance(n, Value) else ())
    return libm(cg, "ldexp", materialize(cg.b, xv, xv.dtype, shape),
                materialize(cg.b, n, tl.int32, shape))


@builtin("rcp_rn")
def rcp_rn(cg: CodeGenerator, x: Any) -> Value:
    (xv,) = floats(cg, "rcp_rn", x)
    return ops.binary(cg.b, "truediv", 1.0, xv)


@builtin("rsqrt_rn")
def rsqrt_rn(cg: CodeGenerator, x: Any) -> Value:
    (xv,) = floats(cg, "rsqrt_rn", x)
    return ops.binary(cg.b, "truediv", 1.0, cg.b.value(math.SqrtOp(xv.ssa), xv.dtype,
                                                       xv.shape))


def _test(name: str, make: Callable[[CodeGenerator, Value], Value]) -> None:
    def handler(cg: CodeGenerator, x: Any) -> Value:
        (xv,) = floats(cg, name, x)
        return make(cg, xv)
    builtin(name)(handler)


def _cmpf(cg: CodeGenerator, pred: str, a: Value, b: Value | float) -> Value:
    bv = materialize(cg.b, b, a.dtype, a.shape)
    return cg.b.value(tile.CmpFOp(pred, a.ssa, bv.ssa), tl.int1, a.shape)


def _abs(cg: CodeGenerator, x: Value) -> Value:
    return cg.b.value(math.AbsFOp(x.ssa), x.dtype, x.shape)


_test("isnan", lambda cg, x: _cmpf(cg, "uno", x, x))
_test("isinf", lambda cg, x: _cmpf(cg, "oeq", _abs(cg, x), float("inf")))
_test("finitef", lambda cg, x: _cmpf(cg, "olt", _abs(cg, x), float("inf")))
_test("isfinited", lambda cg, x: _cmpf(cg, "olt", _abs(cg, x), float("inf")))


@builtin("signbit")
def signbit(cg: CodeGenerator, x: Any) -> Value:
    (xv,) = floats(cg, "signbit", x)
    d = {16: tl.int16, 32: tl.int32, 64: tl.int64}[xv.dtype.bits]
    ix = cg.b.value(arith.BitcastOp(xv.ssa, value_type(d, xv.shape)), d, xv.shape)
    return cast(cg.b, ops.compare(cg.b, "lt", ix, 0), tl.int32)


@builtin("ilogb")
def ilogb(cg: CodeGenerator, x: Any) -> Value:
    """The exponent as int32: INT_MIN for 0 and NaN, INT_MAX for infinities (CUDA's)."""
    (xv,) = floats(cg, "ilogb", x)
    lb = libm(cg, "logb", xv)
    finite = _cmpf(cg, "olt", _abs(cg, lb), float("inf"))
    safe = ops.select(cg.b, finite, lb, 0.0)
    huge = ops.select(cg.b, _cmpf(cg, "oeq", lb, float("inf")), 2**31 - 1, -2**31)
    return ops.select(cg.b, finite, cast(cg.b, safe, tl.int32), huge)


@builtin("fdim")
def fdim(cg: CodeGenerator, x: Any, y: Any) -> Value:
    a, b = floats(cg, "fdim", x, y)
    return ops.select(cg.b, _cmpf(cg, "ole", a, b), 0.0, ops.binary(cg.b, "sub", a, b))


@builtin("saturatef")
def saturatef(cg: CodeGenerator, x: Any) -> Value:
    (xv,) = floats(cg, "saturatef", x)
    one = ops.binary(cg.b, "min", xv, 1.0)
    return ops.select(cg.b, _cmpf(cg, "ogt", xv, 0.0), one, 0.0)


def _to_int64(name: str, rounding: type[Operation]) -> None:
    def handler(cg: CodeGenerator, x: Any) -> Value:
        (xv,) = floats(cg, name, x)
        r = cg.b.value(rounding(xv.ssa), xv.dtype, xv.shape)
        return cast(cg.b, r, tl.int64)
    builtin(name)(handler)


_to_int64("llrint", math.RoundEvenOp)
_to_int64("llround", math.RoundOp)
