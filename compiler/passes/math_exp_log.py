"""Part of expand-math: the exponential and logarithm families.

Two cores, written once for f32 and f64 (coefficients per width, fitted by
``scripts/fit_math.py``):

- ``e^x``: ``k = rint(x / ln2)``, ``r = x - k ln2`` by fused multiply-adds with ``ln2``
  in two parts, ``e^r - 1 = r + r^2 P(r)`` on ``|r| <= ln2/2``, then ``2^k`` applied in two
  steps so that subnormal results are rounded once;
- ``log x``: ``x = 2^e (1 + f)`` with ``1 + f`` in ``[sqrt(1/2), sqrt(2))`` from the bits,
  ``log(1 + f) = f - s (f - s^2 Q(s^2))``, ``s = f / (2 + f)``, written as
  ``f - (f^2/2 - s (f^2/2 + s^2 Q))`` so that the exact ``f`` comes last; ``e ln2`` is added
  in two parts.

On them: ``expm1`` (``2^k (e^r - 1) + (2^k - 1)``), ``exp10``, ``log1p`` (the rounding
error of ``1 + x`` carried as a correction), ``log10`` and ``log2`` (the product by the
constant kept in two parts), ``sinh`` (an odd polynomial below 1), ``cosh``, ``asinh``,
``acosh``, ``atanh`` (through ``log1p`` in the forms that do not cancel), ``tanh`` in f64
(``expm1(2x) / (expm1(2x) + 2)``) and f64 ``exp``, ``exp2``, ``log``, ``log2``. f32 ``tanh``
keeps its sequence around ``exp2``. Errors measured on the NumPy backend running these
sequences are in the README's table.
"""

from __future__ import annotations

from compiler.passes.math_values import (
    LN2,
    LN10,
    F,
    I,
    bits,
    copysign,
    dec,
    dq,
    exp2_native,
    expands,
    fabs,
    fence,
    fma,
    from_bits,
    hi_lo,
    isnan,
    maximum,
    minimum,
    poly,
    pow2,
    rint,
    scale,
    select,
    sqrt,
    to_float,
    to_int,
    two_prod,
    two_sum,
)

# e^r - 1 = r + r^2 P(r) on |r| <= ln2/2, highest power first (fit_math.py EXPM1_32/64)
EXPM1 = {
    False: (0.0013814630219712853, 0.008368710055947304, 0.04166838899254799,
            0.1666652113199234, 0.4999999403953552),
    True: (2.082669500877906e-09, 2.511202358872331e-08, 2.755758156259559e-07,
           2.7557234899029898e-06, 2.4801586927067086e-05, 0.00019841269896347718,
           0.0013888888889115334, 0.008333333333317048, 0.041666666666666095,
           0.16666666666666682, 0.5),
}
# log1p(f) = f - s (f - z Q(z)), z = s^2 <= 0.0295 (fit_math.py LOG_32/64)
LOG = {
    False: (0.29871734976768494, 0.3997754156589508, 0.6666677594184875),
    True: (0.14795942697710351, 0.15314051228385606, 0.18183564301163357,
           0.22222198573619742, 0.28571428742384075, 0.39999999999414687,
           0.6666666666666734),
}
# ln2 (and log10(2)) split so that k * hi is exact for every exponent k of the type
_LN2 = {False: hi_lo(LN2, 15), True: hi_lo(LN2, 42)}
_LOG2E = {w: hi_lo(dq(1, LN2), 53 if w else 24) for w in (False, True)}
_LOG10_2 = {False: hi_lo(dq(LN2, LN10), 15), True: hi_lo(dq(LN2, LN10), 42)}
_INV_LN10 = {w: hi_lo(dq(1, LN10), 53 if w else 24) for w in (False, True)}
_LN10 = {w: hi_lo(dec(LN10), 53 if w else 24) for w in (False, True)}
_LOG2_10 = float(dq(LN10, LN2))
# arguments of e^x beyond which the result is infinite or zero whatever the rounding
_EXP_RANGE = {False: (-104.0, 89.0), True: (-746.0, 710.0)}


# -- the exponential core ---------------------------------------------------------------

def expm1_small(r: F) -> F:
    """``e^r - 1`` for ``|r| <= ln2/2``."""
    return fma(r * r, poly(EXPM1[r.e.wide], r), r)


def reduce_exp(x: F) -> tuple[I, F]:
    """``k`` and ``r`` with ``x = k ln2 + r``, ``|r| <= ln2/2`` (``x`` in range)."""
    w = x.e.wide
    kf = rint(x * _LOG2E[w][0])
    r = fence(fma(-kf, _LN2[w][0], x))  # not merged with the next: ln2 would round
    return to_int(kf), fma(-kf, _LN2[w][1], r)


def exp_kr(k: I, r: F) -> F:
    """``2^k e^r``, rounded once however small."""
    return scale(expm1_small(r) + 1.0, k)


def clamp_exp(x: F) -> F:
    lo, hi = _EXP_RANGE[x.e.wide]
    return minimum(maximum(x, lo), hi)


@expands("exp", f32=False)
def exp(x: F) -> F:
    return exp_kr(*reduce_exp(clamp_exp(x)))


@expands("exp2", f32=False)
def exp2(x: F) -> F:
    w = x.e.wide
    lo, hi = _EXP_RANGE[w]
    xc = minimum(maximum(x, lo * 1.5), hi * 1.5)
    kf = rint(xc)
    t = xc - kf
    return exp_kr(to_int(kf), fma(t, _LN2[w][0], t * _LN2[w][1]))


@expands("exp10")
def exp10(x: F) -> F:
    w = x.e.wide
    lo, hi = _EXP_RANGE[w]
    xc = minimum(maximum(x, lo * 0.45), hi * 0.45)
    kf = rint(xc * _LOG2_10)
    t = fence(fma(-kf, _LOG10_2[w][0], xc))
    t = fma(-kf, _LOG10_2[w][1], t)
    return exp_kr(to_int(kf), fma(t, _LN10[w][0], t * _LN10[w][1]))


@expands("expm1")
def expm1(x: F) -> F:
    e = x.e
    k, r = reduce_exp(minimum(maximum(x, -(e.mant + 3) * 0.7), _EXP_RANGE[e.wide][1]))
    u = expm1_small(r)
    mid = scale(u, k) + (pow2(k) - 1.0)  # exact power, one rounding
    big = scale(u + 1.0, k)  # the -1 is below the last bit
    res = select(to_float(k) > e.mant + 1, big, mid)
    return select(x.eq(0.0), x, res)


def _half_exp(a: F) -> F:
    """``e^a / 2`` for ``a >= 0``, infinite where it overflows."""
    k, r = reduce_exp(minimum(a, _EXP_RANGE[a.e.wide][1] + 1.0))
    return exp_kr(k - 1, r)


@expands("cosh")
def cosh(x: F) -> F:
    h = _half_exp(fabs(x))
    return h + 0.25 / h


# sinh(x) = x + x^3 P(x^2) on |x| < 1 (fit_math.py SINH_32/64)
SINH = {
    False: (2.8169515644549392e-06, 0.0001983615948120132, 0.008333349600434303,
            0.1666666716337204),
    True: (2.848233253993622e-15, 7.646482886279453e-13, 1.6059050601409157e-10,
           2.5052108346507818e-08, 2.7557319224116293e-06, 0.000198412698412696,
           0.008333333333333333, 0.16666666666666666),
}


@expands("sinh")
def sinh(x: F) -> F:
    a = fabs(x)
    z = x * x
    small = fma(x * z, poly(SINH[x.e.wide], z), x)
    h = _half_exp(a)
    return select(a < 1.0, small, copysign(h - 0.25 / h, x))


@expands("tanh", f32=False)
def tanh64(x: F) -> F:
    a = fabs(x)
    u = expm1(minimum(a + a, 50.0))
    return copysign(u / (u + 2.0), x)


# -- the logarithm core -----------------------------------------------------------------

def log_parts(x: F) -> tuple[F, F]:
    """``e`` and ``f`` with ``x = 2^e (1 + f)``, ``1 + f`` in ``[sqrt(1/2), sqrt(2))``, for
    finite ``x > 0`` (subnormals too)."""
    em = x.e
    tiny = x < float(2.0 ** (-1022 if em.wide else -126))
    xs = select(tiny, x * float(2 ** (em.mant + 1)), x)
    sqrt_half = 0x3FE6A09E667F3BCD if em.wide else 0x3F3504F3
    ix = bits(xs)
    k = (ix - sqrt_half) >> em.mant
    m = from_bits(ix - (k << em.mant))
    e = to_float(k) - select(tiny, float(em.mant + 1), 0.0)
    return e, m - 1.0


def log1p_terms(f: F) -> tuple[F, F]:
    """``f^2/2`` and ``s (f^2/2 + s^2 Q)``: ``log(1 + f) = f - (first - second)``."""
    s = f / (f + 2.0)
    z = s * s
    hfsq = 0.5 * f * f
    return hfsq, s * fma(z, poly(LOG[f.e.wide], z), hfsq)


def log_of(e: F, f: F, c: F | float = 0.0) -> F:
    """``e ln2 + log(1 + f) + c`` (``c`` a small correction)."""
    w = e.e.wide
    hfsq, corr = log1p_terms(f)
    return e * _LN2[w][0] + (f - (hfsq - (corr + (e * _LN2[w][1] + c))))


def log_scaled(e: F, f: F, per_e: tuple[float, float], per_log: tuple[float, float]) -> F:
    """``e (per_e) + log(1 + f) (per_log)``, each constant in two parts (``per_e``'s high
    part exact times ``e``)."""
    hfsq, corr = log1p_terms(f)
    g = corr - hfsq  # log(1 + f) = f + g
    p, err = two_prod(f, e.e.f(per_log[0]))
    tail = err + fma(f, per_log[1], g * (per_log[0] + per_log[1])) + e * per_e[1]
    return e * per_e[0] + (p + tail)


def log_special(x: F, r: F) -> F:
    """``r`` where ``x`` is finite and positive; -inf at 0, NaN below, ``x`` (inf, NaN)."""
    inf = float("inf")
    edge = select(x.eq(0.0), -inf, select(x < 0.0, float("nan"), x))
    return select((x > 0.0) & (x < inf), r, edge)


@expands("log", f32=False)
def log(x: F) -> F:
    return log_special(x, log_of(*log_parts(x)))


@expands("log2", f32=False)
def log2(x: F) -> F:
    return log_special(x, log_scaled(*log_parts(x), (1.0, 0.0), _LOG2E[x.e.wide]))


@expands("log10")
def log10(x: F) -> F:
    w = x.e.wide
    return log_special(x, log_scaled(*log_parts(x), _LOG10_2[w], _INV_LN10[w]))


def _log1p_pos(t: F) -> F:
    """``log(1 + t)`` for finite ``t > -1`` (no special cases): the rounding error of
    ``1 + t`` is added back as ``err / (1 + t)``."""
    u, err = two_sum(t.e.f(1.0), t)
    return log_of(*log_parts(u), err / u)


@expands("log1p")
def log1p(x: F) -> F:
    u = x + 1.0
    return select(x.eq(0.0), x, log_special(u, _log1p_pos(x)))


@expands("asinh")
def asinh(x: F) -> F:
    a = fabs(x)
    big = float(2.0 ** (28 if x.e.wide else 12))
    e, f = log_parts(a)
    large = log_of(e + 1.0, f)  # log(2a)
    mid = _log1p_pos(a + a * a / (1.0 + sqrt(fma(a, a, 1.0))))
    r = select(a > big, large, mid)
    return copysign(select(isnan(x) | (a.eq(float("inf"))), a, r), x)


@expands("acosh")
def acosh(x: F) -> F:
    big = float(2.0 ** (28 if x.e.wide else 12))
    t = x - 1.0
    mid = _log1p_pos(t + sqrt(t * (t + 2.0)))
    e, f = log_parts(x)
    r = select(x > big, log_of(e + 1.0, f), mid)
    return select(x >= 1.0, select(x.eq(float("inf")), x, r), float("nan"))


@expands("atanh")
def atanh(x: F) -> F:
    a = fabs(x)
    r = 0.5 * _log1p_pos((a + a) / (1.0 - a))
    edge = select(a.eq(1.0), float("inf"), float("nan"))
    return copysign(select(a < 1.0, r, select(isnan(x), x, edge)), x)



# tanh in f32 (f16, bf16): for |x| < 1, x + x z P(z), z = x^2; above, 1 - 2 / (e^(2|x|) + 1)
# with the target's exp2 (fitted in float64 for least relative error with Lawson's
# reweighting, rounded to f32)
TANH_SMALL = (-4.862481728196144e-05, 0.00033836005604825914, -0.0012433301890268922,
              0.0034794749226421118, -0.008826825767755508, 0.02186274714767933,
              -0.05396762490272522, 0.13333331048488617, -0.3333333432674408)
TWO_LOG2E = 2.8853900817779268


@expands("tanh", f64=False)
def tanh32(x: F) -> F:
    a = fabs(x)
    z = x * x
    small = select(x.eq(0.0), x, fma(x, z * poly(TANH_SMALL, z), x))  # the fma: +0 for -0
    tail = 2.0 / (exp2_native(a * TWO_LOG2E) + 1.0)
    return select(a < 1.0, small, copysign(1.0 - tail, x))
