"""The core of ``expand-math``: values with Python's operators that emit ``arith``/``math``/
``tile`` ops, and the table of expansions the feature modules fill.

An expansion is written as plain arithmetic on ``F`` (float), ``I`` (integer of the same
width) and ``B`` (i1) values: ``fma(x, x * p, x)``, ``select(a < 0.5, small, large)``,
``bits(x) >> 23``. Each operator emits one op before the op being expanded, of the same
shape (scalar or tile); a Python number becomes a constant of the value's type, rounded
to it first. Only ops every target computes as IEEE does are used (``+ - * /``, ``sqrt``,
``roundeven``, integer and bit operations, comparisons, selects), so the NumPy backend
running an expansion (``TILEC_EXPAND_MATH=1``) computes what PTX does, bit for bit. Two
WGSL liberties are designed around: its ``fma`` may round the product first (lavapipe's
does), so no f32 sequence needs a fused one (exact products come from Dekker's
splitting), and its compilers apply algebraic identities such as ``(a + b) - a = b``, so
compensated arithmetic fences the values it must not see through (``tile.arith_fence``).
"""

from __future__ import annotations

import math as pymath
from collections.abc import Callable, Sequence
from decimal import Context, Decimal
from typing import TypeVar

import numpy as np
from xdsl.dialects import arith, math, scf
from xdsl.dialects.builtin import (
    FloatAttr,
    IntegerAttr,
    IntegerType,
    f64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from dialects import arith_shaped as casts
from dialects import tile
from dialects.tile import element_type, i1_like, like


class Emitter:
    """Inserts ops of float type ``t`` (f32 or f64, scalar or shaped), its integer twin
    and its i1 shape before ``at``, with ``at``'s location; constants are made once.
    ``fused``: the target rounds an f32 ``fma`` once (PTX), so exact products may use it."""

    def __init__(self, at: Operation, t: Attribute, outer: Emitter | None = None,
                 fused: bool = False):
        self.at, self.ft, self.fused = at, t, fused
        self.wide = element_type(t) == f64
        self.bits = 64 if self.wide else 32
        self.mant = 52 if self.wide else 23  # explicit mantissa bits
        self.bias = 1023 if self.wide else 127
        self.it = like(t, IntegerType(self.bits))
        self.bt = i1_like(t)
        self.outer = outer  # makes the constants (before the loop this one fills)
        self.inside: Emitter | None = None  # the loop body being filled, if any
        self._consts: dict[tuple[str, str], SSAValue] = {}

    def _target(self) -> Emitter:
        """Where ops go now: the innermost loop body being filled."""
        e = self
        while e.inside is not None:
            e = e.inside
        return e

    def insert(self, op: Operation) -> None:
        op.location = self.at.location
        Rewriter.insert_op(op, InsertPoint.before(self.at))

    def emit(self, op: Operation) -> SSAValue:
        """Insert the single-result ``op`` (into the loop body being filled, if any)."""
        self._target().insert(op)
        return op.results[0]

    def repeat(self, n: int, init: Sequence[V], body: Callable[..., Sequence[V]]) -> list[V]:
        """``init`` after ``n`` applications of ``body``: an ``scf.for`` whose body ``body``
        fills, given the loop's values (ops of any value made meanwhile go there)."""
        i32 = IntegerType(32)
        bounds = [self.const(v, i32) for v in (0, n, 1)]
        block = Block(arg_types=[i32, *(v.v.type for v in init)])
        yield_op = scf.YieldOp()
        block.add_op(yield_op)
        loop = scf.ForOp(*bounds, [v.v for v in init], Region(block))
        self._target().insert(loop)
        before = Emitter(loop, self.ft)  # the loop's constants, defined before it
        before._consts = self._consts
        inner = Emitter(yield_op, self.ft, before)
        self.inside = inner
        out = body(*(type(v)(self, a) for v, a in zip(init, block.args[1:], strict=True)))
        self.inside = None
        Rewriter.replace_op(yield_op, scf.YieldOp(*(v.v for v in out)))
        return [type(v)(self, r) for v, r in zip(init, loop.results, strict=True)]

    def const(self, v: float, t: Attribute) -> SSAValue:
        """A constant of type ``t`` (float, integer or i1; scalar or a tile splat from
        one, as the frontend makes them)."""
        target = self._target()
        if target is not self:
            return target.const(v, t)
        if self.outer is not None:
            return self.outer.const(v, t)
        key = (str(t), repr(v))  # repr: -0.0 is not 0.0
        if key not in self._consts:
            elem = element_type(t)
            attr = IntegerAttr(int(v), elem) if isinstance(elem, IntegerType) else \
                FloatAttr(float(v), elem)  # pyright: ignore[reportArgumentType]
            scalar = self.emit(arith.ConstantOp(attr, elem))
            self._consts[key] = self.emit(tile.SplatOp(scalar, t)) if t != elem else scalar
        return self._consts[key]

    def f(self, v: float) -> F:
        """The float constant ``v`` rounded to the float type."""
        return F(self, self.const(float(np.float64(v) if self.wide else np.float32(v)), self.ft))

    def i(self, v: int) -> I:
        v = (v + (1 << (self.bits - 1))) % (1 << self.bits) - (1 << (self.bits - 1))
        return I(self, self.const(v, self.it))

    def b(self, v: bool) -> B:
        return B(self, self.const(-1 if v else 0, self.bt))


Number = float | int


class _Value:
    __slots__ = ("e", "v")

    def __init__(self, e: Emitter, v: SSAValue):
        self.e, self.v = e, v

    def _op(self, cls: Callable[..., Operation], *others: object) -> SSAValue:
        return self.e.emit(cls(self.v, *(self._lift(o).v for o in others)))

    def _lift(self, o: object) -> _Value:
        raise NotImplementedError


V = TypeVar("V", bound=_Value)


class F(_Value):
    """A float value (the expansion's float type)."""

    def _lift(self, o: object) -> F:
        return o if isinstance(o, F) else self.e.f(o)  # type: ignore[arg-type]

    def __add__(self, o: F | Number) -> F:
        return F(self.e, self._op(arith.AddfOp, o))

    def __radd__(self, o: Number) -> F:
        return self.e.f(o) + self

    def __sub__(self, o: F | Number) -> F:
        return F(self.e, self._op(arith.SubfOp, o))

    def __rsub__(self, o: Number) -> F:
        return self.e.f(o) - self

    def __mul__(self, o: F | Number) -> F:
        return F(self.e, self._op(arith.MulfOp, o))

    def __rmul__(self, o: Number) -> F:
        return self.e.f(o) * self

    def __truediv__(self, o: F | Number) -> F:
        return F(self.e, self._op(arith.DivfOp, o))

    def __rtruediv__(self, o: Number) -> F:
        return self.e.f(o) / self

    def __neg__(self) -> F:
        return F(self.e, self.e.emit(arith.NegfOp(self.v)))

    def _cmp(self, pred: str, o: F | Number) -> B:
        return B(self.e, self.e.emit(tile.CmpFOp(pred, self.v, self._lift(o).v)))

    def __lt__(self, o: F | Number) -> B:
        return self._cmp("olt", o)

    def __le__(self, o: F | Number) -> B:
        return self._cmp("ole", o)

    def __gt__(self, o: F | Number) -> B:
        return self._cmp("ogt", o)

    def __ge__(self, o: F | Number) -> B:
        return self._cmp("oge", o)

    def eq(self, o: F | Number) -> B:
        return self._cmp("oeq", o)


class I(_Value):
    """An integer value of the float type's width (i32 or i64), signless."""

    def _lift(self, o: object) -> I:
        return o if isinstance(o, I) else self.e.i(o)  # type: ignore[arg-type]

    def __add__(self, o: I | int) -> I:
        return I(self.e, self._op(arith.AddiOp, o))

    def __radd__(self, o: int) -> I:
        return self.e.i(o) + self

    def __sub__(self, o: I | int) -> I:
        return I(self.e, self._op(arith.SubiOp, o))

    def __rsub__(self, o: int) -> I:
        return self.e.i(o) - self

    def __mul__(self, o: I | int) -> I:
        return I(self.e, self._op(arith.MuliOp, o))

    def __floordiv__(self, o: I | int) -> I:
        """Signed division, truncated (C's)."""
        return I(self.e, self._op(arith.DivSIOp, o))

    def __and__(self, o: I | int) -> I:
        return I(self.e, self._op(arith.AndIOp, o))

    def __or__(self, o: I | int) -> I:
        return I(self.e, self._op(arith.OrIOp, o))

    def __xor__(self, o: I | int) -> I:
        return I(self.e, self._op(arith.XOrIOp, o))

    def __lshift__(self, o: I | int) -> I:
        return I(self.e, self._op(arith.ShLIOp, o))

    def __rshift__(self, o: I | int) -> I:
        """Arithmetic (sign-filling) shift."""
        return I(self.e, self._op(arith.ShRSIOp, o))

    def _cmp(self, pred: str, o: I | int) -> B:
        return B(self.e, self.e.emit(tile.CmpIOp(pred, self.v, self._lift(o).v)))

    def __lt__(self, o: I | int) -> B:
        return self._cmp("slt", o)

    def __le__(self, o: I | int) -> B:
        return self._cmp("sle", o)

    def __gt__(self, o: I | int) -> B:
        return self._cmp("sgt", o)

    def __ge__(self, o: I | int) -> B:
        return self._cmp("sge", o)

    def eq(self, o: I | int) -> B:
        return self._cmp("eq", o)


class B(_Value):
    """An i1 value: a condition."""

    def _lift(self, o: object) -> B:
        return o if isinstance(o, B) else self.e.b(bool(o))

    def __and__(self, o: B) -> B:
        return B(self.e, self._op(arith.AndIOp, o))

    def __or__(self, o: B) -> B:
        return B(self.e, self._op(arith.OrIOp, o))

    def __invert__(self) -> B:
        return B(self.e, self._op(arith.XOrIOp, True))


# -- functions of values ----------------------------------------------------------------

def select(c: B, a: F | Number, b: F | Number) -> F:
    """``c ? a : b`` of floats."""
    fa, fb = (v if isinstance(v, F) else c.e.f(v) for v in (a, b))
    return F(c.e, c.e.emit(tile.SelectOp(c.v, fa.v, fb.v)))


def iselect(c: B, a: I | int, b: I | int) -> I:
    """``c ? a : b`` of integers."""
    return I(c.e, c.e.emit(tile.SelectOp(c.v, c.e.i(a).v if isinstance(a, int) else a.v,
                                         c.e.i(b).v if isinstance(b, int) else b.v)))


def fma(a: F, b: F | Number, c: F | Number) -> F:
    """``a * b + c``: rounded once on PTX and NumPy, maybe twice on WGSL (whose ``fma`` is
    ``a * b + c``), so no f32 sequence relies on it being exact."""
    return F(a.e, a._op(math.FmaOp, b, c))


def _unary(cls: Callable[..., Operation]) -> Callable[[F], F]:
    def fn(x: F) -> F:
        return F(x.e, x.e.emit(cls(x.v)))
    return fn


sqrt = _unary(math.SqrtOp)  # correctly rounded on PTX; WGSL allows some ulps
rsqrt = _unary(math.RsqrtOp)  # approximate: PTX's rsqrt.approx, WGSL's inverseSqrt
exp2_native = _unary(math.Exp2Op)  # the target's own 2^x (PTX: ex2.approx.ftz.f32)
fabs = _unary(math.AbsFOp)
rint = _unary(math.RoundEvenOp)  # to nearest, ties to even
trunc = _unary(math.TruncOp)


def minimum(a: F, b: F | Number) -> F:
    """The smaller, NaN if either is."""
    return F(a.e, a._op(arith.MinimumfOp, b))


def maximum(a: F, b: F | Number) -> F:
    return F(a.e, a._op(arith.MaximumfOp, b))


def isnan(x: F) -> B:
    return x._cmp("uno", x)


def isinf(x: F) -> B:
    return fabs(x).eq(float("inf"))


def bits(x: F) -> I:
    """The bit pattern of ``x``."""
    return I(x.e, x.e.emit(arith.BitcastOp(x.v, x.e.it)))


def from_bits(i: I) -> F:
    return F(i.e, i.e.emit(arith.BitcastOp(i.v, i.e.ft)))


def to_float(i: I) -> F:
    """The signed integer ``i`` as a float (rounded to nearest)."""
    return F(i.e, i.e.emit(casts.SIToFPOp(i.v, i.e.ft)))


def to_int(x: F) -> I:
    """``x`` truncated to an integer (``x`` must be in range)."""
    return I(x.e, x.e.emit(casts.FPToSIOp(x.v, x.e.it)))


def copysign(x: F, s: F) -> F:
    """``x`` with the sign bit of ``s``."""
    e = x.e
    sign = 1 << (e.bits - 1)
    return from_bits((bits(x) & (sign - 1)) | (bits(s) & sign))


def pow2(k: I) -> F:
    """``2^k`` for an integer ``k`` of the normal range (-126..127 for f32)."""
    e = k.e
    return from_bits((k + (1023 if e.wide else 127)) << e.mant)


def scale(x: F, k: I) -> F:
    """``x * 2^k``, rounded once, for ``k`` up to twice the exponent range: the
    scaling is split in two normal powers of two."""
    half = k >> 1
    return x * pow2(half) * pow2(k - half)


def clamp_int(k: I, lo: int, hi: int) -> I:
    return iselect(k < lo, lo, iselect(k > hi, hi, k))


def scale_up(x: F, k: I) -> F:
    """``x * 2^k`` for ``0 <= k <= 3 (bias - 1)``, exact until it overflows (three normal
    powers of two)."""
    top = x.e.bias - 1
    k1 = clamp_int(k, 0, top)
    k2 = clamp_int(k - k1, 0, top)
    return x * pow2(k1) * pow2(k2) * pow2(k - k1 - k2)


def poly(coeffs: Sequence[float], z: F) -> F:
    """Horner's rule with fused multiply-adds; ``coeffs`` highest power first."""
    r = z.e.f(coeffs[0])
    for c in coeffs[1:]:
        r = fma(r, z, c)
    return r


def fence(x: F) -> F:
    """``x``, hidden from the target compiler's algebra (``tile.arith_fence``): error-free
    transformations below fence each value whose identity would cancel the error term."""
    return F(x.e, x.e.emit(tile.ArithFenceOp(x.v)))


def split(x: F) -> tuple[F, F]:
    """``x`` as ``hi + lo`` (exactly), each with at most 12 significant bits (f32), so
    that products of parts are exact: the low mantissa bits cleared, then the rest."""
    hi = from_bits(bits(x) & ~0xFFF)
    return hi, x - hi


def two_prod(a: F, b: F) -> tuple[F, F]:
    """``a * b`` as ``p + err`` exactly. f64 (PTX only) and f32 on a target whose ``fma``
    is fused take the error from a fused multiply-add; other f32 by Dekker's sum of
    partial products, since WGSL's ``fma`` may round the product first (lavapipe's does).
    Both give the same two numbers: ``err`` is exact."""
    p = fence(a * b)
    if a.e.wide or a.e.fused:
        return p, fma(a, b, -p)
    ah, al = split(a)
    bh, bl = split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def two_sum(a: F, b: F) -> tuple[F, F]:
    """``a + b`` as ``s + err`` exactly (Knuth)."""
    s = fence(a + b)
    v = fence(s - a)
    return s, (a - (s - v)) + (b - v)


# -- the expansions' table -------------------------------------------------------------

Expansion = Callable[..., F]
"""Takes and returns values of the computation type (``F``, and ``I`` for an integer
operand); f16 and bf16 are computed in f32."""

EXPANSIONS: dict[str, dict[bool, Expansion]] = {}
"""Function name (``asin`` for ``math.asin``, ``lgamma`` for ``tile.libm "lgamma"``) ->
its expansion for f32 (``False``) and f64 (``True``); filled by the feature modules."""


def expands(*names: str, f32: bool = True, f64: bool = True
            ) -> Callable[[Expansion], Expansion]:
    """Register the decorated expansion for ``names`` in the float widths it covers."""
    def register(fn: Expansion) -> Expansion:
        for name in names:
            widths = EXPANSIONS.setdefault(name, {})
            widths.update({w: fn for w, on in ((False, f32), (True, f64)) if on})
        return fn
    return register


# -- constants --------------------------------------------------------------------------

_CTX = Context(prec=40)


def dec(v: str | Decimal) -> Decimal:
    """A constant of 40 digits (computed in a private decimal context)."""
    return _CTX.create_decimal(v)


def dq(a: str | Decimal, b: str | Decimal) -> Decimal:
    """``a / b`` to 40 digits."""
    return _CTX.divide(dec(a), dec(b))


def dln(a: str | Decimal) -> Decimal:
    return _CTX.ln(dec(a))


def dsqrt(a: str | Decimal) -> Decimal:
    return _CTX.sqrt(dec(a))


def hi_lo(v: str | Decimal, hi_bits: int) -> tuple[float, float]:
    """``v`` as ``hi + lo``: ``hi`` has ``hi_bits`` significant bits (so that its product
    with a small integer is exact), ``lo`` is the rest (to be rounded to the float type)."""
    x = dec(v)
    exp = pymath.frexp(float(x))[1]
    hi = pymath.ldexp(round(pymath.ldexp(float(x), hi_bits - exp)), exp - hi_bits)
    return hi, float(_CTX.subtract(x, Decimal(hi)))


def parts(v: str | Decimal, n: int, wide: bool, bits: int = 0) -> tuple[float, ...]:
    """``v`` as ``n`` floats of the type (f64 if ``wide``, else f32), each what the ones
    before leave, rounded to the type or (``bits``) to that many significant bits; the
    last is rounded to the type."""
    rest, out = dec(v), []
    for i in range(n):
        p = hi_lo(rest, bits)[0] if bits and i < n - 1 else \
            float(rest) if wide else float(np.float32(float(rest)))
        out.append(p)
        rest = _CTX.subtract(rest, Decimal(p))
    return tuple(out)


LN2 = "0.6931471805599453094172321214581765680755"
LN10 = "2.302585092994045684017960785236403545966"
PI = "3.141592653589793238462643383279502884197"
