"""Triton's ``libdevice`` integer functions, conversions and bit reinterpretations
(``compiler.libdevice.INTEGER``, ``CONVERSIONS``, ``BITS``), and the names tilec does not
compute (``UNSUPPORTED``: a ``CompileError`` naming the function).

``clz``/``popc`` are ``math.ctlz``/``ctpop``, ``ffs`` comes from ``math.cttz``, ``brev`` is
``tile.brev``: every target has them. The rest are built from integer ops: ``mulhi`` of
signed operands corrects the unsigned high half (``tile.umulhi``) for each negative
operand, ``hadd``/``rhadd`` average without overflow as ``(x & y) + ((x ^ y) >> 1)``,
``byte_perm`` shifts each selected byte into place. Results have the dtypes Triton gives
them (``popc`` of an int64 is int32, ``float2uint_rn`` is int32 holding the unsigned bits).
"""

from __future__ import annotations

from typing import Any

from xdsl.dialects import arith, math
from xdsl.ir import Operation

import compiler.language as tl
from compiler import libdevice as names
from compiler.frontend import operators as ops
from compiler.frontend.codegen import CodeGenerator
from compiler.frontend.triton.libdevice import floats
from compiler.frontend.triton.table import builtin
from compiler.frontend.values import Value, cast, constant, value_type
from dialects import arith_shaped as casts
from dialects import tile


def _ints(cg: CodeGenerator, name: str, *xs: Any, signed: bool | None = None) -> list[Value]:
    """The operands as 32- or 64-bit integer tiles of one type and shape."""
    vals = [x for x in xs if isinstance(x, Value)]
    if not vals or any(v.is_ptr or not v.dtype.is_int() or v.dtype.bits not in (32, 64)
                       for v in vals):
        cg.fail(f"libdevice.{name} takes 32- or 64-bit integer tiles, got "
                f"{', '.join(v.describe() if isinstance(v, Value) else repr(v) for v in xs)}")
    a = vals[0]
    for v in xs[1:]:
        a, _ = ops.operands(cg.b, a, v)
    return [ops.materialize(cg.b, x, a.dtype, a.shape) for x in xs]


def _op(cg: CodeGenerator, op: Operation, like: Value) -> Value:
    return cg.b.value(op, like.dtype, like.shape)


def _count(name: str, op: type[Operation]) -> None:
    def handler(cg: CodeGenerator, x: Any) -> Value:
        (xv,) = _ints(cg, name, x)
        return cast(cg.b, _op(cg, op(xv.ssa), xv), tl.int32)
    builtin(name)(handler)


_count("clz", math.CountLeadingZerosOp)
_count("popc", math.CtPopOp)


@builtin("ffs")
def ffs(cg: CodeGenerator, x: Any) -> Value:
    (xv,) = _ints(cg, "ffs", x)
    tz = cast(cg.b, _op(cg, math.CountTrailingZerosOp(xv.ssa), xv), tl.int32)
    return ops.select(cg.b, ops.compare(cg.b, "eq", xv, 0), 0, ops.binary(cg.b, "add", tz, 1))


@builtin("brev")
def brev(cg: CodeGenerator, x: Any) -> Value:
    (xv,) = _ints(cg, "brev", x)
    return _op(cg, tile.BrevOp(xv.ssa), xv)


@builtin("mulhi")
def mulhi(cg: CodeGenerator, x: Any, y: Any) -> Value:
    """Unsigned: ``tile.umulhi``; signed: minus ``y`` where ``x < 0`` and ``x`` where
    ``y < 0`` (the high half of a two's complement product)."""
    a, b = _ints(cg, "mulhi", x, y)
    hi = _op(cg, tile.UMulHiOp(a.ssa, b.ssa), a)
    if not a.dtype.is_signed:
        return hi
    for s, t in ((a, b), (b, a)):
        neg = ops.compare(cg.b, "lt", s, 0)
        hi = ops.binary(cg.b, "sub", hi, ops.select(cg.b, neg, t, 0))
    return hi


@builtin("mul24")
def mul24(cg: CodeGenerator, x: Any, y: Any) -> Value:
    a, b = _ints(cg, "mul24", x, y)
    if a.dtype.is_signed:
        low = [ops.binary(cg.b, "rshift", ops.binary(cg.b, "lshift", v, 8), 8) for v in (a, b)]
    else:
        low = [ops.binary(cg.b, "and", v, 0xFFFFFF) for v in (a, b)]
    return ops.binary(cg.b, "mul", *low)


@builtin("hadd")
def hadd(cg: CodeGenerator, x: Any, y: Any) -> Value:
    a, b = _ints(cg, "hadd", x, y)
    half = ops.binary(cg.b, "rshift", ops.binary(cg.b, "xor", a, b), 1)
    return ops.binary(cg.b, "add", ops.binary(cg.b, "and", a, b), half)


@builtin("rhadd")
def rhadd(cg: CodeGenerator, x: Any, y: Any) -> Value:
    a, b = _ints(cg, "rhadd", x, y)
    half = ops.binary(cg.b, "rshift", ops.binary(cg.b, "xor", a, b), 1)
    return ops.binary(cg.b, "sub", ops.binary(cg.b, "or", a, b), half)


@builtin("sad")
def sad(cg: CodeGenerator, x: Any, y: Any, z: Any) -> Value:
    a, b = _ints(cg, "sad", x, y)
    diff = ops.binary(cg.b, "sub", ops.binary(cg.b, "max", a, b), ops.binary(cg.b, "min", a, b))
    return ops.binary(cg.b, "add", diff, z)


@builtin("byte_perm")
def byte_perm(cg: CodeGenerator, x: Any, y: Any, s: Any) -> Value:
    """Byte ``i`` of the result is byte ``(s >> 4i) & 7`` of the 8 bytes ``y:x``."""
    a, b, sel = (cast(cg.b, v, tl.uint32) for v in _ints(cg, "byte_perm", x, y, s))
    out: Value | int = 0
    for i in range(4):
        n = ops.binary(cg.b, "and", ops.binary(cg.b, "rshift", sel, 4 * i), 7)
        shift = ops.binary(cg.b, "mul", ops.binary(cg.b, "and", n, 3), 8)
        word = ops.select(cg.b, ops.compare(cg.b, "lt", n, 4), a, b)
        byte = ops.binary(cg.b, "and", ops.binary(cg.b, "rshift", word, shift), 0xFF)
        out = ops.binary(cg.b, "or", out, ops.binary(cg.b, "lshift", byte, 8 * i))
    assert isinstance(out, Value)
    return cast(cg.b, out, tl.int32)


# -- conversions and bits ---------------------------------------------------------------

_KINDS = {"int": tl.int32, "uint": tl.int32, "ll": tl.int64, "ull": tl.int64,
          "float32": tl.float32, "float64": tl.float64}
_ROUND = {"rn": math.RoundEvenOp, "rd": math.FloorOp, "ru": math.CeilOp}


def _to_int(cg: CodeGenerator, x: Value, target: str, rounding: str) -> Value:
    if rounding in _ROUND:
        x = cg.b.value(_ROUND[rounding](x.ssa), x.dtype, x.shape)
    dst = _KINDS[target]
    if target == "uint":
        return cast(cg.b, cast(cg.b, x, tl.uint32), dst)
    if target == "ull":
        return cg.b.value(casts.FPToUIOp(x.ssa, value_type(dst, x.shape)), dst, x.shape)
    return cast(cg.b, x, dst)


def _to_float(cg: CodeGenerator, x: Value, source: str, dst: tl.dtype) -> Value:
    if source == "uint":
        x = cast(cg.b, x, tl.uint32)
    if source == "ull":
        return cg.b.value(casts.UIToFPOp(x.ssa, value_type(dst, x.shape)), dst, x.shape)
    return cast(cg.b, x, dst)


def _convert(name: str, source: str, target: str, rounding: str) -> None:
    src = _KINDS[source]

    def handler(cg: CodeGenerator, x: Any) -> Value:
        xv = x if isinstance(x, Value) else constant(cg.b, x, src)
        if xv.is_ptr or xv.dtype.is_float != src.is_float:
            cg.fail(f"libdevice.{name} takes {src}, got {xv.describe()}")
        xv = cast(cg.b, xv, src)
        if src.is_float and target in ("int", "uint", "ll", "ull"):
            return _to_int(cg, xv, target, rounding)
        if not src.is_float:
            return _to_float(cg, xv, source, _KINDS[target])
        return cast(cg.b, xv, _KINDS[target], toward_zero=rounding == "rz")
    builtin(name)(handler)


for _name, (_src, _dst, _rnd) in names.CONVERSIONS.items():
    _convert(_name, _src, _dst, _rnd)


def _reinterpret(name: str, source: str, target: str) -> None:
    src, dst = tl.dtype_from_str(source), tl.dtype_from_str(target)

    def handler(cg: CodeGenerator, x: Any) -> Value:
        xv = x if isinstance(x, Value) else constant(cg.b, x, src)
        if xv.is_ptr or xv.dtype.bits != src.bits or xv.dtype.is_float != src.is_float:
            cg.fail(f"libdevice.{name} takes a {src.bits}-bit "
                    f"{'float' if src.is_float else 'integer'}, got {xv.describe()}")
        return cg.b.value(arith.BitcastOp(xv.ssa, value_type(dst, xv.shape)), dst, xv.shape)
    builtin(name)(handler)


for _name in ("float_as_int", "int_as_float", "float_as_uint", "uint_as_float",
              "double_as_longlong", "longlong_as_double"):
    _reinterpret(_name, *names.BITS[_name])


def _words(cg: CodeGenerator, name: str, x: Any) -> Value:
    (xv,) = floats(cg, name, x)
    if xv.dtype is not tl.float64:
        cg.fail(f"libdevice.{name} takes float64, got {xv.describe()}")
    return cg.b.value(arith.BitcastOp(xv.ssa, value_type(tl.int64, xv.shape)), tl.int64,
                      xv.shape)


@builtin("double2hiint")
def double2hiint(cg: CodeGenerator, x: Any) -> Value:
    return cast(cg.b, ops.binary(cg.b, "rshift", _words(cg, "double2hiint", x), 32), tl.int32)


@builtin("double2loint")
def double2loint(cg: CodeGenerator, x: Any) -> Value:
    return cast(cg.b, _words(cg, "double2loint", x), tl.int32)


@builtin("hiloint2double")
def hiloint2double(cg: CodeGenerator, hi: Any, lo: Any) -> Value:
    h, lw = _ints(cg, "hiloint2double", hi, lo)
    high = ops.binary(cg.b, "lshift", cast(cg.b, h, tl.int64), 32)
    word = ops.binary(cg.b, "or", high, cast(cg.b, cast(cg.b, lw, tl.uint32), tl.int64))
    return cg.b.value(arith.BitcastOp(word.ssa, value_type(tl.float64, word.shape)),
                      tl.float64, word.shape)


def _unsupported(name: str) -> None:
    def handler(cg: CodeGenerator, *_args: Any, **_kwargs: Any) -> Value:
        cg.fail(f"libdevice.{name} is not supported by tilec (Bessel functions and directed "
                "rounding other than toward zero are not implemented)")
    builtin(name)(handler)


for _name in names.UNSUPPORTED:
    _unsupported(_name)
