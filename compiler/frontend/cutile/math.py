"""cuTile's elementwise builtins: the function forms of the operators (``ct.add``,
``ct.truediv``, ``ct.floordiv``, ...), comparisons, bitwise operations,
``ct.minimum``/``ct.maximum`` and the math functions, with cuTile's keywords.

- ``rounding_mode`` (a ``ct.RoundingMode``, float operands only): ``RN`` is every
  operator's rounding. ``RZ``/``RM``/``RP`` on ``add``/``sub``/``mul``/``truediv``/``sqrt``
  of float32 and float64 round the nearest result one step toward zero, down or up where
  its exact error (error-free transformations: TwoSum, Dekker's product, the residual
  of a quotient or root) says the exact result lies that way; an overflow is infinity.
  Division and ``sqrt`` are exact so where the nearest quotient or root is (NumPy, PTX;
  WGSL's are within a few ulp, and so are its directed ones). ``FULL`` and ``APPROX`` (float32
  division and ``sqrt``, ``exp``, ``tanh``) compute as tilec does without them: division
  and ``sqrt`` rounded to nearest, ``exp``/``tanh`` as accurate as tilec's.
- ``flush_to_zero`` (float32 only) allows flushing subnormal inputs and results to zero;
  tilec keeps them, except where a GPU's approximate instruction flushes anyway.
- ``propagate_nan`` on ``minimum``/``maximum`` (and the ``max``/``min`` reductions): by
  default a NaN operand is ignored (the other is the result), as in cuTile; with True,
  a NaN wins.
"""

from __future__ import annotations

import ast
import builtins
import operator
from typing import Any

import compiler.language as tl
from compiler.frontend import operators as ops
from compiler.frontend.codegen import CodeGenerator
from compiler.frontend.cutile.table import builtin
from compiler.frontend.triton import TABLE as TRITON
from compiler.frontend.values import Value
from compiler.tile._enums import RoundingMode
from dialects import tile

DIRECTED = {RoundingMode.RZ: "zero", RoundingMode.RM: "down", RoundingMode.RP: "up"}

# ---------------------------------------------------------------- keyword checks


def rounding(cg: CodeGenerator, mode: Any, allowed: tuple[RoundingMode, ...], dtype: Any,
             what: str) -> RoundingMode | None:
    """``rounding_mode`` checked as cuTile does: a ``ct.RoundingMode`` this operation takes,
    on float operands (``FULL``/``APPROX`` on float32 only)."""
    if mode is None:
        return None
    if not isinstance(mode, RoundingMode) or mode not in allowed:
        cg.fail(f"{what}: rounding_mode must be one of "
                f"{', '.join(f'ct.RoundingMode.{m.name}' for m in allowed)}, got {mode!r}")
    if dtype is None or not dtype.is_float or dtype.is_fp8():
        cg.fail(f"{what}: rounding_mode applies to float16, bfloat16, float32 and float64 "
                f"operands, not {dtype}")
    if mode in (RoundingMode.FULL, RoundingMode.APPROX) and dtype != tl.float32:
        cg.fail(f"{what}: rounding_mode {mode.name} applies to float32 operands, not {dtype}")
    return mode


def flush(cg: CodeGenerator, flag: Any, dtype: Any, what: str) -> None:
    """``flush_to_zero``: a constant bool, True only on float32."""
    if isinstance(flag, Value) or not isinstance(flag, bool | int):
        cg.fail(f"{what}: flush_to_zero must be a constant bool, got {flag!r}")
    if flag and dtype != tl.float32:
        cg.fail(f"{what}: flush_to_zero applies to float32 operands, not {dtype}")


def _dtype_of(*xs: Any) -> tl.dtype | None:
    """The type the operands compute in, or None for Python numbers only."""
    vals = [x.dtype for x in xs if isinstance(x, Value)]
    if not vals:
        return None
    d = vals[0]
    for other in vals[1:]:
        d = ops.promote(d, other)
    return d


def _number_dtype(*xs: Any) -> tl.dtype:
    d = _dtype_of(*xs)
    if d is not None:
        return d
    return tl.float32 if any(isinstance(x, float) for x in xs) else tl.int32


# ---------------------------------------------------------------- arithmetic

_BASIC = (RoundingMode.RN, RoundingMode.RZ, RoundingMode.RM, RoundingMode.RP)
_AST = {"add": ast.Add, "sub": ast.Sub, "mul": ast.Mult, "truediv": ast.Div}


def _arithmetic(name: str, allowed: tuple[RoundingMode, ...]):
    def handler(cg: CodeGenerator, x: Any, y: Any, rounding_mode: Any = None,
                flush_to_zero: Any = False) -> Any:
        what = f"ct.{name}"
        d = _number_dtype(x, y)
        if name == "truediv" and not d.is_float:
            d = tl.float32
        mode = rounding(cg, rounding_mode, allowed, d, what)
        flush(cg, flush_to_zero, d, what)
        if mode not in DIRECTED:
            return cg._binop(_AST[name], x, y)
        if d not in (tl.float32, tl.float64):
            cg.fail(f"{what}: rounding_mode {mode.name} is supported on float32 and float64, "
                    f"not {d}")
        xv, yv = ops.operands(cg.b, x, y)
        return directed(cg, name, xv, yv, DIRECTED[mode])
    handler.__name__ = handler.__qualname__ = name
    builtin(name)(handler)


for _name in ("add", "sub", "mul"):
    _arithmetic(_name, _BASIC)
_arithmetic("truediv", (*_BASIC, RoundingMode.FULL, RoundingMode.APPROX))


def directed(cg: CodeGenerator, name: str, x: Value, y: Value | None, toward: str) -> Value:
    """``x <name> y`` rounded ``toward`` "zero", "down" or "up": the nearest result ``s``,
    moved one float toward the exact result where ``s`` lies on the wrong side of it."""
    b = cg.b
    if name in ("add", "sub"):
        s, err = _two_sum(cg, x, y if name == "add" else ops.unary(b, "neg", y))
    elif name == "mul":
        s, err = _two_prod(cg, x, y)
    else:  # x - s * y, exact; the exact quotient (root) lies above s where it is positive
        s = _fence(cg, ops.binary(b, "truediv", x, y) if name == "truediv" else
                   TRITON.functions["sqrt"](cg, x))
        p, e = _two_prod(cg, s, y if name == "truediv" else s)
        err = ops.binary(b, "sub", ops.binary(b, "sub", x, p), e)
        if name == "truediv":
            err = ops.select(b, ops.compare(b, "lt", y, 0.0), ops.unary(b, "neg", err), err)
    below = ops.compare(b, "gt", err, 0.0)  # s is below the exact result
    above = ops.compare(b, "lt", err, 0.0)
    if toward == "zero":
        move = ops.select(b, ops.compare(b, "gt", s, 0.0), above, below)
        target: Any = 0.0
    elif toward == "down":
        move, target = above, float("-inf")
    else:
        move, target = below, float("inf")
    stepped = TRITON.functions["nextafter"](cg, s, ops.materialize(b, target, s.dtype, s.shape))
    return ops.select(b, move, stepped, s)


def _fence(cg: CodeGenerator, v: Value) -> Value:
    """``v``, hidden from the target compiler's algebra (WGSL's would cancel the error
    terms below)."""
    return cg.b.value(tile.ArithFenceOp(v.ssa), v.dtype, v.shape)


def _two_sum(cg: CodeGenerator, x: Value, y: Value) -> tuple[Value, Value]:
    """``x + y`` as ``s + err`` exactly (Knuth's TwoSum)."""
    b = cg.b
    s = _fence(cg, ops.binary(b, "add", x, y))
    v = _fence(cg, ops.binary(b, "sub", s, x))
    return s, ops.binary(b, "add", ops.binary(b, "sub", x, ops.binary(b, "sub", s, v)),
                         ops.binary(b, "sub", y, v))


def _two_prod(cg: CodeGenerator, x: Value, y: Value) -> tuple[Value, Value]:
    """``x * y`` as ``p + err`` exactly: float64 (no WGSL) by a fused multiply-add,
    float32 by Dekker's partial products (WGSL's ``fma`` may round the product first)."""
    b = cg.b
    p = _fence(cg, ops.binary(b, "mul", x, y))
    if x.dtype is tl.float64:
        return p, TRITON.functions["fma"](cg, x, y, ops.unary(b, "neg", p))
    (xh, xl), (yh, yl) = _split(cg, x), _split(cg, y)

    def mul(u: Value, v: Value) -> Value:
        return ops.binary(b, "mul", u, v)
    err = ops.binary(b, "add", ops.binary(b, "add", ops.binary(b, "sub", mul(xh, yh), p),
                                          mul(xh, yl)), mul(xl, yh))
    return p, ops.binary(b, "add", err, mul(xl, yl))


def _split(cg: CodeGenerator, x: Value) -> tuple[Value, Value]:
    """float32 ``x`` as ``hi + lo`` exactly, each of at most 12 significant bits."""
    cast_ = TRITON.functions["cast"]
    bits = ops.binary(cg.b, "and", cast_(cg, x, tl.int32, bitcast=True), ~0xFFF)
    hi = cast_(cg, bits, tl.float32, bitcast=True)
    return hi, ops.binary(cg.b, "sub", x, hi)


def _python_op(name: str, op: type) -> None:
    def handler(cg: CodeGenerator, x: Any, y: Any) -> Any:
        return cg._binop(op, x, y)
    handler.__name__ = handler.__qualname__ = name
    builtin(name)(handler)


for _name, _op in (("floordiv", ast.FloorDiv), ("mod", ast.Mod), ("pow", ast.Pow),
                   ("bitwise_and", ast.BitAnd), ("bitwise_or", ast.BitOr),
                   ("bitwise_xor", ast.BitXor), ("bitwise_lshift", ast.LShift),
                   ("bitwise_rshift", ast.RShift)):
    _python_op(_name, _op)


@builtin("divmod")
def divmod_(cg: CodeGenerator, x: Any, y: Any) -> tuple[Any, Any]:
    if ops.is_float_operand(x) or ops.is_float_operand(y):
        cg.fail("ct.divmod takes integers (as cuTile's)")
    return cg._binop(ast.FloorDiv, x, y), cg._binop(ast.Mod, x, y)


@builtin("negative")
def negative(cg: CodeGenerator, x: Any) -> Any:
    return ops.unary(cg.b, "neg", x) if isinstance(x, Value) else cg.constexpr_eval(
        operator.neg, x)


@builtin("bitwise_not")
def bitwise_not(cg: CodeGenerator, x: Any) -> Any:
    if not isinstance(x, Value):
        return cg.constexpr_eval(operator.not_ if isinstance(x, bool) else operator.invert, x)
    return ops.unary(cg.b, "not" if x.dtype is tl.int1 else "invert", x)


def _comparison(name: str, cmp: str) -> None:
    def handler(cg: CodeGenerator, x: Any, y: Any) -> Any:
        if isinstance(x, Value) or isinstance(y, Value):
            return ops.compare(cg.b, cmp, x, y)
        return cg.constexpr_eval(getattr(operator, cmp), x, y)
    handler.__name__ = handler.__qualname__ = name
    builtin(name)(handler)


for _name, _cmp in (("greater", "gt"), ("greater_equal", "ge"), ("less", "lt"),
                    ("less_equal", "le"), ("equal", "eq"), ("not_equal", "ne")):
    _comparison(_name, _cmp)


# ---------------------------------------------------------------- minimum and maximum


def extreme(cg: CodeGenerator, name: str, x: Any, y: Any, propagate_nan: bool) -> Any:
    """``max``/``min`` of ``x`` and ``y``; unless ``propagate_nan``, a NaN operand gives
    way to the other (both NaN: NaN)."""
    if not isinstance(x, Value) and not isinstance(y, Value):
        return cg.constexpr_eval(getattr(builtins, name), x, y)
    xv, yv = ops.operands(cg.b, x, y)
    if xv.dtype.is_float and not propagate_nan:
        b = cg.b
        xv, yv = (ops.select(b, ops.compare(b, "ne", xv, xv), yv, xv),
                  ops.select(b, ops.compare(b, "ne", yv, yv), xv, yv))
    return ops.binary(cg.b, name, xv, yv)


def _extreme(name: str) -> None:
    def handler(cg: CodeGenerator, x: Any, y: Any, flush_to_zero: Any = False,
                propagate_nan: Any = False) -> Any:
        flush(cg, flush_to_zero, _number_dtype(x, y), f"ct.{name}imum")
        return extreme(cg, name, x, y, bool(propagate_nan))
    handler.__name__ = handler.__qualname__ = f"{name}imum"
    builtin(f"{name}imum")(handler)


_extreme("max")
_extreme("min")


# ---------------------------------------------------------------- math functions


def _shared(name: str, *keywords: str, modes: tuple[RoundingMode, ...] = ()) -> None:
    """``ct.<name>`` as tilec's ``tl.<name>``, taking cuTile's ``keywords``."""
    def handler(cg: CodeGenerator, x: Any, **kwargs: Any) -> Value:
        unknown = sorted(set(kwargs) - set(keywords))
        if unknown:
            cg.fail(f"ct.{name} got unexpected keyword(s) {', '.join(unknown)}"
                    + (f" (it takes {', '.join(keywords)})" if keywords else ""))
        d = _number_dtype(x)
        d = d if d.is_float and not d.is_fp8() else tl.float32
        if "flush_to_zero" in kwargs:
            flush(cg, kwargs["flush_to_zero"], d, f"ct.{name}")
        mode = rounding(cg, kwargs.get("rounding_mode"), modes, d, f"ct.{name}")
        if mode in DIRECTED:
            if d not in (tl.float32, tl.float64):
                cg.fail(f"ct.{name}: rounding_mode {mode.name} is supported on float32 and "
                        f"float64, not {d}")
            return directed(cg, name, ops.materialize(cg.b, x, d, _shape(x)), None,
                            DIRECTED[mode])
        return TRITON.functions[name](cg, x)
    handler.__name__ = handler.__qualname__ = name
    builtin(name)(handler)


def _shape(x: Any) -> tuple[int, ...]:
    return x.shape if isinstance(x, Value) else ()


_FULL = (RoundingMode.FULL, RoundingMode.APPROX)
_shared("exp", "rounding_mode", modes=_FULL)
_shared("tanh", "rounding_mode", modes=_FULL)
_shared("exp2", "flush_to_zero")
_shared("rsqrt", "flush_to_zero")
_shared("sqrt", "rounding_mode", "flush_to_zero", modes=(*_BASIC, RoundingMode.APPROX))
for _name in ("log", "log2", "sin", "cos", "tan", "sinh", "cosh", "floor", "ceil",
              "isnan"):
    _shared(_name)


@builtin("atan2")
def atan2(cg: CodeGenerator, x1: Any, x2: Any) -> Value:
    return TRITON.functions["atan2"](cg, x1, x2)
