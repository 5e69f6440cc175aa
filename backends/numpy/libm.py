"""What the libdevice math functions mean, in NumPy: the ``math`` ops beyond ``ops.py``'s
(``asin`` ... ``round``, ``ctpop``), ``tile.libm``, ``tile.brev`` and ``tile.arith_fence``
(its operand).

Float functions are computed in a wider type and rounded once: float64 for f32, f16 and
bf16 (correctly rounded but for the rare ties of double rounding), the x87 long double
for f64 where NumPy has the function for it (else float64, within an ulp or two). What
NumPy lacks is written here: ``erfinv`` and its kin by Newton's method on ``math.erf``/
``erfc``, ``sinpi``/``cospi`` with the exact reduction modulo 2, IEEE ``remainder`` from
``fmod``, and ``round`` (half away from zero) from ``trunc``. Integer functions are exact.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from xdsl.ir import Operation

from backends.numpy.kernel import BUILDERS, Impl
from dialects import tile

Fn = Callable[[np.ndarray], np.ndarray]
_SQRT2 = math.sqrt(2.0)


def _in_wide(fn: Callable[..., np.ndarray], long: bool = True) -> Callable[..., np.ndarray]:
    """``fn`` computed in a wider type and rounded to the first operand's; ``long``: f64
    operands go to long double (``fn`` must accept it)."""
    def run(*args: np.ndarray) -> np.ndarray:
        dt = args[0].dtype
        wide = np.longdouble if dt == np.float64 and long else np.float64
        with np.errstate(all="ignore"):
            out = fn(*(a.astype(wide) if a.dtype.kind == "f" else a for a in args))
        return np.asarray(out).astype(dt)
    return run


def _per_element(fn: Callable[[float], float]) -> Fn:
    """A Python ``math`` function over a float64 array."""
    vec = np.frompyfunc(fn, 1, 1)
    return lambda a: vec(np.asarray(a, np.float64)).astype(np.float64)


def _lgamma_or_inf(v: float) -> float:
    try:
        return math.lgamma(v)
    except (ValueError, OverflowError):  # a pole, or too large
        return math.inf


def _tgamma_ieee(v: float) -> float:
    try:
        return math.gamma(v)
    except OverflowError:
        return math.inf
    except ValueError:  # +-0: a signed infinity; negative integers and -inf: NaN
        return math.copysign(math.inf, v) if v == 0 else math.nan


_erf, _erfc = _per_element(math.erf), _per_element(math.erfc)
_lgamma, _tgamma = _per_element(_lgamma_or_inf), _per_element(_tgamma_ieee)
_PI_LONG = np.longdouble("3.14159265358979323846264338327950288")


def _erfcx(x: np.ndarray) -> np.ndarray:
    """``exp(x^2) erfc(x)``: directly below 5, by Laplace's continued fraction above."""
    x = np.asarray(x, np.float64)
    near = np.minimum(x, 5.0)
    direct = np.exp(near * near) * _erfc(near)
    far = np.maximum(x, 5.0)
    frac = far
    for k in range(60, 0, -1):
        frac = far + (k / 2.0) / frac
    return np.where(x < 5.0, direct, 1.0 / (math.sqrt(math.pi) * frac))


def _erfcinv(y: np.ndarray) -> np.ndarray:
    """The x with ``erfc(x) = y``: Newton's method for ``t = min(y, 2 - y)`` on ``log erfc``,
    then on ``erfc(x) - t`` written ``erfcx(x) - e^(x^2 + log t)`` (no overflow or
    underflow); odd about ``y = 1``."""
    y = np.asarray(y, np.float64)
    t = np.clip(np.minimum(y, 2.0 - y), 1e-320, 1.0)
    log_t = np.log(t)
    x = np.sqrt(-np.log(t * (2.0 - t)))
    for _ in range(8):  # on log erfc, which is nearly quadratic: converges from afar
        ex = _erfcx(x)
        x = x + (np.log(ex) - x * x - log_t) * (math.sqrt(math.pi) / 2.0 * ex)
    for _ in range(2):  # on erfc itself: exact to the last bits
        x = x + (_erfcx(x) - np.exp(x * x + log_t)) * (math.sqrt(math.pi) / 2.0)
    x = np.where(y > 1.0, -x, x)
    near_one = np.abs(1.0 - y) <= 0.5  # erfinv of the exact 1 - y: erf keeps its digits
    x = np.where(near_one, _erf_newton(np.clip(1.0 - y, -0.5, 0.5)), x)
    edge = np.where(y == 0.0, np.inf, np.where(y == 2.0, -np.inf, np.nan))
    return np.where((y > 0) & (y < 2), x, edge)


def _erf_newton(y: np.ndarray) -> np.ndarray:
    """The x with ``erf(x) = y`` for ``|y| <= 1/2``, by Newton's method on ``erf``."""
    x = y * math.sqrt(math.pi) / 2.0
    for _ in range(8):
        x = x - (_erf(x) - y) * (math.sqrt(math.pi) / 2.0) * np.exp(x * x)
    return x


def _erfinv(y: np.ndarray) -> np.ndarray:
    """``erf``'s inverse: Newton's method on ``erf`` for ``|y| <= 1/2``, else
    ``erfcinv(1 - |y|)`` (exact)."""
    y = np.asarray(y, np.float64)
    near = _erf_newton(np.clip(y, -0.5, 0.5))
    return np.where(np.abs(y) <= 0.5, near, np.copysign(_erfcinv(1.0 - np.abs(y)), y))


def _quarter_turns(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``t`` in [-1/4, 1/4] and ``q`` in 0..3 with ``x = 2m + q/2 + t`` (exact)."""
    r = np.fmod(x, 2.0)
    n = np.rint(2.0 * r)
    return r - n / 2.0, np.fmod(np.where(np.isfinite(n), n, 0.0), 4.0) % 4


def _sinpi(x: np.ndarray) -> np.ndarray:
    """``sin(pi x)``, from ``sin``/``cos`` of ``pi t`` with ``|t| <= 1/4`` (so the rounding
    of ``pi t`` costs nothing); at integers a zero with the sign of ``x`` (IEEE's
    ``sinPi``)."""
    t, q = _quarter_turns(x)
    pi = _PI_LONG if x.dtype == np.longdouble else np.pi
    v = np.where(q % 2 == 0, np.sin(pi * t), np.cos(pi * t)) * np.where(q >= 2, -1, 1)
    return np.where(v == 0, np.copysign(np.zeros_like(x), x), v)


def _cospi(x: np.ndarray) -> np.ndarray:
    """``cos(pi x)``, +0 at the half-integers."""
    t, q = _quarter_turns(x)
    pi = _PI_LONG if x.dtype == np.longdouble else np.pi
    v = np.where(q % 2 == 0, np.cos(pi * t), -np.sin(pi * t)) * np.where(q >= 2, -1, 1)
    return np.where(v == 0, 0.0, v)


def _logb(x: np.ndarray) -> np.ndarray:
    e = np.frexp(x)[1].astype(x.dtype) - 1
    return np.where(x == 0, -np.inf, np.where(np.isfinite(x), e, np.abs(x)))


def _remainder(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """IEEE ``x - n y`` with ``n`` the nearest integer to ``x / y`` (ties to even), exact."""
    ay = np.abs(y)
    r = np.fmod(x, ay)
    odd = np.abs(np.fmod(x, 2 * ay)) >= ay  # the truncated quotient is odd
    rest = ay - np.abs(r)  # exact (ay / 2 is not, for the smallest subnormal)
    over = (np.abs(r) > rest) | ((np.abs(r) == rest) & odd)
    out = np.where(over, r - np.copysign(ay, r), r)
    return np.where(out == 0, np.copysign(0.0, x).astype(x.dtype), out)


def _round(x: np.ndarray) -> np.ndarray:
    """To nearest, ties away from zero (C's ``round``)."""
    t = np.trunc(x)
    return t + np.copysign((np.abs(x - t) >= 0.5).astype(x.dtype), x)


def _norm(*vs: np.ndarray) -> np.ndarray:
    """The root of the sum of squares (in the wide type: no overflow); infinite where an
    operand is, even beside a NaN (as CUDA's ``norm3d``)."""
    inf = np.logical_or.reduce([np.isinf(v) for v in vs])
    return np.where(inf, np.inf, np.sqrt(sum(v * v for v in vs)))


REFERENCES: dict[str, tuple[Callable[..., np.ndarray], bool]] = {
    "exp10": (lambda x: np.power(x.dtype.type(10), x), True),
    "rcbrt": (lambda x: 1 / np.cbrt(x), True), "erfc": (_erfc, False),
    "erfcx": (_erfcx, False), "erfinv": (_erfinv, False), "erfcinv": (_erfcinv, False),
    "normcdf": (lambda x: 0.5 * _erfc(-x / _SQRT2), False),
    "normcdfinv": (lambda p: -_SQRT2 * _erfcinv(2.0 * p), False),
    "lgamma": (_lgamma, False), "tgamma": (_tgamma, False), "sinpi": (_sinpi, True),
    "cospi": (_cospi, True), "hypot": (np.hypot, True),
    "rhypot": (lambda x, y: 1 / np.hypot(x, y), True), "norm3d": (_norm, True),
    "norm4d": (_norm, True), "rnorm3d": (lambda *v: 1 / _norm(*v), True),
    "rnorm4d": (lambda *v: 1 / _norm(*v), True), "remainder": (_remainder, False),
    "asin": (np.arcsin, True), "acos": (np.arccos, True), "atan": (np.arctan, True),
    "atan2": (np.arctan2, True), "sinh": (np.sinh, True), "cosh": (np.cosh, True),
    "tanh": (np.tanh, True), "asinh": (np.arcsinh, True), "acosh": (np.arccosh, True),
    "atanh": (np.arctanh, True), "expm1": (np.expm1, True), "log1p": (np.log1p, True),
    "log10": (np.log10, True), "cbrt": (np.cbrt, True), "tan": (np.tan, True),
    "erf": (_erf, False), "exp": (np.exp, True), "exp2": (np.exp2, True),
    "log": (np.log, True), "log2": (np.log2, True), "pow": (np.power, True),
    "sin": (np.sin, True), "sqrt": (np.sqrt, True),
}
"""Function name -> (its values on arrays of a wide type, unrounded; whether f64 operands
may go to long double): the backend rounds them, ``benchmarks/math_accuracy.py`` measures
against them."""

EXACT: dict[str, Callable[..., np.ndarray]] = {
    "fmod": np.fmod, "nextafter": np.nextafter, "ldexp": np.ldexp,
    "round": _round, "roundeven": np.rint, "copysign": np.copysign, "logb": _logb,
}
"""Functions whose result the operand type holds exactly."""

_LIBM = {name: EXACT.get(name) or _in_wide(*REFERENCES[name])
         for name in tile.LIBM_FUNCTIONS}
_MATH = {f"math.{name}": EXACT.get(name) or _in_wide(*REFERENCES[name]) for name in (
    "asin", "acos", "atan", "atan2", "sinh", "cosh", "asinh", "acosh", "atanh", "expm1",
    "log1p", "log10", "cbrt", "tan", "round", "roundeven", "copysign")}


# -- integers ---------------------------------------------------------------------------

def _unsigned(a: np.ndarray) -> np.ndarray:
    return a.view(np.uint32 if a.dtype.itemsize == 4 else np.uint64)


def _ctpop(a: np.ndarray) -> np.ndarray:
    return np.bitwise_count(_unsigned(a)).astype(a.dtype)


def _ctlz(a: np.ndarray) -> np.ndarray:
    """Leading zero bits, by halving: the width for 0."""
    u, width = _unsigned(a), a.dtype.itemsize * 8
    n = np.zeros(a.shape, np.int64)
    shift = width // 2
    while shift:
        high = u >> u.dtype.type(width - shift) == 0  # the top `shift` bits are 0
        n += np.where(high, shift, 0)
        u = np.where(high, u << u.dtype.type(shift), u)
        shift //= 2
    return np.where(_unsigned(a) == 0, width, n).astype(a.dtype)


def _cttz(a: np.ndarray) -> np.ndarray:
    u = _unsigned(a)
    low = u & (~u + u.dtype.type(1))  # the lowest set bit
    return np.where(u == 0, a.dtype.itemsize * 8,
                    np.bitwise_count(low - u.dtype.type(1))).astype(a.dtype)


_REVERSED_BYTES = np.array([int(f"{b:08b}"[::-1], 2) for b in range(256)], np.uint8)


def _brev(a: np.ndarray) -> np.ndarray:
    b = np.ascontiguousarray(a).view(np.uint8).reshape(*a.shape, a.dtype.itemsize)
    return _REVERSED_BYTES[b[..., ::-1]].copy().view(a.dtype).reshape(a.shape)


_INT: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "math.ctpop": _ctpop, "math.ctlz": _ctlz, "math.cttz": _cttz, "tile.brev": _brev,
}


def _elementwise(fn: Callable[..., np.ndarray]) -> Callable[[Operation], Impl]:
    return lambda op: lambda _, *args: (fn(*args),)


def _libm(op: Operation) -> Impl:
    fn = _LIBM[op.properties["fn"].data]  # pyright: ignore[reportAttributeAccessIssue]
    return lambda _, *args: (fn(*args),)


BUILDERS.update({name: _elementwise(fn) for name, fn in (_MATH | _INT).items()})
BUILDERS["tile.libm"] = _libm
BUILDERS["tile.arith_fence"] = _elementwise(lambda x: x)
